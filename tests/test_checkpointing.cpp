// Checkpoints are strategy-independent and callbacks reject bad templates before training.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>

#include "kerascpp/kerascpp.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace fs = std::filesystem;

namespace {

K::Model make_model() {
  K::set_random_seed(5);
  auto in = K::Input({4, 4, 1});
  auto x = K::layers::Conv2D(3, 3, {.padding = K::Padding::same, .use_bias = false})(in);
  // Synchronized BN: per-replica statistics would (legitimately) train differently on 1 and 2 replicas.
  x = K::layers::BatchNormalization({.synchronized = true})(x);
  x = K::layers::Flatten()(x);
  auto out = K::layers::Dense(2, {.activation = "softmax"})(x);
  return K::Model(in, out);
}

K::Dataset data(std::int64_t n) {
  K::Rng rng(3);
  K::Tensor x({n, 4, 4, 1}), y({n}, K::DType::int32);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(rng.normal());
  for (std::int64_t i = 0; i < n; ++i) y.data<std::int32_t>()[i] = static_cast<std::int32_t>(i % 2);
  return K::Dataset::from_tensor_slices(x, y);
}

void compile(K::Model& m, int replicas) {
  m.compile({.optimizer = K::optimizers::Adam(1e-2),
             .loss = "sparse_categorical_crossentropy",
             .metrics = {"accuracy"},
             .distribute = K::distribute::MirroredStrategy<>(replicas)});
}

}  // namespace

TEST_CASE("checkpoint: saved under N replicas, loaded under M, predictions and training continue equally") {
  kerascpp_test::TempDir tmp;
  const fs::path& dir = tmp.path;
  for (auto [save_r, load_r] : {std::pair{2, 1}, std::pair{1, 2}}) {
    CAPTURE(save_r);
    CAPTURE(load_r);
    K::Model a = make_model();
    compile(a, save_r);
    a.fit(data(40).batch(8), {.epochs = 2, .verbose = 0});
    std::string path = (dir / "m.weights.h5").string();
    a.save_weights(path);

    K::Model b = make_model();
    compile(b, load_r);
    b.load_weights(path);
    auto probe = data(10).batch(10);
    K::Tensor pa = a.predict(probe), pb = b.predict(probe);
    CHECK(std::memcmp(pa.raw(), pb.raw(), pa.nbytes()) == 0);
    CHECK(a.optimizer().iterations() == b.optimizer().iterations());
    // Training continues identically (to float tolerance between replica counts).
    a.fit(data(40).batch(8), {.epochs = 1, .verbose = 0});
    b.fit(data(40).batch(8), {.epochs = 1, .verbose = 0});
    auto wa = a.get_weights(), wb = b.get_weights();
    for (std::size_t i = 0; i < wa.size(); ++i) {
      auto va = wa[i].to_vector(), vb = wb[i].to_vector();
      for (std::size_t j = 0; j < va.size(); ++j) CHECK(va[j] == doctest::Approx(vb[j]).epsilon(1e-4));
    }
    for (K::Variable* v : b.variables())
      for (int r = 1; r < v->num_copies(); ++r)
        CHECK(std::memcmp(v->value(0).raw(), v->value(r).raw(), v->value(0).nbytes()) == 0);
  }
}

TEST_CASE("checkpoint: loading another architecture fails and leaves the model untouched") {
  kerascpp_test::TempDir tmp;
  const fs::path& dir = tmp.path;
  K::Model a = make_model();
  compile(a, 1);
  std::string path = (dir / "a.weights.h5").string();
  a.save_weights(path);
  K::set_random_seed(9);
  auto in = K::Input({4, 4, 1});
  auto out = K::layers::Dense(2)(K::layers::Flatten()(in));
  K::Model other(in, out);
  compile(other, 1);
  auto before = other.get_weights();
  CHECK_THROWS_WITH_AS(other.load_weights(path), doctest::Contains("dense"), K::Error);
  auto after = other.get_weights();
  for (std::size_t i = 0; i < before.size(); ++i)
    CHECK(std::memcmp(before[i].raw(), after[i].raw(), before[i].nbytes()) == 0);
  CHECK_THROWS_WITH_AS(other.load_weights((dir / "missing.weights.h5").string()), doctest::Contains("missing"),
                       K::Error);
  CHECK_THROWS_WITH_AS(a.save_weights((dir / "no_suffix.h5").string()), doctest::Contains(".weights.h5"), K::Error);
}

