// Backend::set_compute_dtype: the dtype the matmul and convolution ops compute in.
#include <fmt/format.h>

#include "check.hpp"
#include "kerascpp/backend/backend.hpp"

namespace kerascpp {

void Backend::set_compute_dtype(DType dtype) {
  KERASCPP_CHECK_VALUE(is_float(dtype),
                       "Backend::set_compute_dtype: {} is not a compute dtype; use float32, bfloat16 or "
                       "float16",
                       dtype_name(dtype));
  compute_dtype_ = dtype;
}

}  // namespace kerascpp
