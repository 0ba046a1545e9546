#include <fmt/format.h>

#include "kerascpp/backend.hpp"

namespace kerascpp {

Activation activation_from_name(const std::string& name, const std::string& where) {
  if (name.empty() || name == "linear") return Activation::linear;
  if (name == "relu") return Activation::relu;
  if (name == "sigmoid") return Activation::sigmoid;
  if (name == "tanh") return Activation::tanh;
  if (name == "softmax") return Activation::softmax;
  throw ValueError(
      fmt::format("{}: unknown activation \"{}\"; use one of \"relu\", \"sigmoid\", \"tanh\", "
                  "\"softmax\", \"linear\" (or \"\" for linear)",
                  where, name));
}

const char* activation_name(Activation act) {
  switch (act) {
    case Activation::linear:
      return "linear";
    case Activation::relu:
      return "relu";
    case Activation::sigmoid:
      return "sigmoid";
    case Activation::tanh:
      return "tanh";
    case Activation::softmax:
      return "softmax";
  }
  return "linear";
}

}  // namespace kerascpp
