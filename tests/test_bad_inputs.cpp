// The bad-input table (issue 10): one row per thing a hurried user does wrong, each with the
// kerascpp::Error category it must raise and the words its message must contain (the culprit:
// layer, argument, flag, file, entry or shape). A row that crashes, hangs, throws another type or
// silently accepts fails under its own name. Rows that write files also check that a file
// existing before the failing write is byte-identical afterwards; rows that load weights check
// that the model's weights did not change. Crafted HDF5 files (entries deleted, reshaped,
// retyped with h5py) are in tests/python/test_bad_weights_files.py; the examples' bad flags in
// the example_bad_flags ctest.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "io/h5_weights.hpp"
#include "io/model_weights.hpp"
#include "kerascpp/kerascpp.hpp"
#include "scoped_test_state.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace fs = std::filesystem;
using kerascpp_test::TempDir;

namespace {

enum class Kind { Shape, Value, IO, Device, State };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Shape:
      return "ShapeError";
    case Kind::Value:
      return "ValueError";
    case Kind::IO:
      return "IOError";
    case Kind::Device:
      return "DeviceError";
    case Kind::State:
      return "StateError";
  }
  return "?";
}

// The most derived category of `e` (the categories do not derive from each other).
const char* category_of(const K::Error& e) {
  if (dynamic_cast<const K::ShapeError*>(&e)) return "ShapeError";
  if (dynamic_cast<const K::ValueError*>(&e)) return "ValueError";
  if (dynamic_cast<const K::IOError*>(&e)) return "IOError";
  if (dynamic_cast<const K::DeviceError*>(&e)) return "DeviceError";
  if (dynamic_cast<const K::StateError*>(&e)) return "StateError";
  return "kerascpp::Error (no category)";
}

struct Row {
  std::string name;
  std::function<void()> bad;
  Kind kind;
  std::vector<std::string> culprit;   // substrings the message must contain
  std::function<void()> after{};      // extra checks once the error was caught (files, weights unchanged)
  std::string skip_reason{};          // non-empty: the row cannot run here, and why
  std::vector<std::string> absent{};  // substrings the message must not contain (a misleading cause)
};

