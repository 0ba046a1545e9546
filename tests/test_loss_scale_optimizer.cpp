// LossScaleOptimizer (Keras 3's dynamic loss scaling, TensorFlow's fixed scale): an overflowing
// step is skipped (weights, slots and iterations unchanged) and halves the scale, and training then
// matches an unscaled run bit for bit (power-of-two scales unscale exactly, penalties included);
// the scale doubles after dynamic_growth_steps finite steps; a fixed scale never changes; the
// inner optimizer clips the unscaled gradients; 2 CPU replicas equal one device, with an overflow
// on one replica's shard only; the state survives save_weights/load_weights; bad options are
// refused. Keras itself: tests/python/test_loss_scale.py.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "kerascpp/kerascpp.hpp"
#include "mirrored_fixture.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace O = kerascpp::optimizers;

using mirrored_fixture::max_abs_diff;

namespace {

constexpr std::int64_t kBatch = 8;

K::Model small_mlp() {
  K::set_random_seed(3);
  auto in = K::Input({4});
  auto x = K::layers::Dense(6, {.activation = "relu", .kernel_regularizer = K::regularizers::L2(0.01)})(in);
  return K::Model(in, K::layers::Dense(3)(x));  // linear, so a huge input overflows the gradients
}

struct Batch {
  K::Tensor x, y;
};

// Batch k of random examples; with `overflow` rows [first_huge, kBatch) hold 1e36, whose
// gradients (times any loss scale >= 1) overflow float32.
Batch batch(int k, bool overflow = false, std::int64_t first_huge = kBatch - 1) {
  K::Rng rng(100 + static_cast<std::uint64_t>(k));
  K::Tensor x({kBatch, 4}, K::DType::float32, K::Device{});
  K::Tensor y({kBatch, 3}, K::DType::float32, K::Device{});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(rng.normal());
  for (std::int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = static_cast<float>(rng.normal());
  if (overflow)
    for (std::int64_t i = first_huge * 4; i < x.numel(); ++i) x.data<float>()[i] = 1e36f;
  return {x, y};
}

void compile(K::Model& m, O::OptimizerRef opt, std::optional<K::distribute::Strategy> strategy = std::nullopt) {
  m.compile({.optimizer = std::move(opt), .loss = "mse", .distribute = strategy});
}

O::LossScaleOptimizer& lso(K::Model& m) { return dynamic_cast<O::LossScaleOptimizer&>(m.optimizer()); }

bool same_bits(const std::vector<K::Tensor>& a, const std::vector<K::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].nbytes() != b[i].nbytes() || std::memcmp(a[i].raw(), b[i].raw(), a[i].nbytes()) != 0) return false;
  return true;
}

}  // namespace

TEST_CASE("LossScaleOptimizer: an overflow skips the step and halves the scale; training then equals an unscaled run") {
  K::Model scaled = small_mlp(), plain = small_mlp();
  compile(scaled, O::LossScaleOptimizer(O::Adam(0.01)));
  compile(plain, O::Adam(0.01));
  CHECK(scaled.optimizer().class_name() == "LossScaleOptimizer");
  CHECK(scaled.optimizer().loss_scale() == 32768.f);  // Keras' default 2^15
  const auto before = scaled.get_weights();
  REQUIRE(same_bits(before, plain.get_weights()));

  const Batch huge = batch(0, true);
  scaled.train_on_batch(huge.x, huge.y);
  CHECK(same_bits(scaled.get_weights(), before));  // skipped: no variable changed
  CHECK(scaled.optimizer().iterations() == 0);     // nor the inner optimizer's iterations
  CHECK(scaled.optimizer().loss_scale() == 16384.f);
  CHECK(lso(scaled).step_counter() == 0);
  for (K::Tensor* slot : scaled.optimizer().slot_tensors(0))
    for (float v : slot->to_vector()) REQUIRE(v == 0.f);  // Adam's moments untouched

  for (int k = 1; k <= 5; ++k) {
    const Batch b = batch(k);
    const K::Logs ls = scaled.train_on_batch(b.x, b.y), lp = plain.train_on_batch(b.x, b.y);
    CHECK(ls["loss"] == lp["loss"]);  // the logged loss is the unscaled one, penalty included
  }
  // A power-of-two scale multiplies and divides every gradient (the L2 penalty's too) exactly.
  CHECK(same_bits(scaled.get_weights(), plain.get_weights()));
  CHECK(max_abs_diff(scaled.get_weights(), before) > 1e-3);
  CHECK(scaled.optimizer().iterations() == 5);
  CHECK(lso(scaled).step_counter() == 5);
  CHECK(scaled.optimizer().loss_scale() == 16384.f);
}

