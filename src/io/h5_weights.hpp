// Keras 3 `.weights.h5` files at the file level: groups of variables by path, the optimizer's
// variables and kerascpp's own training state. Which layer gets which name is the model's job.
// Layout facts (verified against Keras 3.15): docs/keras_weights_layout.md.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::io {

struct WeightsGroup {
  // Path under `layers/`, e.g. "dense_1" (Keras' snake_case class name, deduplicated). A nested
  // object uses '/', e.g. "sequential/layers/dense" for layers/sequential/layers/dense/vars.
  std::string name;
  std::vector<Tensor> vars;  // vars/0, vars/1, ... (Keras: trainable first, then non-trainable)
  // The layer's own name (Keras' `layer.name`), which Keras stores as the `name` attribute of the
  // vars group. It may differ from `name` ("dense_2" stored at layers/dense). Empty: the last
  // component of `name`. Written only; read_weights_file leaves it empty (see below).
  std::string layer_name = {};
};

struct WeightsFile {
  std::vector<WeightsGroup> layers;  // written as layers/<name>/vars/<i>, in this order
  // optimizer/vars/<i>; an empty vector and has_optimizer=false: no optimizer group.
  std::vector<Tensor> optimizer_vars;
  bool has_optimizer = false;
  // optimizer/inner_optimizer/vars/<i> when not empty: Keras' LossScaleOptimizer stores the
  // wrapped optimizer's variables (also in optimizer_vars) there too. Written only: the reader
  // takes optimizer_vars.
  std::vector<Tensor> inner_optimizer_vars;
  std::string inner_optimizer_name = "adam";
  // Extra named tensors for kerascpp's own training state (epoch, step, RNG, data order), stored as
  // datasets of the root group `kerascpp`, which Keras' loader never looks at.
  std::vector<std::pair<std::string, Tensor>> extra;
  // `name` attributes Keras writes on the root `vars` group (model.name: "sequential",
  // "functional", ...) and on `optimizer/vars` (optimizer.name). Keras' loader does not read them;
  // written only, read_weights_file leaves them empty (see below).
  std::string model_name = "functional";
  std::string optimizer_name = "adam";
};

// Written through write_atomically: on failure the previous file at `path` is untouched.
// Tensors must be on the host; float32, int32, int64 and uint8 are stored as little-endian
// IEEE f32 / i32 / i64 / u8, rank 0 as an HDF5 scalar dataset.
void write_weights_file(const std::string& path, const WeightsFile& file);

// Reads files written by Keras 3 or by write_weights_file. Layers and extra entries come back in
// HDF5's name order ("dense", "dense_1", "dense_10", "dense_2"), not in write order: HDF5 files
// written like Keras' record no creation order, so match them by name. Other float types are
// read as float32, other integer types as int32/int64.
// The cosmetic `name` attributes are skipped: libhdf5 1.10 can crash on a corrupt
// variable-length string, and nothing (Keras included) needs them to load weights.
WeightsFile read_weights_file(const std::string& path);

// What one dataset of the file declares, known before its data is read.
struct DatasetInfo {
  std::string entry;  // its path in the file, e.g. "layers/dense/vars/0" or "kerascpp/training_state_step"
  Shape shape;
  DType dtype = DType::float32;  // what read_weights_file turns it into (see above)
};

// The file's whole structure without its data: WeightsFile's fields, in the same order.
struct WeightsLayout {
  std::vector<std::pair<std::string, std::vector<DatasetInfo>>> layers;  // name below layers/, vars
  std::vector<DatasetInfo> optimizer_vars;
  bool has_optimizer = false;
  std::vector<std::pair<std::string, DatasetInfo>> extra;  // name inside the kerascpp group
};

// Called once with the layout after every dataset was inspected and before any data is read, so
// that a file which does not fit (a layer's shape, a 1.6 GB "weight" in a 24 KB file) is refused
// without reading or allocating anything; it refuses by throwing.
using LayoutCheck = std::function<void(const WeightsLayout&)>;
WeightsFile read_weights_file(const std::string& path, const LayoutCheck& check);

}  // namespace kerascpp::io