// Runs one row: exactly the expected category, the culprit named, then the row's own checks.
// `before_row` runs first (the fixture takes its weight snapshot there).
void run_row(const Row& row, const std::function<void()>& before_row) {
  before_row();
  INFO("row: " << row.name);
  if (!row.skip_reason.empty()) {
    MESSAGE("row '" << row.name << "' skipped: " << row.skip_reason);
    return;
  }
  std::string message, category;
  try {
    row.bad();
    category = "nothing (silently accepted)";
  } catch (const K::Error& e) {
    message = e.what();
    category = category_of(e);
  } catch (const std::exception& e) {
    category = std::string("a std::exception that is not a kerascpp::Error: ") + e.what();
  }
  INFO("message: " << message);
  CHECK_MESSAGE(category == kind_name(row.kind),
                "row '" << row.name << "' threw " << category << ", expected " << std::string(kind_name(row.kind)));
  for (const auto& part : row.culprit)
    CHECK_MESSAGE(message.find(part) != std::string::npos,
                  "row '" << row.name << "': message lacks \"" << part << "\"");
  for (const auto& part : row.absent)
    CHECK_MESSAGE(message.find(part) == std::string::npos, "row '" << row.name << "': message says \"" << part << "\"");
  if (row.after) row.after();
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

K::Tensor ramp(const K::Shape& shape, float scale = 0.01f) {
  std::vector<float> v(static_cast<std::size_t>(K::shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>(i % 97) - 0.3f;
  return K::Tensor::from_vector(shape, v);
}

K::Tensor labels(std::int64_t n, std::int32_t classes = 10) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int32_t>(i) % classes;
  return K::Tensor::from_vector({n}, v);
}

// A compiled 4 -> `units` classifier, built (one training step) so it has weights to save.
K::Model built_classifier(const std::string& name, std::int64_t units = 10, K::CompileOptions options = {}) {
  auto in = K::Input({4}, K::DType::float32, name + "_input");
  auto out = K::layers::Dense(units, {.activation = "softmax", .name = name + "_dense"})(in);
  K::Model model(in, out, name);
  if (!options.loss) options.loss = "sparse_categorical_crossentropy";
  options.optimizer = K::optimizers::Adam(1e-3);
  model.compile(std::move(options));
  model.train_on_batch(ramp({6, 4}), labels(6, static_cast<std::int32_t>(units)));
  return model;
}

std::vector<std::vector<float>> weights_of(const K::Model& m) {
  std::vector<std::vector<float>> out;
  for (const auto& t : m.get_weights()) out.push_back(t.to_vector());
  return out;
}

// Sets an environment variable for one call, restoring the previous value afterwards.
void with_env(const char* name, const char* value, const std::function<void()>& f) {
  test_scopes::ScopedEnv env(name, value);
  f();
}

// Runs f with writes limited to `bytes` per file (EFBIG, like a full disk's ENOSPC).
void with_file_size_limit(std::uint64_t bytes, const std::function<void()>& f) {
  rlimit old_limit{};
  ::getrlimit(RLIMIT_FSIZE, &old_limit);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old_limit;
  small.rlim_cur = bytes;
  ::setrlimit(RLIMIT_FSIZE, &small);
  auto restore = [&] {
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
    std::signal(SIGXFSZ, old_handler);
  };
  try {
    f();
  } catch (...) {
    restore();
    throw;
  }
  restore();
}

// A schedule that goes bad after a few steps, as a user-written one might.
class NanAfterTwo : public K::optimizers::schedules::LearningRateSchedule {
 public:
  double operator()(std::int64_t step) const override {
    return step < 2 ? 1e-3 : std::numeric_limits<double>::quiet_NaN();
  }
};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Everything the rows share: a temp dir, a trained model, its weights file, derived bad files.
struct Fixture {
  TempDir dir;
  K::Model model = built_classifier("table_model");
  std::string good = dir.file("good.weights.h5");
  std::string other = dir.file("other.weights.h5");
  K::Dataset xy = K::Dataset::from_tensor_slices(ramp({10, 4}), labels(10));
  K::Dataset batches = xy.batch(2);  // 5 batches
  std::vector<std::vector<float>> snapshot;

  Fixture() {
    model.save_weights(good);
    built_classifier("other_model", 5).save_weights(other);
    snapshot = weights_of(model);
  }
  // For rows that must leave the model as it was (snapshot is retaken before every row).
  std::function<void()> weights_unchanged() {
    return [this] { CHECK_MESSAGE(weights_of(model) == snapshot, "the model's weights changed"); };
  }
  // For rows whose failing write must leave `path` (written before) byte-identical.
  std::function<void()> file_unchanged(const std::string& path, std::string before) {
    return [path, before = std::move(before)] {
      CHECK_MESSAGE(read_bytes(path) == before, "'" << path << "' changed after a failing write");
    };
  }
  std::string derived(const std::string& name, const std::function<std::string(std::string)>& edit) {
    std::string path = dir.file(name);
    write_bytes(path, edit(read_bytes(good)));
    return path;
  }
};

std::vector<Row> layer_and_tensor_rows() {
  using namespace K::layers;
  return {
      {"Conv2D kernel_size {3, -2}",
       [] { Conv2D(4, {3, -2}, {.name = "c_hw"}); },
       Kind::Value,
       {"c_hw", "kernel_size", "{3, -2}"}},
      {"Conv2D strides {0, 1}",
       [] { Conv2D(4, 3, {.strides = {0, 1}, .name = "c_st"}); },
       Kind::Value,
       {"c_st", "strides"}},
      {"Conv2D filters 0", [] { Conv2D(0, 3, {.name = "c_f0"}); }, Kind::Value, {"c_f0", "filters"}},
      {"Conv2D kernel_size -3", [] { Conv2D(4, -3, {.name = "c_k"}); }, Kind::Value, {"c_k", "kernel_size", "-3"}},
      {"Conv2D padding 'full'",
       [] { Conv2D(4, 3, {.padding = K::padding_from_name("full"), .name = "c_pad"}); },
       Kind::Value,
       {"full"}},
      {"Conv2D on a rank-2 input",
       [] { Conv2D(4, 3, {.name = "c_rank"})(K::Input({10})); },
       Kind::Shape,
       {"c_rank", "(None, 10)"}},
      {"Conv2D kernel larger than the image",
       [] { Conv2D(4, 3, {.name = "c_small"})(K::Input({2, 2, 1})); },
       Kind::Shape,
       {"c_small", "(None, 2, 2, 1)"}},
      {"MaxPooling2D negative strides",
       [] { MaxPooling2D(2, {.strides = {-1, -1}, .name = "p_neg"}); },
       Kind::Value,
       {"p_neg", "strides", "{-1, -1}"}},
      {"AveragePooling2D strides {2, -1}",
       [] { AveragePooling2D(2, {.strides = {2, -1}, .name = "ap_neg"}); },
       Kind::Value,
       {"ap_neg", "strides"}},
      {"MaxPooling2D pool_size 0", [] { MaxPooling2D(0); }, Kind::Value, {"pool_size"}},
      {"Reshape target with -2",
       [] { Reshape({5, -2}, {.name = "r_neg"}); },
       Kind::Value,
       {"r_neg", "target_shape", "-2"}},
      {"Reshape target with two -1", [] { Reshape({-1, -1}, {.name = "r_two"}); }, Kind::Value, {"r_two", "-1"}},
      {"Reshape empty target", [] { Reshape({}, {.name = "r_empty"}); }, Kind::Value, {"r_empty", "target_shape"}},
      {"Reshape 12 -> (5, 5)",
       [] { Reshape({5, 5}, {.name = "r_bad"})(K::Input({12})); },
       Kind::Shape,
       {"r_bad", "(None, 12)", "(5, 5)"}},
      {"BatchNormalization epsilon 0",
       [] { BatchNormalization({.epsilon = 0.f, .name = "bn_eps"}); },
       Kind::Value,
       {"bn_eps", "epsilon"}},
      {"BatchNormalization epsilon NaN",
       [] { BatchNormalization({.epsilon = std::numeric_limits<float>::quiet_NaN(), .name = "bn_nan"}); },
       Kind::Value,
       {"bn_nan", "epsilon", "nan"}},
      {"BatchNormalization momentum 1.5",
       [] { BatchNormalization({.momentum = 1.5f, .name = "bn_mom"}); },
       Kind::Value,
       {"bn_mom", "momentum", "1.5"}},
      {"BatchNormalization momentum NaN",
       [] { BatchNormalization({.momentum = std::numeric_limits<float>::quiet_NaN(), .name = "bn_mnan"}); },
       Kind::Value,
       {"bn_mnan", "momentum"}},
      {"Dense units 0", [] { Dense(0, {.name = "d0"}); }, Kind::Value, {"d0", "units", "0"}},
      {"Dense units -3", [] { Dense(-3, {.name = "dneg"}); }, Kind::Value, {"dneg", "units", "-3"}},
      {"Dense unknown activation", [] { Dense(3, {.activation = "relu7", .name = "dact"}); }, Kind::Value, {"relu7"}},
      {"Dense on a rank-1 input",
       [] { Dense(3, {.name = "d_scalar"})(K::Input({})); },
       Kind::Shape,
       {"d_scalar", "(None,)"}},
      {"Dense on uint8 input",
       [] { Dense(2, {.name = "d_bytes"})(K::Input({4}, K::DType::uint8)); },
       Kind::Shape,
       {"d_bytes", "uint8", "float32"}},
      {"Dropout rate 1.0", [] { Dropout(1.0f, {.name = "do1"}); }, Kind::Value, {"do1", "rate"}},
      {"Dropout rate -0.1", [] { Dropout(-0.1f, {.name = "doneg"}); }, Kind::Value, {"rate"}},
      {"Dropout rate NaN",
       [] { Dropout(std::numeric_limits<float>::quiet_NaN(), {.name = "donan"}); },
       Kind::Value,
       {"rate"}},
      {"Activation unknown name", [] { Activation("swishy", {.name = "act_bad"}); }, Kind::Value, {"swishy"}},
      {"Input with -1 inside prints None", [] { K::Input({28, -1}); }, Kind::Value, {"Input", "(28, None)"}},
      {"Input with -5 prints -5, not None", [] { K::Input({28, -5}); }, Kind::Value, {"Input", "-5"}},
      {"Add of different shapes",
       [] { Add({.name = "add_mm"})({K::Input({3}), K::Input({4})}); },
       Kind::Shape,
       {"add_mm", "(None, 3)", "(None, 4)"}},
      {"Concatenate axis out of range",
       [] { Concatenate(3, {.name = "cat_axis"})({K::Input({2, 3}), K::Input({2, 3})}); },
       Kind::Value,
       {"cat_axis", "axis 3"}},
      {"default Tensor to_vector", [] { K::Tensor().to_vector(); }, Kind::State, {"to_vector", "empty"}},
      {"default Tensor data<float>", [] { K::Tensor().data<float>(); }, Kind::State, {"data", "empty"}},
      {"default Tensor fill", [] { K::Tensor().fill(1.f); }, Kind::State, {"empty"}},
      {"Tensor negative dimension", [] { K::Tensor({-3, 4}); }, Kind::Value, {"(-3, 4)", "negative"}},
      {"Tensor shape overflowing int64",
       [] { K::Tensor({1LL << 40, 1LL << 40}); },
       Kind::Value,
       {"(1099511627776, 1099511627776)"}},
      {"Tensor larger than memory (no bad_alloc)",
       [] { K::Tensor({1LL << 20, 1LL << 20, 64}); },
       Kind::Value,
       {"(1048576, 1048576, 64)", "bytes"}},
      {"Tensor reshape with -3", [] { K::Tensor({2, 6}).reshape({-3, 4}); }, Kind::Value, {"-3"}},
  };
}

std::vector<Row> optimizer_rows() {
  namespace O = K::optimizers;
  namespace S = K::optimizers::schedules;
  return {
      {"Adam learning_rate NaN", [] { (void)O::Adam(kNaN); }, Kind::Value, {"learning_rate", "nan"}},
      {"Adam learning_rate -1", [] { (void)O::Adam(-1.0); }, Kind::Value, {"learning_rate", "-1"}},
      {"SGD learning_rate +Inf", [] { (void)O::SGD(kInf); }, Kind::Value, {"learning_rate", "inf"}},
      {"RMSprop learning_rate -1e-3", [] { (void)O::RMSprop(-1e-3); }, Kind::Value, {"learning_rate", "-0.001"}},
      {"SGD learning_rate beyond float32", [] { (void)O::SGD(1e300); }, Kind::Value, {"learning_rate", "1e+300"}},
      {"SGD momentum -0.5", [] { (void)O::SGD(0.01, {.momentum = -0.5}); }, Kind::Value, {"SGD", "momentum", "-0.5"}},
      {"SGD momentum NaN", [] { (void)O::SGD(0.01, {.momentum = kNaN}); }, Kind::Value, {"SGD", "momentum", "nan"}},
      {"SGD momentum 1.5", [] { (void)O::SGD(0.01, {.momentum = 1.5}); }, Kind::Value, {"SGD", "momentum", "1.5"}},
      {"Adam beta_1 1.0", [] { (void)O::Adam(1e-3, {.beta_1 = 1.0}); }, Kind::Value, {"Adam", "beta_1", "[0, 1)"}},
      {"Adam beta_1 -0.1", [] { (void)O::Adam(1e-3, {.beta_1 = -0.1}); }, Kind::Value, {"Adam", "beta_1", "-0.1"}},
      {"Adam beta_2 NaN", [] { (void)O::Adam(1e-3, {.beta_2 = kNaN}); }, Kind::Value, {"Adam", "beta_2", "nan"}},
      {"Adam beta_2 1.0", [] { (void)O::Adam(1e-3, {.beta_2 = 1.0}); }, Kind::Value, {"Adam", "beta_2"}},
      {"Adam epsilon 0", [] { (void)O::Adam(1e-3, {.epsilon = 0}); }, Kind::Value, {"Adam", "epsilon", "0"}},
      {"Adam epsilon -1e-7", [] { (void)O::Adam(1e-3, {.epsilon = -1e-7}); }, Kind::Value, {"Adam", "epsilon"}},
      {"Adam epsilon NaN", [] { (void)O::Adam(1e-3, {.epsilon = kNaN}); }, Kind::Value, {"Adam", "epsilon", "nan"}},
      {"RMSprop rho 1.0", [] { (void)O::RMSprop(1e-3, {.rho = 1.0}); }, Kind::Value, {"RMSprop", "rho"}},
      {"RMSprop rho -1", [] { (void)O::RMSprop(1e-3, {.rho = -1}); }, Kind::Value, {"RMSprop", "rho", "-1"}},
      {"RMSprop epsilon 0", [] { (void)O::RMSprop(1e-3, {.epsilon = 0}); }, Kind::Value, {"RMSprop", "epsilon"}},
      {"ExponentialDecay initial NaN",
       [] { (void)S::ExponentialDecay(kNaN, 10, 0.9); },
       Kind::Value,
       {"ExponentialDecay", "initial_learning_rate", "nan"}},
      {"ExponentialDecay decay_steps 0",
       [] { (void)S::ExponentialDecay(0.1, 0, 0.9); },
       Kind::Value,
       {"ExponentialDecay", "decay_steps"}},
      {"ExponentialDecay decay_rate -0.5",
       [] { (void)S::ExponentialDecay(0.1, 10, -0.5); },
       Kind::Value,
       {"ExponentialDecay", "decay_rate", "-0.5"}},
      {"ExponentialDecay decay_rate NaN",
       [] { (void)S::ExponentialDecay(0.1, 10, kNaN); },
       Kind::Value,
       {"ExponentialDecay", "decay_rate"}},
      {"PiecewiseConstantDecay NaN value",
       [] { (void)S::PiecewiseConstantDecay({10}, {0.1, kNaN}); },
       Kind::Value,
       {"PiecewiseConstantDecay", "values[1]", "nan"}},
      {"PiecewiseConstantDecay boundaries out of order",
       [] { (void)S::PiecewiseConstantDecay({10, 5}, {0.1, 0.01, 0.001}); },
       Kind::Value,
       {"PiecewiseConstantDecay", "boundaries", "increasing"}},
      {"PiecewiseConstantDecay value count",
       [] { (void)S::PiecewiseConstantDecay({10}, {0.1}); },
       Kind::Value,
       {"PiecewiseConstantDecay", "one more"}},
      {"set_learning_rate(NaN)", [] { (void)O::SGD().set_learning_rate(kNaN); }, Kind::Value, {"learning_rate", "nan"}},
      {"unknown optimizer name", [] { K::optimizers::OptimizerRef("adamaxx"); }, Kind::Value, {"adamaxx"}},
  };
}

std::vector<Row> training_rows(Fixture& f) {
  K::Model& m = f.model;
  const K::Dataset& b = f.batches;
  const K::Dataset& xy = f.xy;
  return {
      {"fit steps_per_epoch 0",
       [&] { m.fit(b, {.steps_per_epoch = 0, .verbose = 0}); },
       Kind::Value,
       {"table_model", "steps_per_epoch", "got 0"},
       f.weights_unchanged()},
      {"fit steps_per_epoch -5",
       [&] { m.fit(b, {.steps_per_epoch = -5, .verbose = 0}); },
       Kind::Value,
       {"steps_per_epoch", "-5"},
       f.weights_unchanged()},
      {"fit validation_steps 0",
       [&] { m.fit(b, {.validation_data = b, .validation_steps = 0, .verbose = 0}); },
       Kind::Value,
       {"validation_steps", "got 0"},
       f.weights_unchanged()},
      {"fit validation_freq 0",
       [&] { m.fit(b, {.validation_data = b, .validation_freq = 0, .verbose = 0}); },
       Kind::Value,
       {"validation_freq", "0"},
       f.weights_unchanged()},
      {"fit epochs -1", [&] { m.fit(b, {.epochs = -1, .verbose = 0}); }, Kind::Value, {"epochs", "-1"}},
      {"fit initial_epoch -1",
       [&] { m.fit(b, {.initial_epoch = -1, .verbose = 0}); },
       Kind::Value,
       {"initial_epoch", "-1"}},
      {"fit verbose 3", [&] { m.fit(b, {.verbose = 3}); }, Kind::Value, {"verbose", "3"}, f.weights_unchanged()},
      {"evaluate steps 0",
       [&] { m.evaluate(b, {.steps = 0, .verbose = 0}); },
       Kind::Value,
       {"evaluate", "steps", "got 0"}},
      {"evaluate steps -2", [&] { m.evaluate(b, {.steps = -2, .verbose = 0}); }, Kind::Value, {"evaluate", "-2"}},
      {"evaluate verbose -1", [&] { m.evaluate(b, {.verbose = -1}); }, Kind::Value, {"verbose", "-1"}},
      {"predict steps -3", [&] { m.predict(b, {.steps = -3}); }, Kind::Value, {"predict", "steps", "-3"}},
      {"predict steps 0", [&] { m.predict(b, {.steps = 0}); }, Kind::Value, {"predict", "steps", "got 0"}},
      {"fit empty validation_data",
       [&] { m.fit(b, {.validation_data = xy.take(0).batch(2), .verbose = 0}); },
       Kind::Value,
       {"validation_data", "empty"},
       f.weights_unchanged()},
      {"fit endless validation_data",
       [&] { m.fit(b, {.validation_data = b.repeat(), .verbose = 0}); },
       Kind::Value,
       {"validation_data", "forever"},
       f.weights_unchanged()},
      {"fit unbatched validation_data",
       [&] { m.fit(b, {.validation_data = xy, .verbose = 0}); },
       Kind::Shape,
       {"validation_data", "batch"},
       f.weights_unchanged()},
      {"fit unbatched dataset", [&] { m.fit(xy, {.verbose = 0}); }, Kind::Shape, {"table_model", "batch"}},
      {"fit empty dataset", [&] { m.fit(xy.take(0).batch(2), {.verbose = 0}); }, Kind::Value, {"table_model", "empty"}},
      {"fit endless dataset without steps_per_epoch",
       [&] { m.fit(b.repeat(), {.verbose = 0}); },
       Kind::Value,
       {"steps_per_epoch"}},
      {"evaluate endless dataset without steps",
       [&] { m.evaluate(b.repeat(), {.verbose = 0}); },
       Kind::Value,
       {"steps"}},
      {"predict empty dataset", [&] { m.predict(xy.take(0).batch(2)); }, Kind::Value, {"table_model", "empty"}},
      {"fit on x-only elements",
       [&] { m.fit(K::Dataset::from_tensor_slices(ramp({4, 4})).batch(2), {.verbose = 0}); },
       Kind::Shape,
       {"table_model", "(x, y)"}},
      {"fit wrong feature width",
       [&] { m.fit(K::Dataset::from_tensor_slices(ramp({6, 5}), labels(6)).batch(3), {.verbose = 0}); },
       Kind::Shape,
       {"table_model_input", "(None, 4)", "(3, 5)"},
       f.weights_unchanged()},
      {"fit uint8 features",
       [&] {
         std::vector<std::uint8_t> px(6 * 4, 3);
         m.fit(K::Dataset::from_tensor_slices(K::Tensor::from_vector({6, 4}, px), labels(6)).batch(3), {.verbose = 0});
       },
       Kind::Shape,
       {"table_model_input", "uint8"},
       f.weights_unchanged()},
      {"fit float labels for sparse crossentropy",
       [&] { m.fit(K::Dataset::from_tensor_slices(ramp({6, 4}), ramp({6})).batch(3), {.verbose = 0}); },
       Kind::Shape,
       {"float32", "integer"},
       f.weights_unchanged()},
      {"train_on_batch label count mismatch",
       [&] { m.train_on_batch(ramp({6, 4}), labels(3)); },
       Kind::Shape,
       {"table_model", "6", "3"},
       f.weights_unchanged()},
      {"set_weights wrong count",
       [&] { m.set_weights({ramp({4, 10})}); },
       Kind::Value,
       {"table_model"},
       f.weights_unchanged()},
      {"set_weights wrong shape",
       [&] { m.set_weights({ramp({5, 10}), ramp({10})}); },
       Kind::Shape,
       {"(5, 10)", "(4, 10)"},
       f.weights_unchanged()},
      {"schedule returning NaN mid-training",
       [] {
         K::Model s = built_classifier("sched_model");
         s.compile({.optimizer = K::optimizers::SGD(NanAfterTwo()), .loss = "sparse_categorical_crossentropy"});
         s.fit(K::Dataset::from_tensor_slices(ramp({8, 4}), labels(8)).batch(2), {.verbose = 0});
       },
       Kind::Value,
       {"SGD", "schedule", "nan", "step 2"}},
      {"fit before compile",
       [] {
         auto in = K::Input({4});
         K::Model raw(in, K::layers::Dense(2)(in), "raw_model");
         raw.fit(K::Dataset::from_tensor_slices(ramp({4, 4}), labels(4, 2)).batch(2));
       },
       Kind::State,
       {"raw_model", "compile()"}},
      {"unknown loss name",
       [] { K::Model raw = built_classifier("loss_model", 10, {.loss = "hinge_loss"}); },
       Kind::Value,
       {"hinge_loss"}},
      {"unknown metric name",
       [] { K::Model raw = built_classifier("metric_model", 10, {.metrics = {"accurracy"}}); },
       Kind::Value,
       {"accurracy"}},
      {"input shape error shows the global batch under 2 replicas",
       [] {
         auto in = K::Input({28, 28, 1}, K::DType::float32, "img");
         auto x = K::layers::Flatten()(in);
         K::Model two(in, K::layers::Dense(10, {.activation = "softmax"})(x), "two_replicas");
         two.compile({.optimizer = "sgd",
                      .loss = "sparse_categorical_crossentropy",
                      .distribute = K::distribute::MirroredStrategy<>(2)});
         two.fit(K::Dataset::from_tensor_slices(ramp({8, 27, 28, 1}), labels(8)).batch(8), {.verbose = 0});
       },
       Kind::Shape,
       {"img", "(8, 27, 28, 1)"}},
  };
}

std::vector<Row> dataset_rows(Fixture& f) {
  const K::Dataset& xy = f.xy;
  return {
      {"batch 0", [&] { xy.batch(0); }, Kind::Value, {"batch_size", "0"}},
      {"batch -3", [&] { xy.batch(-3); }, Kind::Value, {"batch_size", "-3"}},
      {"shuffle buffer 0", [&] { xy.shuffle(0); }, Kind::Value, {"shuffle", "buffer_size", "0"}},
      {"shuffle buffer -1", [&] { xy.shuffle(-1); }, Kind::Value, {"shuffle", "buffer_size", "-1"}},
      {"repeat -2", [&] { xy.repeat(-2); }, Kind::Value, {"repeat", "count", "-2"}},
      {"take -2", [&] { xy.take(-2); }, Kind::Value, {"take", "-2"}},
      {"skip -2", [&] { xy.skip(-2); }, Kind::Value, {"skip", "-2"}},
      {"skip all of an endless dataset", [&] { xy.repeat().skip(-1); }, Kind::Value, {"skip", "endless"}},
      {"shard num_shards 0", [&] { xy.shard(0, 0); }, Kind::Value, {"shard", "num_shards", "0"}},
      {"shard index 3 of 2", [&] { xy.shard(2, 3); }, Kind::Value, {"shard", "index", "3"}},
      {"prefetch -5", [&] { xy.prefetch(-5); }, Kind::Value, {"prefetch", "buffer_size", "-5"}},
      {"from_tensor_slices row mismatch",
       [] { K::Dataset::from_tensor_slices(ramp({4, 2}), labels(3)); },
       Kind::Shape,
       {"from_tensor_slices", "(4, 2)", "(3,)"}},
      {"from_tensor_slices no tensors",
       [] { K::Dataset::from_tensor_slices(std::vector<K::Tensor>{}); },
       Kind::Value,
       {"from_tensor_slices", "no tensors"}},
      {"from_tensor_slices scalar",
       [] { K::Dataset::from_tensor_slices(K::Tensor::full({}, 1.f)); },
       Kind::Shape,
       {"from_tensor_slices", "scalar"}},
      {"from_tensor_slices undefined tensor",
       [] { K::Dataset::from_tensor_slices(K::Tensor()); },
       Kind::State,
       {"from_tensor_slices", "undefined"}},
      {"default Dataset batch", [] { K::Dataset().batch(2); }, Kind::State, {"batch", "default-constructed"}},
      {"map with an empty function", [&] { xy.map(nullptr); }, Kind::Value, {"map", "empty"}},
      {"synthetic negative shape",
       [] { K::Dataset::synthetic({28, -4, 1}, {}, 10); },
       Kind::Value,
       {"synthetic", "negative"}},
      {"synthetic count -5", [] { K::Dataset::synthetic({2}, {}, -5); }, Kind::Value, {"synthetic", "count", "-5"}},
      {"batch of elements with different shapes",
       [&] {
         auto ragged = xy.map([](const K::Example& e) {
           static int n = 0;
           return K::Example{(n++ % 2) ? ramp({3}) : e[0], e[1]};
         });
         auto it = ragged.batch(2).make_iterator();
         K::Example out;
         it->next(out);
       },
       Kind::Shape,
       {"Dataset.batch", "(4,)", "(3,)"}},
  };
}

std::vector<Row> strategy_and_env_rows() {
  namespace D = K::distribute;
  auto compile_with = [](D::Strategy s) {
    K::Model m = built_classifier("env_model", 10, {.distribute = std::move(s)});
  };
  return {
      {"MirroredStrategy explicit empty device list",
       [] { (void)D::MirroredStrategy<>(std::vector<std::string>{}); },
       Kind::Value,
       {"MirroredStrategy", "empty", "MirroredStrategy()"}},
      {"MirroredStrategy duplicate devices",
       [] { (void)D::MirroredStrategy<>({"cpu:0", "cpu:0"}); },
       Kind::Value,
       {"cpu:0", "twice"}},
      {"MirroredStrategy absent gpu:7", [] { (void)D::MirroredStrategy<>({"gpu:7"}); }, Kind::Device, {"gpu:7"}},
      {"OneDeviceStrategy absent gpu:7", [] { (void)D::OneDeviceStrategy("gpu:7"); }, Kind::Device, {"gpu:7"}},
      {"device kind tpu", [] { (void)D::OneDeviceStrategy("tpu:0"); }, Kind::Value, {"tpu:0"}},
      {"device index not a number", [] { (void)D::MirroredStrategy<>({"cpu:x"}); }, Kind::Value, {"cpu:x"}},
      {"MirroredStrategy 0 CPU replicas", [] { (void)D::MirroredStrategy<>(0); }, Kind::Value, {"cpu_replicas", "1"}},
      {"MirroredStrategy -3 CPU replicas", [] { (void)D::MirroredStrategy<>(-3); }, Kind::Value, {"cpu_replicas"}},
      {"threads_per_replica -1",
       [] { (void)D::MirroredStrategy<>(2, {.threads_per_replica = -1}); },
       Kind::Value,
       {"MirroredStrategy", "threads_per_replica", "-1"}},
      {"OneDeviceStrategy threads_per_replica -2",
       [] { (void)D::OneDeviceStrategy("cpu:0", {.threads_per_replica = -2}); },
       Kind::Value,
       {"OneDeviceStrategy", "threads_per_replica", "-2"}},
      {"bucket_bytes 0", [] { (void)D::MirroredStrategy<>(2, {.bucket_bytes = 0}); }, Kind::Value, {"bucket_bytes"}},
      {"mixed device kinds", [] { (void)D::MirroredStrategy<>({"cpu:0", "gpu:0"}); }, Kind::Value, {"cpu:0", "gpu:0"}},
      {"NcclAllReduce over CPU replicas",
       [] { (void)D::MirroredStrategy<D::NcclAllReduce>(2); },
       Kind::Value,
       {"NcclAllReduce", "CPU"}},
      {"KERASCPP_MAX_THREADS=abc",
       [=] { with_env("KERASCPP_MAX_THREADS", "abc", [&] { compile_with(D::Strategy()); }); },
       Kind::Value,
       {"KERASCPP_MAX_THREADS", "abc"}},
      {"KERASCPP_MAX_THREADS=0",
       [=] { with_env("KERASCPP_MAX_THREADS", "0", [&] { compile_with(D::MirroredStrategy<>(2)); }); },
       Kind::Value,
       {"KERASCPP_MAX_THREADS", "'0'"}},
      {"KERASCPP_MAX_THREADS=-2",
       [=] { with_env("KERASCPP_MAX_THREADS", "-2", [&] { compile_with(D::OneDeviceStrategy("cpu:0")); }); },
       Kind::Value,
       {"KERASCPP_MAX_THREADS", "-2"}},
      {"KERASCPP_MAX_THREADS=4x",
       [] { with_env("KERASCPP_MAX_THREADS", "4x", [] { D::Strategy s; }); },
       Kind::Value,
       {"KERASCPP_MAX_THREADS", "4x"}},
      {"KERASCPP_GPU_WORKSPACE_MB=lots",
       [] { with_env("KERASCPP_GPU_WORKSPACE_MB", "lots", [] { D::OneDeviceStrategy s("cpu:0"); }); },
       Kind::Value,
       {"KERASCPP_GPU_WORKSPACE_MB", "lots"}},
      {"KERASCPP_GPU_WORKSPACE_MB=0",
       [] { with_env("KERASCPP_GPU_WORKSPACE_MB", "0", [] { D::MirroredStrategy<> s(2); }); },
       Kind::Value,
       {"KERASCPP_GPU_WORKSPACE_MB", "'0'"}},
      {"KERASCPP_GPU_BN=fast",
       [] { with_env("KERASCPP_GPU_BN", "fast", [] { D::OneDeviceStrategy s("cpu:0"); }); },
       Kind::Value,
       {"KERASCPP_GPU_BN", "'fast'", "own, cudnn"}},
      {"KERASCPP_GPU_UPLOAD=async",
       [] { with_env("KERASCPP_GPU_UPLOAD", "async", [] { D::OneDeviceStrategy s("cpu:0"); }); },
       Kind::Value,
       {"KERASCPP_GPU_UPLOAD", "'async'", "thread, caller"}},
      {"KERASCPP_GPU_PHASES=yes",
       [] { with_env("KERASCPP_GPU_PHASES", "yes", [] { D::OneDeviceStrategy s("cpu:0"); }); },
       Kind::Value,
       {"KERASCPP_GPU_PHASES", "'yes'", "0, 1, layers"}},
      {"KERASCPP_CUDNN_ALGO_SEARCH=Find",
       [] { with_env("KERASCPP_CUDNN_ALGO_SEARCH", "Find", [] { D::MirroredStrategy<> s(2); }); },
       Kind::Value,
       {"KERASCPP_CUDNN_ALGO_SEARCH", "heuristic, find"}},
      {"KERASCPP_DATA not a directory",
       [] { with_env("KERASCPP_DATA", "/nonexistent/kerascpp", [] { K::datasets::fashion_mnist::load(""); }); },
       Kind::IO,
       {"KERASCPP_DATA", "/nonexistent/kerascpp"}},
  };
}

std::vector<Row> callback_rows(Fixture& f) {
  namespace C = K::callbacks;
  K::Model& m = f.model;
  const K::Dataset& b = f.batches;
  auto fit_with = [&m, &b](C::CallbackRef cb) { m.fit(b, {.callbacks = {std::move(cb)}, .verbose = 0}); };
  const std::string file = f.dir.file("plain_file");
  write_bytes(file, "not a directory");
  const std::string existing_csv = f.dir.file("kept.csv");
  write_bytes(existing_csv, "epoch,loss\n0,1.5\n");
  fs::create_directories(f.dir.path / "a_dir.weights.h5");
  return {
      {"TensorBoard histogram_freq -1",
       [] { (void)C::TensorBoard("logs", {.histogram_freq = -1}); },
       Kind::Value,
       {"TensorBoard", "histogram_freq", "-1"}},
      {"TensorBoard update_freq -5",
       [] { (void)C::TensorBoard("logs", {.update_freq = -5}); },
       Kind::Value,
       {"frequency", "-5"}},
      {"TensorBoard update_freq 'sometimes'",
       [] { (void)C::TensorBoard("logs", {.update_freq = "sometimes"}); },
       Kind::Value,
       {"sometimes"}},
      {"TensorBoard empty log_dir", [] { (void)C::TensorBoard(""); }, Kind::Value, {"TensorBoard", "log_dir", "empty"}},
      {"TensorBoard log_dir is a file", [=] { (void)C::TensorBoard(file); }, Kind::IO, {"TensorBoard", file}},
      {"TensorBoard log_dir under /proc",
       [=] { fit_with(C::TensorBoard("/proc/kerascpp_logs")); },
       Kind::IO,
       {"TensorBoard", "/proc/kerascpp_logs"},
       f.weights_unchanged()},
      {"CSVLogger empty filename", [] { (void)C::CSVLogger(""); }, Kind::Value, {"CSVLogger", "filename", "empty"}},
      {"CSVLogger filename is a directory",
       [&f] { (void)C::CSVLogger(f.dir.path.string()); },
       Kind::IO,
       {"CSVLogger", f.dir.path.string(), "directory"}},
      {"CSVLogger separator newline",
       [] { (void)C::CSVLogger("log.csv", '\n'); },
       Kind::Value,
       {"CSVLogger", "separator"}},
      {"CSVLogger under /proc (write fails, nothing else touched)",
       [=] { fit_with(C::CSVLogger("/proc/kerascpp.csv")); },
       Kind::IO,
       {"/proc/kerascpp.csv"},
       f.file_unchanged(existing_csv, read_bytes(existing_csv))},
      {"ModelCheckpoint empty filepath",
       [] { (void)C::ModelCheckpoint(""); },
       Kind::Value,
       {"ModelCheckpoint", ".weights.h5"}},
      {"ModelCheckpoint wrong suffix",
       [] { (void)C::ModelCheckpoint("ckpt.h5"); },
       Kind::Value,
       {"ckpt.h5", ".weights.h5"}},
      {"ModelCheckpoint unknown template field",
       [&f, fit_with] { fit_with(C::ModelCheckpoint(f.dir.file("e{epok:02d}.weights.h5"))); },
       Kind::Value,
       {"epok", "epoch"},
       f.weights_unchanged()},
      {"ModelCheckpoint bad format spec",
       [&f, fit_with] { fit_with(C::ModelCheckpoint(f.dir.file("e{epoch:zz}.weights.h5"))); },
       Kind::Value,
       {"zz", "epoch"},
       f.weights_unchanged()},
      {"ModelCheckpoint unclosed brace",
       [&f, fit_with] { fit_with(C::ModelCheckpoint(f.dir.file("e{epoch.weights.h5"))); },
       Kind::Value,
       {"unclosed"},
       f.weights_unchanged()},
      {"ModelCheckpoint filepath is a directory",
       [&f, fit_with] { fit_with(C::ModelCheckpoint((f.dir.path / "a_dir.weights.h5").string())); },
       Kind::IO,
       {"a_dir.weights.h5", "directory"}},
      {"ModelCheckpoint mode 'sideways'",
       [] { (void)C::ModelCheckpoint("c.weights.h5", {.mode = "sideways"}); },
       Kind::Value,
       {"mode", "sideways"}},
      {"ModelCheckpoint save_freq 0",
       [] { (void)C::ModelCheckpoint("c.weights.h5", {.save_freq = 0}); },
       Kind::Value,
       {"frequency", "0"}},
      {"EarlyStopping empty monitor", [] { (void)C::EarlyStopping({.monitor = ""}); }, Kind::Value, {"monitor"}},
      {"EarlyStopping min_delta NaN",
       [] { (void)C::EarlyStopping({.min_delta = kNaN}); },
       Kind::Value,
       {"min_delta", "val_loss"}},
      {"ReduceLROnPlateau min_delta Inf",
       [] { (void)C::ReduceLROnPlateau({.min_delta = kInf}); },
       Kind::Value,
       {"min_delta", "val_loss"}},
      {"EarlyStopping mode bad", [] { (void)C::EarlyStopping({.mode = "lowest"}); }, Kind::Value, {"mode", "lowest"}},
      {"ReduceLROnPlateau factor 1.5",
       [] { (void)C::ReduceLROnPlateau({.factor = 1.5}); },
       Kind::Value,
       {"ReduceLROnPlateau", "factor"}},
      {"LearningRateScheduler returning NaN",
       [fit_with] { fit_with(C::LearningRateScheduler([](int, double) { return kNaN; })); },
       Kind::Value,
       {"LearningRateScheduler", "nan"},
       f.weights_unchanged()},
  };
}

std::vector<Row> weights_file_rows(Fixture& f) {
  K::Model& m = f.model;
  const std::string good_bytes = read_bytes(f.good);
  const std::string truncated =
      f.derived("truncated.weights.h5", [](std::string s) { return s.substr(0, s.size() / 2); });
  const std::string text = f.dir.file("text.weights.h5");
  write_bytes(text, "this is not HDF5 at all, only text long enough to look like a file of some kind");
  const std::string empty = f.dir.file("empty.weights.h5");
  write_bytes(empty, "");
  // The metadata after the superblock overwritten: the file is still recognised as HDF5, but its
  // root group is noise. (Noise in the raw weight values cannot be detected: the Keras layout has
  // no checksums on data; see test_bad_weights_files.py for the entries h5py can damage.)
  const std::string corrupted = f.derived("corrupted.weights.h5", [](std::string s) {
    for (std::size_t i = 96; i < 96 + 512 && i < s.size(); ++i) s[i] = static_cast<char>(0xA5);
    return s;
  });
  const std::string renamed = f.derived("foreign.weights.h5", [](std::string s) {
    auto at = s.find("layers");
    if (at != std::string::npos) s.replace(at, 6, "layerz");
    return s;
  });
  const std::string unreadable = f.dir.file("unreadable.weights.h5");
  write_bytes(unreadable, good_bytes);
  fs::permissions(unreadable, fs::perms::none);
  const std::string kept = f.dir.file("kept.weights.h5");
  write_bytes(kept, good_bytes);
  const std::string missing_dir = f.dir.file("no/such/dir/model.weights.h5");
  return {
      {"load_weights missing file",
       [&m, &f] { m.load_weights(f.dir.file("missing.weights.h5")); },
       Kind::IO,
       {"missing.weights.h5", "does not exist"},
       f.weights_unchanged()},
      {"load_weights a directory",
       [&m, &f] { m.load_weights(f.dir.path.string()); },
       Kind::IO,
       {f.dir.path.string(), "directory"},
       f.weights_unchanged()},
      {"load_weights a text file",
       [&m, text] { m.load_weights(text); },
       Kind::IO,
       {text, "not an HDF5 file"},
       f.weights_unchanged()},
      {"load_weights an empty file", [&m, empty] { m.load_weights(empty); }, Kind::IO, {empty}, f.weights_unchanged()},
      {"load_weights a truncated file",
       [&m, truncated] { m.load_weights(truncated); },
       Kind::IO,
       {truncated, "truncated"},
       f.weights_unchanged()},
      {"load_weights a corrupted file",
       [&m, corrupted] { m.load_weights(corrupted); },
       Kind::IO,
       {corrupted},
       f.weights_unchanged()},
      {"load_weights without a layers group",
       [&m, renamed] { m.load_weights(renamed); },
       Kind::IO,
       {renamed, "'layers'"},
       f.weights_unchanged()},
      {"load_weights another model's file",
       [&m, &f] { m.load_weights(f.other); },
       Kind::Shape,
       {f.other, "table_model_dense"},
       f.weights_unchanged()},
      {"load_weights unreadable file (chmod 000)",
       [&m, unreadable] { m.load_weights(unreadable); },
       Kind::IO,
       {unreadable},
       f.weights_unchanged(),
       ::geteuid() == 0 ? "running as root, which reads a chmod 000 file anyway" : ""},
      {"save_weights into a missing directory",
       [&m, missing_dir] { m.save_weights(missing_dir); },
       Kind::IO,
       {missing_dir, "does not exist"},
       [&f] { CHECK_FALSE(fs::exists(f.dir.path / "no")); }},
      {"save_weights under /proc names the real problem",
       [&m] { m.save_weights("/proc/kerascpp.weights.h5"); },
       Kind::IO,
       {"/proc/kerascpp.weights.h5"},
       {},
       "",
       {"does not exist"}},
      {"save_weights under /sys",
       [&m] { m.save_weights("/sys/kerascpp.weights.h5"); },
       Kind::IO,
       {"/sys/kerascpp.weights.h5"}},
      {"save_weights onto a directory",
       [&m, &f] { m.save_weights((f.dir.path / "a_dir.weights.h5").string()); },
       Kind::IO,
       {"a_dir.weights.h5", "directory"}},
      {"save_weights on a full disk keeps the previous file",
       [&m, kept] { with_file_size_limit(4096, [&] { m.save_weights(kept); }); },
       Kind::IO,
       {kept},
       f.file_unchanged(kept, good_bytes)},
      {"fashion_mnist load from a missing directory",
       [&f] { K::datasets::fashion_mnist::load(f.dir.file("no_data")); },
       Kind::IO,
       {"no_data", "train-images-idx3-ubyte"}},
      {"fashion_mnist truncated IDX file",
       [&f] {
         fs::path d = f.dir.path / "fm_truncated";
         fs::create_directories(d);
         for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                                  "t10k-labels-idx1-ubyte"})
           write_bytes((d / name).string(), std::string("\x00\x00\x08\x03\x00\x00\x00\x05", 8));
         K::datasets::fashion_mnist::load(d.string());
       },
       Kind::IO,
       {"train-images-idx3-ubyte", "truncated"}},
  };
}

