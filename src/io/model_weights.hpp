// Model <-> Keras `.weights.h5`: Keras' per-model layer naming, optimizer variables, and the
// extra training state kerascpp keeps for exact resume (under a group Keras ignores).
#pragma once
#include <optional>
#include <string>

#include "engine/model_impl.hpp"

namespace kerascpp::io {

// Resume point stored beside the weights in a training checkpoint.
struct TrainingCheckpoint {
  ModelImpl::Position position;
};

void save_model_weights(const Model& model, const std::string& path,
                        const std::optional<TrainingCheckpoint>& checkpoint = std::nullopt);
// Loads weights (and optimizer state when the file and model both have it) into every replica
// copy; all-or-nothing. Returns the training checkpoint when the file holds one.
std::optional<TrainingCheckpoint> load_model_weights(Model& model, const std::string& path);

}  // namespace kerascpp::io
