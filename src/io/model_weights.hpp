// Model <-> Keras `.weights.h5`: Keras' per-model layer naming, optimizer variables, and the
// extra training state kerascpp keeps for exact resume (under a group Keras ignores).
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "io/h5_weights.hpp"
#include "kerascpp/training/model.hpp"
#include "training/training_position.hpp"

namespace kerascpp::io {

// Resume point stored beside the weights in a training checkpoint.
struct TrainingCheckpoint {
  detail::ResumePoint position;
};

// Refuses (ValueError naming the first non-finite variable and the fix, nothing written) when a
// weight or optimizer slot holds NaN or Inf: a diverged run must never replace a good file.
void save_model_weights(const Model& model, const std::string& path,
                        const std::optional<TrainingCheckpoint>& checkpoint = std::nullopt);
// The first weight or optimizer slot holding NaN or Inf, described for a message ("variable
// 'dense/kernel' (layers/dense/vars/0) holds 2 NaN and 0 Inf of 80 values"); nullopt when every
// value is finite. Callbacks use it to skip a save with a warning instead of failing the run.
std::optional<std::string> find_non_finite(const Model& model);
// The advice that goes with it.
inline constexpr const char* kNonFiniteAdvice =
    "training diverged: lower the learning rate, check the inputs for NaN/Inf, or use "
    "callbacks::TerminateOnNaN to stop at the first bad batch";
// Loads weights (and optimizer state when the file and model both have it) into every replica
// copy; all-or-nothing. Returns the training checkpoint when the file holds one.
std::optional<TrainingCheckpoint> load_model_weights(Model& model, const std::string& path);

// The optimizer's iteration count `file` stores (the training step it was saved at), found with
// `model`'s optimizer layout (a LossScaleOptimizer's own variables come first); nullopt when the
// model is not compiled or the file holds no integer count there.
std::optional<std::int64_t> stored_iterations(Model& model, const WeightsFile& file);

// The two halves without the file, for the in-memory weights of io/weights_image.hpp.
// What save_model_weights writes (refusing non-finite values the same way); `path` names the
// destination in messages.
WeightsFile model_weights_file(const Model& model, const std::string& path,
                               const std::optional<TrainingCheckpoint>& checkpoint = std::nullopt);
// load_model_weights with the reading step given: `read(check)` returns the file's contents after
// calling `check` on its layout (read_weights_file's contract); `path` names the source in messages.
using WeightsReader = std::function<WeightsFile(const LayoutCheck&)>;
std::optional<TrainingCheckpoint> load_model_weights(Model& model, const std::string& path, const WeightsReader& read);

}  // namespace kerascpp::io
