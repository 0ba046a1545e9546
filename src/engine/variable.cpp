#include "kerascpp/variable.hpp"

#include <fmt/format.h>

namespace kerascpp {

Variable::Variable(std::string name, Tensor initial, bool trainable)
    : name_(std::move(name)), path_(name_), trainable_(trainable) {
  copies_.push_back(std::move(initial));
  grads_.push_back(Tensor::zeros(copies_.front().shape()));
  fresh_.push_back(1);
}

void Variable::mirror(int replicas) {
  if (replicas < 1) throw Error("Variable::mirror: need at least one replica");
  copies_.resize(1);
  grads_.resize(1);
  for (int r = 1; r < replicas; ++r) {
    copies_.push_back(copies_.front().clone());
    grads_.push_back(Tensor::zeros(copies_.front().shape()));
  }
  fresh_.assign(static_cast<std::size_t>(replicas), 1);
}

void Variable::assign(const Tensor& v) {
  if (v.shape() != shape())
    throw Error(fmt::format("variable '{}': cannot assign a value of shape {} to a variable of shape {}", path_,
                            shape_str(v.shape()), shape_str(shape())));
  for (auto& c : copies_) {
    if (v.dtype() == c.dtype()) c.copy_from(v);
    else throw Error(fmt::format("variable '{}': value has dtype {}, expected {}", path_, dtype_name(v.dtype()),
                                 dtype_name(c.dtype())));
  }
}

}  // namespace kerascpp
