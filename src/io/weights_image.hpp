// A model's `.weights.h5` as bytes in memory instead of a file: the same HDF5 image save_weights
// writes to disk, read back through the same checks (layout against the model before any data,
// the crash probe, all-or-nothing). kerascpp::testing's save_weights_to_bytes uses it.
#pragma once
#include <vector>

#include "io/model_weights.hpp"
#include "kerascpp/training/model.hpp"

namespace kerascpp::io {

// Exactly the bytes Model::save_weights would write to a file.
std::vector<char> save_model_weights_image(const Model& model);
// Loads bytes written by save_model_weights_image, or a `.weights.h5` file's contents, into every
// replica copy; the model is unchanged when anything does not fit.
void load_model_weights_image(Model& model, const std::vector<char>& image);
// The reader load_model_weights takes, over an image in memory (named `name` in messages); the
// image must outlive it. SidecarEvaluator wraps it to see the file's optimizer state.
WeightsReader weights_image_reader(const std::vector<char>& image, const std::string& name);

}  // namespace kerascpp::io