// A BackupAndRestore directory holding the fixture model's backup, edited by `edit` (entries
// removed or replaced through the file-level API, as an older/newer format or damage would).
std::string backup_dir_with(Fixture& f, const std::string& name, const std::function<void(K::io::WeightsFile&)>& edit) {
  const fs::path dir = f.dir.path / name;
  fs::create_directories(dir);
  const std::string path = (dir / "latest.weights.h5").string();
  K::io::TrainingCheckpoint cp;
  cp.position = K::detail::training_position(f.model).current();
  K::io::save_model_weights(f.model, path, cp);
  K::io::WeightsFile file = K::io::read_weights_file(path);
  edit(file);
  K::io::write_weights_file(path, file);
  return dir.string();
}

void drop_extra(K::io::WeightsFile& file, const std::string& key) {
  std::erase_if(file.extra, [&](const auto& entry) { return entry.first == key; });
}

void replace_extra(K::io::WeightsFile& file, const std::string& key, K::Tensor value) {
  for (auto& [name, t] : file.extra)
    if (name == key) t = std::move(value);
}

std::vector<Row> backup_rows(Fixture& f) {
  namespace C = K::callbacks;
  auto resume_from = [&f](const std::string& dir) {
    f.model.fit(f.batches, {.callbacks = {C::BackupAndRestore(dir)}, .verbose = 0});
  };
  const std::string no_step =
      backup_dir_with(f, "backup_no_step", [](auto& file) { drop_extra(file, "training_state_step"); });
  const std::string no_totals =
      backup_dir_with(f, "backup_no_totals", [](auto& file) { drop_extra(file, "training_state_totals_hi"); });
  const std::string short_totals = backup_dir_with(
      f, "backup_short_totals", [](auto& file) { replace_extra(file, "training_state_totals_lo", K::Tensor({3})); });
  const std::string vector_step = backup_dir_with(f, "backup_vector_step", [](auto& file) {
    replace_extra(file, "training_state_step", K::Tensor::from_vector({2}, std::vector<std::int64_t>{1, 2}));
  });
  const std::string empty_lr =
      backup_dir_with(f, "backup_empty_lr", [](auto& file) { file.optimizer_vars.at(1) = K::Tensor({0}); });
  const std::string no_state = backup_dir_with(f, "backup_plain", [](auto& file) { file.extra.clear(); });
  return {
      {"BackupAndRestore: training_state_step missing",
       [=] { resume_from(no_step); },
       Kind::IO,
       {"kerascpp/training_state_step", "missing"},
       f.weights_unchanged()},
      {"BackupAndRestore: training_state_totals_hi missing",
       [=] { resume_from(no_totals); },
       Kind::IO,
       {"kerascpp/training_state_totals_hi"},
       f.weights_unchanged()},
      {"BackupAndRestore: totals of the wrong length",
       [=] { resume_from(short_totals); },
       Kind::IO,
       {"training_state_totals"},
       f.weights_unchanged()},
      {"BackupAndRestore: non-scalar step",
       [=] { resume_from(vector_step); },
       Kind::IO,
       {"kerascpp/training_state_step"},
       f.weights_unchanged()},
      {"BackupAndRestore: learning rate of shape (0,)",
       [=] { resume_from(empty_lr); },
       Kind::IO,
       {"optimizer/vars/1"},
       f.weights_unchanged()},
      {"BackupAndRestore: plain weights file as the backup",
       [=] { resume_from(no_state); },
       Kind::IO,
       {"BackupAndRestore", "no training state"}},
  };
}

}  // namespace

