#include "backend/cuda/checks.hpp"

#include <fmt/format.h>

#include "backend/op_shapes.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

void require_on(const Tensor& t, Device device, const char* op, const char* arg) {
  KERASCPP_CHECK_STATE(t.defined(), "{}: `{}` is undefined", op, arg);
  KERASCPP_CHECK_DEVICE(t.device() == device,
                        "{}: `{}` is on {} but this backend runs on {}; move it with tensor.to(Device::parse(\"{}\"))",
                        op, arg, t.device().str(), device.str(), device.str());
}

void require_float_on(const Tensor& t, Device device, const char* op, const char* arg) {
  require_on(t, device, op, arg);
  KERASCPP_CHECK_SHAPE(t.dtype() == DType::float32, "{}: `{}` is {} but must be float32", op, arg,
                       dtype_name(t.dtype()));
}

void prepare_output_on(Tensor& t, const Shape& shape, Device device, const char* op, const char* arg) {
  if (!t.defined()) {
    t = Tensor(shape, DType::float32, device);
    return;
  }
  require_float_on(t, device, op, arg);
  op_shapes::require_output_shape(t, shape, op, arg);
}

void prepare_output_on(Tensor& t, std::initializer_list<std::int64_t> shape, Device device, const char* op,
                       const char* arg) {
  prepare_output_on(t, Shape(shape), device, op, arg);
}

}  // namespace kerascpp::cuda
