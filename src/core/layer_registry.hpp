// The process-wide registry of layer classes (kerascpp/core/layer_config.hpp): rebuilding one layer
// from its Keras 3 config (the "config" of a layer entry in a model's config.json / to_json), for
// model_from_json and load_model.
#pragma once
#include <string>

#include "kerascpp/core/layer_config.hpp"

namespace kerascpp::detail {

// The layer of Keras class `class_name` with `config` (its name, sizes, activation, regularizers,
// constraints, trainable flag and dtype policy; initializers are not read: the weights are loaded
// after). A class nobody registered, or a setting kerascpp does not have (dilation,
// channels_first, ...), is a ValueError naming the layer, the class or setting, and what kerascpp
// supports.
LayerRef layer_from_config(const std::string& class_name, const Json& config);

// {"module": "keras.layers", "class_name": ..., "config": {...}, "registered_name": null}: how
// Keras refers to a layer, in a model's config and inside a wrapper's (Bidirectional's "layer").
Json layer_entry(const Layer& layer);

// The layer of such an entry (a wrapper's config key `key`, e.g. Bidirectional's "layer"); a
// ValueError naming the wrapper's config and the key when it is not one.
LayerRef layer_from_entry(const LayerConfig& wrapper, const char* key);

// Whether class_name is a class of the library (KERASCPP_REGISTER_LAYER), not one a user
// registered: the library's are written with module "keras.layers".
bool rebuilds_layer_class(const std::string& class_name);

// Whether class_name is an input layer ("InputLayer"); those are made with Input() instead.
bool is_input_layer_class(const std::string& class_name);

}  // namespace kerascpp::detail