TEST_CASE("bad inputs: every row raises its error category and names the culprit") {
  Fixture f;
  std::vector<Row> rows;
  for (auto* group : {&layer_and_tensor_rows, &optimizer_rows, &strategy_and_env_rows})
    for (auto& r : (*group)()) rows.push_back(std::move(r));
  for (auto* group : {&training_rows, &dataset_rows, &callback_rows, &weights_file_rows, &backup_rows})
    for (auto& r : (*group)(f)) rows.push_back(std::move(r));
  CHECK(rows.size() >= 100);
  MESSAGE("bad-input table: " << rows.size() << " rows");
  for (const Row& row : rows) {
    CAPTURE(row.name);
    run_row(row, [&f] { f.snapshot = weights_of(f.model); });
  }
  // After every failure the model still trains and predicts.
  auto history = f.model.fit(f.batches, {.epochs = 1, .verbose = 0});
  CHECK(history.history["loss"].size() == 1);
}

using test_scopes::CerrCapture;  // for the warning rows

TEST_CASE("bad inputs: steps beyond the data warn like Keras 3 and end the epoch early") {
  // Keras 3.x, 10 rows in batches of 2 (5 batches), fit(epochs=3, steps_per_epoch=3): epochs of 3,
  // 2 (with the "ran out of data" warning) and 3 steps, 8 optimizer iterations in all.
  K::Model m = built_classifier("warn_model");
  const std::int64_t start = m.optimizer().iterations();
  auto data = K::Dataset::from_tensor_slices(ramp({10, 4}), labels(10)).batch(2);
  CerrCapture capture;
  m.fit(data, {.epochs = 3, .steps_per_epoch = 3, .verbose = 0});
  CHECK(m.optimizer().iterations() - start == 8);
  CHECK(capture.text.str().find("Your input ran out of data; interrupting training") != std::string::npos);
  CHECK(capture.text.str().find("warn_model") != std::string::npos);

  capture.text.str("");
  m.evaluate(data, {.steps = 8, .verbose = 0});
  CHECK(capture.text.str().find("ran out of data") != std::string::npos);
  capture.text.str("");
  CHECK(m.predict(data, {.steps = 8}).dim(0) == 10);
  CHECK(capture.text.str().find("ran out of data") != std::string::npos);

  // Within the data: no warning.
  capture.text.str("");
  m.fit(data, {.epochs = 1, .steps_per_epoch = 5, .verbose = 0});
  m.evaluate(data, {.steps = 5, .verbose = 0});
  CHECK(capture.text.str().find("ran out of data") == std::string::npos);
}

