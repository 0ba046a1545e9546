#include "kerascpp/core/variable.hpp"
#include "check.hpp"

#include <fmt/format.h>

namespace kerascpp {

Variable::Variable(std::string name, Tensor initial, bool trainable)
    : name_(std::move(name)), path_(name_), trainable_(trainable) {
  copies_.push_back(std::move(initial));
  grads_.push_back(Tensor::zeros(copies_.front().shape()));
  fresh_.push_back(1);
  grad_rows_.resize(1);
}

void Variable::mirror(const std::vector<Device>& devices) {
  KERASCPP_CHECK_VALUE(!devices.empty(), "Variable::mirror: need at least one replica");
  Tensor source = copies_.front();
  copies_.clear();
  grads_.clear();
  for (const Device& d : devices) {
    Tensor copy = source.to(d);  // a new copy unless d is where source lives
    if (copy.same_storage(source) && !copies_.empty()) copy = source.clone();  // only copy 0 keeps the original
    copies_.push_back(copy);
    grads_.push_back(Tensor::zeros(source.shape(), source.dtype(), d));
  }
  fresh_.assign(devices.size(), 1);
  grad_rows_.assign(devices.size(), {});
}

void Variable::assign(const Tensor& v) {
  KERASCPP_CHECK_SHAPE(v.shape() == shape(),
                       "variable '{}': cannot assign a value of shape {} to a variable of shape {}", path_,
                       shape_str(v.shape()), shape_str(shape()));
  for (auto& c : copies_) {
    if (v.dtype() == c.dtype()) c.copy_from(v);
    else
      throw ShapeError(fmt::format("variable '{}': value has dtype {}, expected {}", path_, dtype_name(v.dtype()),
                                   dtype_name(c.dtype())));
  }
}

}  // namespace kerascpp
