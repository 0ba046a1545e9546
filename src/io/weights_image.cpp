#include "io/weights_image.hpp"

#include <fmt/format.h>

#include <mutex>

#include "io/h5_handles.hpp"
#include "io/h5_probe.hpp"
#include "io/h5_read.hpp"
#include "io/h5_write.hpp"
#include "io/model_weights.hpp"

namespace kerascpp::io {

std::vector<char> save_model_weights_image(const Model& model) {
  const WeightsFile file = model_weights_file(model, "<in-memory weights>");
  std::lock_guard lock(h5::hdf5_mutex());
  h5::QuietHdf5 quiet;
  return h5::build_image(file);
}

WeightsReader weights_image_reader(const std::vector<char>& image, const std::string& name) {
  return [&image, name](const LayoutCheck& check) {
    const h5::Source source{name, &image};
    std::lock_guard lock(h5::hdf5_mutex());
    h5::QuietHdf5 quiet;
    h5::probe_in_child_process(source);  // libhdf5 crashes on some corrupt files: see h5_probe.hpp
    return h5::read_hdf5(source, check);
  };
}

void load_model_weights_image(Model& model, const std::vector<char>& image) {
  const std::string name = fmt::format("<in-memory weights, {} bytes>", image.size());
  load_model_weights(model, name, weights_image_reader(image, name));
}

}  // namespace kerascpp::io
