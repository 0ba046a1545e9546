// Model::save and load_model: whole models in Keras 3's `.keras` archive (io/keras_archive.hpp),
// the config from Model::to_json / model_from_json and the weights in save_weights' HDF5 layout.
#include <fmt/format.h>

#include <ctime>

#include "check.hpp"
#include "io/keras_archive.hpp"
#include "io/weights_image.hpp"
#include "kerascpp/error.hpp"
#include "kerascpp/io/saving.hpp"
#include "training/compile_config.hpp"
#include "training/model_impl.hpp"

namespace kerascpp {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Keras writes its own version; kerascpp writes the Keras 3 archive format's and its own.
std::string metadata_json() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d@%H:%M:%S", &local);
  return fmt::format(R"({{"keras_version": "3.0.0", "date_saved": "{}", "kerascpp_version": "0.1.0"}})", date);
}

}  // namespace

void Model::save(const std::string& path) const {
  KERASCPP_CHECK_VALUE(ends_with(path, ".keras"),
                       "Model.save: '{}' must end in \".keras\" (Keras 3's whole-model archive); to write "
                       "the weights alone, use save_weights(\"....weights.h5\")",
                       path);
  // A compiled model's archive also says how it was compiled (and its weights file holds the
  // optimizer state), so that training can go on after load_model, here or in Keras.
  nlohmann::ordered_json config = nlohmann::ordered_json::parse(to_json());
  if (impl_->is_compiled())
    if (auto compile = detail::compile_config(impl_->require_compiled("save"))) config["compile_config"] = *compile;
  io::KerasArchive archive{config.dump(), metadata_json(), io::save_model_weights_image(*this)};
  io::write_keras_archive(path, archive);
}

Model load_model(const std::string& path) {
  const io::KerasArchive archive = io::read_keras_archive(path);
  Model model = [&] {
    try {
      return model_from_json(archive.config_json);
    } catch (const ValueError& e) { throw ValueError(fmt::format("load_model('{}'): {}", path, e.what())); }
  }();
  const auto config = nlohmann::ordered_json::parse(archive.config_json, nullptr, false);
  // Keras writes {} (or null) for a model that was not compiled.
  if (config.is_object() && config.contains("compile_config") && config["compile_config"].is_object() &&
      !config["compile_config"].empty())
    detail::compile_from_config(model, config["compile_config"], path);
  try {
    io::load_model_weights_image(model, archive.weights_h5);
  } catch (const Error& e) {
    throw IOError(
        fmt::format("load_model('{}'): model.weights.h5 does not fit the model in config.json: {}", path, e.what()));
  }
  return model;
}

}  // namespace kerascpp