TEST_CASE("LossScaleOptimizer: the scale doubles after dynamic_growth_steps finite steps, halves on overflow") {
  K::Model m = small_mlp();
  compile(m, O::LossScaleOptimizer(O::SGD(0.05), {.initial_scale = 4, .dynamic_growth_steps = 3}));
  const float scales[] = {4, 4, 8, 8, 8, 16, 16};
  const int counters[] = {1, 2, 0, 1, 2, 0, 1};
  for (int k = 0; k < 7; ++k) {
    const Batch b = batch(k);
    m.train_on_batch(b.x, b.y);
    CAPTURE(k);
    CHECK(m.optimizer().loss_scale() == scales[k]);
    CHECK(lso(m).step_counter() == counters[k]);
  }
  const Batch huge = batch(7, true);
  m.train_on_batch(huge.x, huge.y);
  CHECK(m.optimizer().loss_scale() == 8.f);
  CHECK(lso(m).step_counter() == 0);
  CHECK(m.optimizer().iterations() == 7);
  for (int k = 8; k < 11; ++k) {
    const Batch b = batch(k);
    m.train_on_batch(b.x, b.y);
  }
  CHECK(m.optimizer().loss_scale() == 16.f);
  CHECK(m.optimizer().iterations() == 10);
}

TEST_CASE("LossScaleOptimizer: a fixed scale (TensorFlow's dynamic=False) never changes") {
  K::Model scaled = small_mlp(), plain = small_mlp();
  compile(scaled, O::LossScaleOptimizer(O::SGD(0.05, {.momentum = 0.9}),
                                        {.dynamic = false, .initial_scale = 128, .dynamic_growth_steps = 1}));
  compile(plain, O::SGD(0.05, {.momentum = 0.9}));
  for (int k = 0; k < 6; ++k) {
    const Batch b = batch(k);
    scaled.train_on_batch(b.x, b.y);
    plain.train_on_batch(b.x, b.y);
    CHECK(scaled.optimizer().loss_scale() == 128.f);
    CHECK(lso(scaled).step_counter() == 0);
  }
  CHECK(scaled.optimizer().iterations() == 6);
  CHECK(same_bits(scaled.get_weights(), plain.get_weights()));
}

TEST_CASE("LossScaleOptimizer: the inner optimizer clips the unscaled gradients (Keras' order)") {
  for (int global = 0; global < 2; ++global) {
    CAPTURE(global);
    const O::GradientClipping clip =
        global ? O::GradientClipping{.global_clipnorm = 0.05} : O::GradientClipping{.clipnorm = 0.05};
    O::Adam inner(0.01), alone(0.01);
    inner.set_gradient_clipping(clip);
    alone.set_gradient_clipping(clip);
    K::Model scaled = small_mlp(), plain = small_mlp(), unclipped = small_mlp();
    compile(scaled, O::LossScaleOptimizer(inner, {.initial_scale = 1024}));
    compile(plain, alone);
    compile(unclipped, O::Adam(0.01));
    for (int k = 0; k < 4; ++k) {
      const Batch b = batch(k);
      for (K::Model* m : {&scaled, &plain, &unclipped}) m->train_on_batch(b.x, b.y);
    }
    CHECK(same_bits(scaled.get_weights(), plain.get_weights()));
    CHECK(max_abs_diff(plain.get_weights(), unclipped.get_weights()) > 1e-4);  // the clipping mattered
  }
}

