// run_layer_test: one call that checks a layer the way Keras' own run_layer_test does, for the
// built-in layers and for yours. It depends on no test framework:
//
//   auto result = kerascpp::testing::run_layer_test({
//       .make = [] { return kerascpp::layers::Dense(3, {.activation = "tanh"}); },
//       .input_shapes = {{4}},
//       .expected_output_shape = kerascpp::Shape{3},
//       .expected_trainable_weights = 2});
//   CHECK_MESSAGE(result.passed(), result.summary());
//
// What is checked, each on a fresh layer from `make`:
//  - the output's per-example shape and the numbers of trainable and non-trainable weights;
//  - the config round trip: the layer's get_config() rebuilds (through the layer registry, as
//    load_model does) a layer whose get_config() is the same JSON, and whose to_json() in a model
//    is the same model config;
//  - the `.keras` round trip: a model of the layer alone, saved and loaded back, predicts the
//    same bits on random inputs;
//  - finite-difference gradients (check_layer_gradients) with respect to the float inputs and
//    every trainable weight;
//  - a CPU replica and a GPU replica give the same forward within gpu_tolerance, where a GPU
//    exists (else that check is listed as skipped, with the reason).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/tensor/tensor.hpp"
#include "kerascpp/testing/gradient_check.hpp"

namespace kerascpp::testing {

/// What run_layer_test checks: how to make the layer, its inputs and what to expect.
struct LayerTestCase {
  std::function<LayerRef()> make;        ///< a fresh, unbuilt layer on every call
  std::vector<Shape> input_shapes;       ///< per-example shapes (no batch axis), one per input
  std::vector<DType> input_dtypes = {};  ///< float32 for every input where empty
  /// Integer inputs (ids) are drawn from [0, int_input_limit); float inputs from [-1, 1).
  std::int64_t int_input_limit = 10;
  /// The per-example output shape (no batch axis), checked when set.
  std::optional<Shape> expected_output_shape = std::nullopt;
  /// The number of trainable variables, checked when set.
  std::optional<std::size_t> expected_trainable_weights = std::nullopt;
  /// The number of non-trainable variables, checked when set.
  std::optional<std::size_t> expected_non_trainable_weights = std::nullopt;
  /// The batch size of the random inputs.
  std::int64_t batch = 3;
  /// Seed of the random inputs.
  std::uint32_t seed = 7;
  bool check_gradients = true;  ///< false for layers with no gradient (integer outputs)
  /// Settings of the gradient check.
  GradientCheckOptions gradient_options = {};
  bool check_keras_round_trip = true;  ///< saves a .keras file under the system's temp directory
  double gpu_tolerance = 1e-4;         ///< relative, CPU against GPU forward
};

/// run_layer_test's outcome: the checks run, skipped and failed.
struct LayerTestResult {
  std::vector<std::string> checks;    ///< what ran, one line each ("config round trip", ...)
  std::vector<std::string> skipped;   ///< what did not run, and why
  std::vector<std::string> problems;  ///< every failure, naming the check and the values
  /// No problems, and at least one check ran.
  bool passed() const { return problems.empty() && !checks.empty(); }
  std::string summary() const;  ///< one paragraph for a failure message
};

/// Runs every check of Keras' run_layer_test on fresh layers from test.make (see the top of this file).
LayerTestResult run_layer_test(const LayerTestCase& test);

}  // namespace kerascpp::testing
