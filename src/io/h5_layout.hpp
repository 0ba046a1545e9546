// Names in the `.weights.h5` layout that the reader and the writer must agree on.
#pragma once

namespace kerascpp::io::h5 {

inline constexpr const char* kExtraGroup = "kerascpp";  // kerascpp's own training state; Keras ignores it

}  // namespace kerascpp::io::h5
