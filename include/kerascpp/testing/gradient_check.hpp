// A numeric-vs-analytic gradient checker for unit tests of layers and losses, built-in or
// written by the user. It runs the code through the public API on the CPU and compares every
// analytic gradient with central finite differences; it depends on no test framework, so it
// works from doctest, GoogleTest or a plain main():
//
//   auto result = kerascpp::testing::check_layer_gradients(my_layer, {x});
//   CHECK_MESSAGE(result.passed(), result.summary());      // doctest
//   EXPECT_TRUE(result.passed()) << result.summary();      // GoogleTest
// (With GoogleTest, spell it kerascpp::testing or K::testing: after `using namespace kerascpp`
// a bare `testing::` is ambiguous with GoogleTest's ::testing.)
//
// What is checked, for a layer: the scalar objective L = Σ_k Σ_i output_k[i] · R_k[i], with R
// fixed random weights (so dL/doutput = R), is differentiated numerically with respect to every
// input element and every element of every trainable variable, and compared with what the
// layer's backward() returns (input gradients) and writes (Variable::grad). For a loss:
// L = Σ_n loss[n], differentiated with respect to the predictions, against compute()'s grad.
//
// The error of one element is |analytic − numeric| / max(1, |analytic|, |numeric|): absolute for
// small gradients, relative for large ones. Tensors larger than max_elements are checked on an
// evenly strided subset. Finite differences are taken in float32, so a tolerance much below
// 1e-4 is not reachable; the default 5e-3 catches transposed, missing or mis-scaled gradients.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/distribute/context.hpp"
#include "kerascpp/tensor/tensor.hpp"
#include "kerascpp/training/losses.hpp"

namespace kerascpp::testing {

/// Settings of the finite-difference gradient checks.
struct GradientCheckOptions {
  /// First central-difference step. A step whose two sides cross a kink (see kink patterns
  /// below) is retried at epsilon/10 and epsilon/100, then skipped.
  double epsilon = 1e-2;
  /// The largest accepted error of one element (observed on the built-in layers: ~1e-5 for one
  /// layer, ~1e-3 through a graph with batch normalization).
  double tolerance = 5e-3;
  std::int64_t max_elements = 160;  ///< per tensor; larger tensors are checked on a strided subset
  /// The check fails when more than this fraction of the elements had to be skipped.
  double max_skipped_fraction = 0.2;
  /// The layer's outputs come out of a relu (an output == 0 is a kink): steps that change which
  /// outputs are zero are retried smaller or skipped instead of compared.
  bool relu_outputs = false;
  bool training = true;       ///< ReplicaContext::training for the layer's forward/backward
  std::uint32_t seed = 1000;  ///< seed of the random output weights R (R_k uses seed + k)
};

/// The outcome of a gradient check: the worst error, counts and problems.
struct GradientCheckResult {
  double worst_error = 0.0;  ///< the largest error over all compared elements (NaN if any was NaN)
  std::string worst_at;      ///< "dense/kernel[7]: analytic 0.12, numeric 0.31"
  std::int64_t checked = 0;  ///< elements compared
  std::int64_t skipped = 0;  ///< elements skipped because every step crossed a kink
  /// Failures that are not a number: a gradient of the wrong shape, a trainable variable that got
  /// no gradient, backward() returning the wrong number of input gradients, a forward pass that
  /// gives another value when repeated, a loss that ignores grad_scale.
  std::vector<std::string> problems;
  double tolerance = 5e-3;            ///< copied from the options, for passed()
  double max_skipped_fraction = 0.2;  ///< copied from the options, for passed()

  /// No problems, at least one element compared, worst_error <= tolerance and not too many skipped.
  bool passed() const;
  /// One paragraph for a test failure message: worst error and where, counts, problems.
  std::string summary() const;
};

// ---- the whole check ----

/// Checks a layer on `inputs` (each [batch, ...] float32 on the CPU) with a fresh one-thread CPU
/// backend. A layer that was never called is first built by calling it on Input()s of the
/// inputs' per-example shapes. The layer's variables are perturbed during the check and
/// restored afterwards; their gradients on replica 0 are overwritten.
GradientCheckResult check_layer_gradients(const LayerRef& layer, const std::vector<Tensor>& inputs,
                                          const GradientCheckOptions& options = {});
/// As above in the caller's context (its backend, replica id, RNG stream; `options.training` is
/// ignored in favour of ctx.training). ctx.backend must be a CPU backend.
GradientCheckResult check_layer_gradients(ReplicaContext& ctx, const LayerRef& layer, const std::vector<Tensor>& inputs,
                                          const GradientCheckOptions& options = {});

/// Checks a loss's gradient with respect to `pred` (float32 on the CPU) for the given targets,
/// and that compute() honours grad_scale and writes a loss of shape [N].
GradientCheckResult check_loss_gradients(const losses::Loss& loss, const Tensor& pred, const Tensor& target,
                                         const GradientCheckOptions& options = {});

// ---- building blocks, for checking something other than one layer call (a graph, say) ----

/// One evaluation of a scalar objective. `kinks` is any pattern that changes where the function
/// has a kink (e.g. which relu outputs are positive); a finite difference whose two sides see
/// another pattern than the base point straddles a kink and is retried smaller or skipped.
struct Evaluation {
  /// The objective's value.
  double value = 0.0;
  /// The kink pattern at this point (see above).
  std::vector<char> kinks;
};
/// Evaluates the objective at the current values of the tensors it reads.
using Objective = std::function<Evaluation()>;

/// Compares `analytic` (dL/dtensor) with central differences of `objective`, which must read
/// `tensor` (a handle that shares storage with what the objective uses: it is perturbed in place
/// and restored). `base` is objective() at the unperturbed point. Adds to `result`.
void compare_gradient(GradientCheckResult& result, const std::string& label, Tensor tensor, const Tensor& analytic,
                      const Objective& objective, const Evaluation& base, const GradientCheckOptions& options = {});

/// The analytic side of check_layer_gradients: one forward and backward call of `layer` with
/// dL/doutputs = output_weights (random, from options.seed). All tensors are deep copies.
struct LayerGradients {
  /// @{
  /// The layer's outputs, the weights R used as dL/doutputs, and backward()'s input gradients.
  std::vector<Tensor> outputs, output_weights, input_grads;
  /// @}
  std::vector<Tensor> variable_grads;  ///< one per trainable variable, in trainable_variables() order
  std::vector<std::string> problems;   ///< as in GradientCheckResult
};
/// One forward and backward call of `layer` on `inputs`, with dL/doutputs drawn from `seed`.
LayerGradients layer_gradients(ReplicaContext& ctx, const LayerRef& layer, const std::vector<Tensor>& inputs,
                               std::uint32_t seed = 1000);

/// Σ_k Σ_i outputs_k[i] · weights_k[i] in double (shapes must match): the objective above.
double weighted_sum(const std::vector<Tensor>& outputs, const std::vector<Tensor>& weights);
/// Appends one entry per element of `relu_output`: whether it is positive (a relu kink pattern).
void append_relu_kinks(std::vector<char>& kinks, const Tensor& relu_output);
/// A float32 tensor of uniform values in [low, high) from a std::mt19937 seeded with `seed`.
Tensor uniform_tensor(const Shape& shape, std::uint32_t seed, float low = -1.f, float high = 1.f);

}  // namespace kerascpp::testing
