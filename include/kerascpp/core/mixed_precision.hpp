// Mixed precision: Keras' dtype policies ("float32", "mixed_bfloat16", "mixed_float16").
//
//   kerascpp::mixed_precision::set_global_policy("mixed_bfloat16");  // layers made from now on
//   auto head = layers::Dense(10, {.activation = "softmax", .dtype = "float32"});  // one layer
//
// Under a mixed policy variables stay float32 (the optimizer updates them in float32) and a
// layer's matmuls and convolutions compute in the policy's 16-bit dtype: their operands are
// rounded to bfloat16/float16 and the products accumulate in float32 (oneDNN's bf16 kernels on
// AVX512-BF16/AMX processors, cuBLAS/cuDNN on GPUs; see compute_path). Between layers that can
// take them (Dense and Conv2D with a linear or ReLU activation, pooling, Flatten/Reshape:
// Layer::low_precision_io) activations and their gradients travel in 16 bits, as in Keras, where
// the backend runs the dtype natively (Backend::low_precision_activations: the CPU with native
// kernels). Everything else (normalization, softmax, losses, metrics, other layers) runs in
// float32 on float32 tensors, and model outputs are float32 (README, "Mixed precision").
// mixed_float16 needs loss scaling against gradient underflow: compile() wraps the optimizer in
// a LossScaleOptimizer then, as Keras does.
#pragma once
#include <string>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp {
class Backend;
}

/// Keras' dtype policies for mixed-precision training (keras.mixed_precision).
namespace kerascpp::mixed_precision {

/// A Keras dtype policy: the dtype a layer computes in, with float32 variables.
class DTypePolicy {
 public:
  /// "float32", "mixed_bfloat16" or "mixed_float16"; anything else is a ValueError listing these.
  explicit DTypePolicy(const std::string& name = "float32");
  /// "float32", "mixed_bfloat16" or "mixed_float16".
  const std::string& name() const { return name_; }
  /// The dtype matmuls and convolutions compute in (bfloat16 or float16 under a mixed policy).
  DType compute_dtype() const { return compute_; }
  /// Always float32: the optimizer updates variables in float32 under every policy.
  DType variable_dtype() const { return DType::float32; }
  /// Same policy name.
  bool operator==(const DTypePolicy& o) const { return name_ == o.name_; }
  /// Different policy names.
  bool operator!=(const DTypePolicy& o) const { return name_ != o.name_; }

 private:
  std::string name_;
  DType compute_ = DType::float32;
};

/// @{
/// The policy layers get when they are made (Keras' keras.mixed_precision.set_global_policy);
/// layers made earlier keep theirs. Process-wide, like Keras'.
void set_global_policy(const std::string& name);
void set_global_policy(const DTypePolicy& policy);
/// @}
/// The policy set_global_policy set last ("float32" until then).
DTypePolicy global_policy();

/// How `backend` computes matmuls and convolutions in `dtype`, for logs and benchmarks: on the
/// CPU "native (...)" naming the kernels oneDNN picked, or "emulated (...)" where the processor
/// has no 16-bit arithmetic (operands are rounded, then computed in float32: the same numbers,
/// slower than float32); on a GPU the cuBLAS/cuDNN path ("cuBLAS GemmEx bfloat16 inputs, float32
/// accumulate; cuDNN bfloat16 convolution ..."), or "float32 (...)" saying why not. float32 gives
/// "float32".
std::string compute_path(Backend& backend, DType dtype);

}  // namespace kerascpp::mixed_precision
