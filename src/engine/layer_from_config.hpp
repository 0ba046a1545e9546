// Rebuilding one layer from its Keras 3 config (the "config" of a layer entry in a model's
// config.json / to_json), for model_from_json and load_model.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "kerascpp/layer.hpp"

namespace kerascpp::detail {

// The layer of Keras class `class_name` with `config` (its name, sizes, activation, regularizers,
// constraints and trainable flag; initializers are not read: the weights are loaded after). A
// class kerascpp cannot rebuild, or a setting it does not have (dilation, channels_first, ...), is
// a ValueError naming the layer, the class or setting, and what kerascpp supports.
LayerRef layer_from_config(const std::string& class_name, const nlohmann::json& config);

// Whether kerascpp rebuilds class_name itself (a built-in layer class, not a registered one).
bool rebuilds_layer_class(const std::string& class_name);

// Whether class_name is an input layer ("InputLayer"); those are made with Input() instead.
bool is_input_layer_class(const std::string& class_name);

}  // namespace kerascpp::detail