TEST_CASE("ModelCheckpoint: templates, save_best_only, and bad keys fail before training") {
  kerascpp_test::TempDir tmp;
  const fs::path& dir = tmp.path;
  K::Logs logs;
  logs.set("loss", 0.5);
  logs.set("val_loss", 0.123456);
  CHECK(K::callbacks::format_filepath("e{epoch:02d}-{val_loss:.4f}.weights.h5", 2, std::nullopt, logs) ==
        "e03-0.1235.weights.h5");
  CHECK_THROWS_WITH_AS(K::callbacks::format_filepath("{nope}.weights.h5", 0, std::nullopt, logs),
                       doctest::Contains("unknown key 'nope'"), K::Error);

  K::Model m = make_model();
  compile(m, 1);
  auto bad = K::callbacks::ModelCheckpoint((dir / "{unknown_key}.weights.h5").string());
  CHECK_THROWS_WITH_AS(m.fit(data(16).batch(8), {.epochs = 1, .callbacks = {bad}, .verbose = 0}),
                       doctest::Contains("unknown_key"), K::Error);
  CHECK(fs::is_empty(dir));  // nothing half-written

  auto best = std::make_shared<K::callbacks::ModelCheckpoint>(
      (dir / "best.weights.h5").string(),
      K::callbacks::ModelCheckpointOptions{.monitor = "loss", .save_best_only = true});
  auto every = std::make_shared<K::callbacks::ModelCheckpoint>((dir / "sub" / "e{epoch}.weights.h5").string());
  m.fit(data(16).batch(8), {.epochs = 3, .callbacks = {best, every}, .verbose = 0});
  CHECK(fs::exists(dir / "best.weights.h5"));
  for (int e = 1; e <= 3; ++e) CHECK(fs::exists(dir / "sub" / ("e" + std::to_string(e) + ".weights.h5")));
  CHECK_THROWS_AS(K::callbacks::ModelCheckpoint("/proc/forbidden/x.weights.h5").on_epoch_end(0, logs), K::Error);
}

TEST_CASE("callbacks: EarlyStopping restores best weights, ReduceLROnPlateau and LearningRateScheduler change lr") {
  K::Model m = make_model();
  compile(m, 1);
  auto sched = std::make_shared<K::callbacks::LearningRateScheduler>(
      [](int epoch, double lr) { return epoch == 0 ? 0.05 : lr * 0.5; });
  auto h = m.fit(data(16).batch(8), {.epochs = 3, .callbacks = {sched}, .verbose = 0});
  REQUIRE(h.history["learning_rate"].size() == 3);
  CHECK(h.history["learning_rate"][2] == doctest::Approx(0.0125));

  auto plateau = std::make_shared<K::callbacks::ReduceLROnPlateau>(
      K::callbacks::ReduceLROnPlateauOptions{.monitor = "loss", .factor = 0.5, .patience = 0, .min_delta = 1e9});
  m.optimizer().set_learning_rate(0.01);
  m.fit(data(16).batch(8), {.epochs = 2, .callbacks = {plateau}, .verbose = 0});
  // First epoch improves on +inf; the second cannot (min_delta is huge) and halves the rate once.
  CHECK(m.optimizer().learning_rate() == doctest::Approx(0.005));

  auto stop = std::make_shared<K::callbacks::EarlyStopping>(
      K::callbacks::EarlyStoppingOptions{.monitor = "loss", .min_delta = 1e9, .patience = 1});
  auto h2 = m.fit(data(16).batch(8), {.epochs = 10, .callbacks = {stop}, .verbose = 0});
  CHECK(h2.epoch.size() == 2);
  CHECK(stop->stopped_epoch() == 1);
}
