#include <fmt/format.h>

#include "kerascpp/backend.hpp"

namespace kerascpp {

ActivationKind activation_from_name(const std::string& name, const std::string& where) {
  if (name.empty() || name == "linear") return ActivationKind::linear;
  if (name == "relu") return ActivationKind::relu;
  if (name == "sigmoid") return ActivationKind::sigmoid;
  if (name == "tanh") return ActivationKind::tanh;
  if (name == "softmax") return ActivationKind::softmax;
  throw ValueError(
      fmt::format("{}: unknown activation \"{}\"; use one of \"relu\", \"sigmoid\", \"tanh\", "
                  "\"softmax\", \"linear\" (or \"\" for linear)",
                  where, name));
}

const char* activation_name(ActivationKind act) {
  switch (act) {
    case ActivationKind::linear:
      return "linear";
    case ActivationKind::relu:
      return "relu";
    case ActivationKind::sigmoid:
      return "sigmoid";
    case ActivationKind::tanh:
      return "tanh";
    case ActivationKind::softmax:
      return "softmax";
  }
  return "linear";
}

}  // namespace kerascpp
