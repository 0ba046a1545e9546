#include "kerascpp/layers/window_args.hpp"

#include "check.hpp"

namespace kerascpp {

const char* padding_name(Padding padding) { return padding == Padding::same ? "same" : "valid"; }

Padding padding_from_name(const std::string& name, const std::string& where) {
  if (name == "valid") return Padding::valid;
  if (name == "same") return Padding::same;
  throw ValueError(fmt::format("{}: unknown padding '{}'; use \"valid\" or \"same\"", where, name));
}

}  // namespace kerascpp
