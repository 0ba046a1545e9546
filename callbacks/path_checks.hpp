// Checks of the paths callbacks write to, made when the callback is constructed so that a typo
// fails at once instead of after an epoch of training.
#pragma once
#include <string>

namespace kerascpp::callbacks {

// `path` (the `argument` of `callback`) must be non-empty (ValueError; `example` shows a good
// one) and must not name an existing directory (IOError).
void check_output_file(const std::string& path, const char* callback, const char* argument, const char* example);

// `dir` must be non-empty (ValueError) and must not name an existing non-directory (IOError).
void check_output_dir(const std::string& dir, const char* callback, const char* argument, const char* example);

}  // namespace kerascpp::callbacks
