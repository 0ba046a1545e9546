// run_layer_test (kerascpp/testing/layer_test.hpp): Keras' run_layer_test idea on kerascpp's
// public API, plus the layer registry and the GPU seam for the two checks that need them.
#include "kerascpp/testing/layer_test.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>

#include "backend/device_memory.hpp"
#include "backend/gpu_support.hpp"
#include "core/layer_registry.hpp"
#include "kerascpp/backend/backend.hpp"
#include "kerascpp/core/random.hpp"
#include "kerascpp/io/saving.hpp"
#include "kerascpp/layers/input_layer.hpp"
#include "kerascpp/testing.hpp"
#include "kerascpp/training/model.hpp"

namespace kerascpp::testing {

namespace {

DType input_dtype(const LayerTestCase& t, std::size_t i) {
  return i < t.input_dtypes.size() ? t.input_dtypes[i] : DType::float32;
}

// Random [batch, shape...] inputs: floats in [-1, 1), integers in [0, int_input_limit).
std::vector<Tensor> random_inputs(const LayerTestCase& t, std::uint32_t seed) {
  std::vector<Tensor> xs;
  Rng rng(seed);
  for (std::size_t i = 0; i < t.input_shapes.size(); ++i) {
    Shape s{t.batch};
    s.insert(s.end(), t.input_shapes[i].begin(), t.input_shapes[i].end());
    std::int64_t n = 1;
    for (auto d : s) n *= d;
    const DType dt = input_dtype(t, i);
    if (dt == DType::float32) {
      std::vector<float> v(static_cast<std::size_t>(n));
      for (auto& x : v) x = 2.f * rng.uniform() - 1.f;
      xs.push_back(Tensor::from_vector(s, v));
    } else {
      std::vector<std::int64_t> v(static_cast<std::size_t>(n));
      for (auto& x : v) x = static_cast<std::int64_t>(rng.next_u64() % static_cast<std::uint64_t>(t.int_input_limit));
      if (dt == DType::int64) {
        xs.push_back(Tensor::from_vector(s, v));
      } else {
        xs.push_back(Tensor::from_vector(s, std::vector<std::int32_t>(v.begin(), v.end())));
      }
    }
  }
  return xs;
}

// A model of the layer alone on Input()s of the test's shapes.
struct LayerModel {
  LayerRef layer;
  std::vector<KerasTensor> inputs;
  KerasTensor output;
};
LayerModel call_on_inputs(const LayerTestCase& t) {
  LayerModel m{t.make(), {}, {}};
  for (std::size_t i = 0; i < t.input_shapes.size(); ++i)
    m.inputs.push_back(Input(t.input_shapes[i], input_dtype(t, i)));
  m.output = m.inputs.size() == 1 ? m.layer(m.inputs[0]) : m.layer(m.inputs);
  return m;
}

void check_shapes_and_weights(const LayerTestCase& t, LayerTestResult& r) {
  LayerModel m = call_on_inputs(t);
  if (t.expected_output_shape && m.output.shape() != *t.expected_output_shape)
    r.problems.push_back(fmt::format("output shape: got {}, expected {}", shape_str(m.output.shape()),
                                     shape_str(*t.expected_output_shape)));
  std::size_t trainable = 0, frozen = 0;
  for (Variable* v : m.layer->variables()) (v->trainable() ? trainable : frozen)++;
  if (t.expected_trainable_weights && trainable != *t.expected_trainable_weights)
    r.problems.push_back(
        fmt::format("trainable weights: got {}, expected {}", trainable, *t.expected_trainable_weights));
  if (t.expected_non_trainable_weights && frozen != *t.expected_non_trainable_weights)
    r.problems.push_back(
        fmt::format("non-trainable weights: got {}, expected {}", frozen, *t.expected_non_trainable_weights));
  r.checks.push_back("output shape and weight counts");
}

void check_config_round_trip(const LayerTestCase& t, LayerTestResult& r) {
  LayerModel m = call_on_inputs(t);
  const Json config = m.layer->get_config();
  LayerRef rebuilt = detail::layer_from_config(m.layer->class_name(), config);
  const Json again = rebuilt->get_config();
  if (again != config)
    r.problems.push_back(
        fmt::format("config round trip: get_config() {} came back as {}", config.dump(), again.dump()));
  Model model(m.inputs, {m.output});
  const std::string json = model.to_json();
  const std::string json_again = model_from_json(json).to_json();
  if (json_again != json)
    r.problems.push_back(fmt::format("model config round trip: {} came back as {}", json, json_again));
  r.checks.push_back("config round trip (get_config, registry, to_json)");
}

void check_keras_round_trip(const LayerTestCase& t, LayerTestResult& r) {
  LayerModel m = call_on_inputs(t);
  Model model(m.inputs, {m.output});
  const std::vector<Tensor> xs = random_inputs(t, t.seed);
  const Tensor before = model.predict_on_batch(xs);
  namespace fs = std::filesystem;
  const fs::path path = fs::temp_directory_path() /
                        fmt::format("kerascpp_layer_test_{}_{}.keras", m.layer->class_name(), std::random_device{}());
  struct Remove {
    fs::path p;
    ~Remove() {
      std::error_code ec;
      fs::remove(p, ec);
    }
  } remove{path};
  model.save(path.string());
  Model loaded = load_model(path.string());
  const Comparison same = equal(loaded.predict_on_batch(xs), before);
  if (!same) r.problems.push_back(".keras round trip: the loaded model predicts differently: " + same.message());
  r.checks.push_back(".keras round trip (save, load_model, predict)");
}

void check_gradients(const LayerTestCase& t, LayerTestResult& r) {
  for (std::size_t i = 0; i < t.input_shapes.size(); ++i)
    if (input_dtype(t, i) != DType::float32) {
      r.skipped.push_back("finite-difference gradients: the layer takes integer inputs");
      return;
    }
  LayerModel m = call_on_inputs(t);
  const GradientCheckResult g = check_layer_gradients(m.layer, random_inputs(t, t.seed + 1), t.gradient_options);
  if (!g.passed()) r.problems.push_back("finite-difference gradients: " + g.summary());
  r.checks.push_back("finite-difference gradients");
}

// The layer's forward on a CPU replica and on a GPU replica, same weights and inputs.
void check_cpu_against_gpu(const LayerTestCase& t, LayerTestResult& r) {
  const detail::GpuAvailability& gpu = detail::gpu_availability();
  if (gpu.device_count == 0) {
    r.skipped.push_back("CPU against GPU: no GPU (" + (gpu.reason.empty() ? std::string("none found") : gpu.reason) +
                        ")");
    return;
  }
  LayerModel m = call_on_inputs(t);
  const std::vector<Tensor> xs = random_inputs(t, t.seed + 2);
  auto forward_on = [&](Backend& backend, Device device) {
    std::vector<Tensor> placed;
    for (const auto& x : xs) placed.push_back(x.to(device));
    for (Variable* v : m.layer->variables()) v->mirror({device});
    ReplicaContext ctx;
    ctx.backend = &backend;
    ctx.training = false;
    LayerState state;
    return m.layer->forward(ctx, placed, state).at(0).to(Device{});
  };
  std::unique_ptr<Backend> cpu = make_cpu_backend(1);
  const Tensor on_cpu = forward_on(*cpu, Device{});
  std::unique_ptr<Backend> cuda = detail::make_gpu_backend(0);
  const Tensor on_gpu = forward_on(*cuda, cuda->device());
  const Comparison close = allclose(on_gpu, on_cpu, t.gpu_tolerance, t.gpu_tolerance);
  if (!close) r.problems.push_back("CPU against GPU forward: " + close.message());
  r.checks.push_back("CPU against GPU forward");
}

}  // namespace

std::string LayerTestResult::summary() const {
  std::string out = fmt::format("run_layer_test: {} check(s) ran, {} problem(s)", checks.size(), problems.size());
  for (const auto& p : problems) out += "\n  problem: " + p;
  for (const auto& s : skipped) out += "\n  skipped: " + s;
  return out;
}

LayerTestResult run_layer_test(const LayerTestCase& test) {
  LayerTestResult r;
  if (!test.make || test.input_shapes.empty()) {
    r.problems.push_back("run_layer_test: give .make (a factory of fresh layers) and .input_shapes");
    return r;
  }
  // Each check catches its own errors, so one broken check still lets the others report.
  auto run = [&](const char* what, void (*check)(const LayerTestCase&, LayerTestResult&)) {
    try {
      check(test, r);
    } catch (const std::exception& e) { r.problems.push_back(fmt::format("{}: threw {}", what, e.what())); }
  };
  run("output shape and weight counts", check_shapes_and_weights);
  run("config round trip", check_config_round_trip);
  if (test.check_keras_round_trip) run(".keras round trip", check_keras_round_trip);
  else r.skipped.push_back(".keras round trip: turned off by the test");
  if (test.check_gradients) run("finite-difference gradients", check_gradients);
  else r.skipped.push_back("finite-difference gradients: turned off by the test");
  run("CPU against GPU forward", check_cpu_against_gpu);
  return r;
}

}  // namespace kerascpp::testing
