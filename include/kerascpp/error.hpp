// kerascpp::Error: the one exception type the library throws for bad input.
// Messages name the layer, shape or file involved and say what to do about it.
#pragma once
#include <stdexcept>
#include <string>

namespace kerascpp {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace kerascpp
