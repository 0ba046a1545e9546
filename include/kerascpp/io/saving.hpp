// Whole models: Keras 3's `.keras` archives and model configs.
//   model.save("m.keras");                       // config.json + metadata.json + model.weights.h5
//   kerascpp::Model m = kerascpp::load_model("m.keras");
//   kerascpp::Model n = kerascpp::model_from_json(model.to_json());   // architecture only
//   kerascpp::register_layer_class("MyLayer", factory);               // a custom layer, then load
#pragma once
#include <string>

#include "kerascpp/core/layer_config.hpp"
#include "kerascpp/training/model.hpp"

namespace kerascpp {

/// Rebuilds the model a `.keras` archive holds (written by Model::save or by Python Keras 3's
/// model.save) with its weights. The model is not compiled (compile it to train). A layer kerascpp
/// cannot rebuild yet is a ValueError naming it; a missing, truncated or corrupted archive an IOError.
Model load_model(const std::string& path);

/// The model a Keras 3 model config describes (Model::to_json, keras' model.to_json()), with
/// freshly initialized weights.
Model model_from_json(const std::string& json);

// A layer class of your own in saved models (Keras' custom_objects): register_layer_class in
// kerascpp/core/layer_config.hpp.

}  // namespace kerascpp
