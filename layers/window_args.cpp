#include "kerascpp/layers/window_args.hpp"

#include "check.hpp"

namespace kerascpp {

const char* padding_name(Padding padding) {
  switch (padding) {
    case Padding::same:
      return "same";
    case Padding::causal:
      return "causal";
    case Padding::valid:
      break;
  }
  return "valid";
}

Padding padding_from_name(const std::string& name, const std::string& where) {
  if (name == "valid") return Padding::valid;
  if (name == "same") return Padding::same;
  if (name == "causal") return Padding::causal;
  throw ValueError(
      fmt::format("{}: unknown padding '{}'; use \"valid\" or \"same\" (\"causal\": Conv1D only)", where, name));
}

}  // namespace kerascpp
