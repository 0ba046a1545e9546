// Backend::set_compute_dtype: the dtype the matmul and convolution ops compute in.
#include <fmt/format.h>

#include "kerascpp/backend.hpp"

namespace kerascpp {

void Backend::set_compute_dtype(DType dtype) {
  if (!is_float(dtype))
    throw ValueError(
        fmt::format("Backend::set_compute_dtype: {} is not a compute dtype; use float32, bfloat16 or "
                    "float16",
                    dtype_name(dtype)));
  compute_dtype_ = dtype;
}

}  // namespace kerascpp
