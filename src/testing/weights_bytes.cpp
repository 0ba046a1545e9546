// save_weights_to_bytes / load_weights_from_bytes: the in-memory `.weights.h5` of io/weights_image.
#include "io/weights_image.hpp"
#include "kerascpp/testing.hpp"

namespace kerascpp::testing {

std::vector<std::uint8_t> save_weights_to_bytes(const Model& model) {
  const std::vector<char> image = io::save_model_weights_image(model);
  return std::vector<std::uint8_t>(image.begin(), image.end());
}

void load_weights_from_bytes(Model& model, const std::vector<std::uint8_t>& bytes) {
  io::load_model_weights_image(model, std::vector<char>(bytes.begin(), bytes.end()));
}

}  // namespace kerascpp::testing