TEST_CASE("LossScaleOptimizer: 2 mirrored CPU replicas equal one device, an overflow on one replica skipping both") {
  auto run = [](K::distribute::Strategy strategy) {
    K::Model m = small_mlp();
    compile(m, O::LossScaleOptimizer(O::Adam(0.01), {.dynamic_growth_steps = 2}), strategy);
    for (int k = 0; k < 7; ++k) {
      // Step 3 overflows in rows 6..7 only: replica 1's shard under 2 replicas.
      const Batch b = batch(k, k == 3, 6);
      m.train_on_batch(b.x, b.y);
    }
    return m;
  };
  K::Model one = run(K::distribute::OneDeviceStrategy("cpu:0"));
  K::Model many = run(K::distribute::MirroredStrategy<>(2));
  CHECK(max_abs_diff(one.get_weights(), many.get_weights()) <= 1e-6);
  for (K::Model* m : {&one, &many}) {
    CHECK(m->optimizer().iterations() == 6);  // the overflow step skipped
    // From 2^15, growing every 2 finite steps: steps 0-1 -> 2^16, 2 -> counter 1, 3 (overflow)
    // -> 2^15 and counter 0, 4-5 -> 2^16, 6 -> counter 1.
    CHECK(m->optimizer().loss_scale() == 65536.f);
    CHECK(lso(*m).step_counter() == 1);
  }
  for (K::Variable* v : many.variables())
    for (int r = 1; r < v->num_copies(); ++r)
      CHECK(std::memcmp(v->value(0).raw(), v->value(r).raw(), v->value(0).nbytes()) == 0);
}

TEST_CASE("LossScaleOptimizer: scale, step counter and the inner state survive save_weights/load_weights") {
  kerascpp_test::TempDir tmp;
  auto make = [] {
    K::Model m = small_mlp();
    compile(m, O::LossScaleOptimizer(O::Adam(0.01), {.initial_scale = 256, .dynamic_growth_steps = 3}));
    return m;
  };
  K::Model a = make();
  for (int k = 0; k < 5; ++k) {
    const Batch b = batch(k, k == 1);
    a.train_on_batch(b.x, b.y);
  }
  REQUIRE(a.optimizer().loss_scale() == 256.f);  // halved at 1, doubled after 2-4
  REQUIRE(a.optimizer().iterations() == 4);
  const std::string path = tmp.file("lso.weights.h5");
  a.save_weights(path);

  K::Model b = make();
  const Batch other = batch(9);
  b.train_on_batch(other.x, other.y);  // other state, to be overwritten
  b.load_weights(path);
  CHECK(b.optimizer().loss_scale() == a.optimizer().loss_scale());
  CHECK(lso(b).step_counter() == lso(a).step_counter());
  CHECK(b.optimizer().iterations() == 4);
  auto sa = a.optimizer().slot_tensors(0), sb = b.optimizer().slot_tensors(0);
  REQUIRE(sa.size() == sb.size());
  for (std::size_t i = 0; i < sa.size(); ++i) CHECK(std::memcmp(sa[i]->raw(), sb[i]->raw(), sa[i]->nbytes()) == 0);
  for (int k = 5; k < 9; ++k) {
    const Batch x = batch(k);
    a.train_on_batch(x.x, x.y);
    b.train_on_batch(x.x, x.y);
  }
  CHECK(same_bits(a.get_weights(), b.get_weights()));
  CHECK(b.optimizer().loss_scale() == a.optimizer().loss_scale());
}

TEST_CASE("LossScaleOptimizer: delegates to the inner optimizer, copies it, and refuses bad options") {
  O::LossScaleOptimizer a(O::Adam(0.01));
  O::LossScaleOptimizer copy(a);
  a.set_learning_rate(0.5);
  CHECK(a.learning_rate() == doctest::Approx(0.5));
  CHECK(a.inner_optimizer().learning_rate() == doctest::Approx(0.5));
  CHECK(copy.learning_rate() == doctest::Approx(0.01));  // its own Adam
  a.set_gradient_clipping({.clipnorm = 1.0});
  CHECK(a.inner_optimizer().gradient_clipping().clipnorm == 1.0);
  CHECK(O::LossScaleOptimizer(O::Adam()).options().dynamic_growth_steps == 2000);

  CHECK_THROWS_WITH_AS((void)O::LossScaleOptimizer(O::Adam(), {.initial_scale = 0}),
                       doctest::Contains("LossScaleOptimizer: initial_scale"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::LossScaleOptimizer(O::Adam(), {.initial_scale = -2}), doctest::Contains("32768"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::LossScaleOptimizer(O::Adam(), {.initial_scale = std::nan("")}),
                       doctest::Contains("initial_scale"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::LossScaleOptimizer(O::Adam(), {.dynamic_growth_steps = 0}),
                       doctest::Contains("LossScaleOptimizer: dynamic_growth_steps must be >= 1"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::LossScaleOptimizer(O::LossScaleOptimizer(O::Adam()), O::LossScaleOptions{}),
                       doctest::Contains("twice"), K::ValueError);
}
