// Keras' compile_config (the optimizer, loss and metrics of a compiled model) in a `.keras`
// archive's config.json: written by Model::save, read back by load_model.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kerascpp/training/model.hpp"
#include "training/compiled_state.hpp"

namespace kerascpp::detail {

// The compile_config of a compiled model, or nullopt where Keras could not rebuild it (an
// optimizer or loss of the user's own, a learning rate schedule).
std::optional<nlohmann::ordered_json> compile_config(const CompiledState& compiled);

// Compiles `model` as `config` says. What kerascpp cannot rebuild (an optimizer, loss or setting
// it does not have) leaves the model uncompiled with a warning naming `path` and the reason, as
// Keras does.
void compile_from_config(Model& model, const nlohmann::ordered_json& config, const std::string& path);

// The kerascpp metric for one of Keras' metric objects ({"module": "keras.metrics", "class_name",
// "config"}); ValueError for a class or an argument kerascpp does not have.
std::shared_ptr<const metrics::Metric> metric_from_object(const nlohmann::ordered_json& object);

}  // namespace kerascpp::detail