TEST_CASE("bad inputs: validation_steps limits each validation") {
  K::Model m = built_classifier("val_steps_model");
  auto data = K::Dataset::from_tensor_slices(ramp({10, 4}), labels(10)).batch(2);
  int val_batches = 0;
  struct CountTest : K::callbacks::Callback {
    int* n;
    explicit CountTest(int* c) : n(c) {}
    void on_test_batch_end(std::int64_t, const K::Logs&) override { ++*n; }
  };
  m.fit(data, {.epochs = 1,
               .validation_data = data,
               .validation_steps = 2,
               .callbacks = {CountTest(&val_batches)},
               .verbose = 0});
  CHECK(val_batches == 2);
}

TEST_CASE("bad inputs: EarlyStopping/ReduceLROnPlateau counts and factors") {
  namespace C = K::callbacks;
  const std::vector<Row> rows = {
      {"EarlyStopping patience -1",
       [] { (void)C::EarlyStopping({.patience = -1}); },
       Kind::Value,
       {"EarlyStopping", "patience", "-1"}},
      {"EarlyStopping start_from_epoch -2",
       [] { (void)C::EarlyStopping({.start_from_epoch = -2}); },
       Kind::Value,
       {"EarlyStopping", "start_from_epoch", "-2"}},
      {"ReduceLROnPlateau patience -1",
       [] { (void)C::ReduceLROnPlateau({.patience = -1}); },
       Kind::Value,
       {"ReduceLROnPlateau", "patience", "-1"}},
      {"ReduceLROnPlateau factor 0",
       [] { (void)C::ReduceLROnPlateau({.factor = 0}); },
       Kind::Value,
       {"ReduceLROnPlateau", "factor", "0"}},
      {"ReduceLROnPlateau factor NaN",
       [] { (void)C::ReduceLROnPlateau({.factor = kNaN}); },
       Kind::Value,
       {"ReduceLROnPlateau", "factor", "nan"}},
      {"ReduceLROnPlateau min_lr -1",
       [] { (void)C::ReduceLROnPlateau({.min_lr = -1}); },
       Kind::Value,
       {"ReduceLROnPlateau", "min_lr", "-1"}},
      {"ReduceLROnPlateau cooldown -1",
       [] { (void)C::ReduceLROnPlateau({.cooldown = -1}); },
       Kind::Value,
       {"ReduceLROnPlateau", "cooldown", "-1"}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.name);
    run_row(row, [] {});
  }
}
