// Keras 3's Adamax, Adadelta, Ftrl, Lion, Lamb and ScheduleFreeAdamW, and the options common to every optimizer
// (weight_decay, clipvalue, loss_scale_factor, gradient_accumulation_steps, use_ema): 20 steps on
// fixed gradients match a double-precision reference of Keras' formulas written out here; bad
// options are refused; the slots (EMA and accumulators included) survive a .weights.h5 round trip;
// 2 mirrored CPU replicas equal one device. Keras itself: tests/python/test_optimizer_steps.py.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>

#include "kerascpp/kerascpp.hpp"
#include "mirrored_fixture.hpp"
#include "optimizer_steps.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace O = kerascpp::optimizers;

using mirrored_fixture::max_abs_diff;
using namespace optimizer_steps;

namespace {

using Vec = std::vector<double>;

// kSteps steps of `step(w, g, t)` (t from 1) on the fixed problem, in double.
Vec reference(const std::function<void(Vec& w, const Vec& g, int t)>& step) {
  Vec w(kSize);
  for (int i = 0; i < kSize; ++i) w[static_cast<std::size_t>(i)] = initial_at(i);
  for (int t = 0; t < kSteps; ++t) {
    Vec g(kSize);
    for (int i = 0; i < kSize; ++i) g[static_cast<std::size_t>(i)] = grad_at(i, t);
    step(w, g, t + 1);
  }
  return w;
}

Vec adamax_reference(double lr, double b1, double b2, double eps) {
  Vec m(kSize, 0.0), u(kSize, 0.0);
  return reference([&](Vec& w, const Vec& g, int t) {
    for (std::size_t i = 0; i < w.size(); ++i) {
      m[i] += (g[i] - m[i]) * (1 - b1);
      u[i] = std::max(b2 * u[i], std::fabs(g[i]));
      w[i] -= lr * m[i] / ((1 - std::pow(b1, t)) * (u[i] + eps));
    }
  });
}

Vec adadelta_reference(double lr, double rho, double eps) {
  Vec a(kSize, 0.0), d(kSize, 0.0);
  return reference([&](Vec& w, const Vec& g, int) {
    for (std::size_t i = 0; i < w.size(); ++i) {
      a[i] = rho * a[i] + (1 - rho) * g[i] * g[i];
      const double delta = -std::sqrt(d[i] + eps) * g[i] / std::sqrt(a[i] + eps);
      d[i] = rho * d[i] + (1 - rho) * delta * delta;
      w[i] += lr * delta;
    }
  });
}

Vec ftrl_reference(double lr, const O::FtrlOptions& o) {
  Vec n(kSize, o.initial_accumulator_value), z(kSize, 0.0);
  const double p = -o.learning_rate_power, l2 = o.l2_regularization_strength + o.beta / (2 * lr);
  return reference([&](Vec& w, const Vec& g, int) {
    for (std::size_t i = 0; i < w.size(); ++i) {
      const double n_new = n[i] + g[i] * g[i];
      z[i] += g[i] + 2 * o.l2_shrinkage_regularization_strength * w[i] -
              (std::pow(n_new, p) - std::pow(n[i], p)) / lr * w[i];
      const double l1 = o.l1_regularization_strength;
      w[i] = (std::clamp(z[i], -l1, l1) - z[i]) / (std::pow(n_new, p) / lr + 2 * l2);
      n[i] = n_new;
    }
  });
}

// lr(t): the rate at step t (from 1); a decaying one, so that ± steps of one size cannot cancel.
Vec lion_reference(const std::function<double(int)>& lr, double b1, double b2) {
  Vec m(kSize, 0.0);
  return reference([&](Vec& w, const Vec& g, int t) {
    for (std::size_t i = 0; i < w.size(); ++i) {
      const double c = b1 * m[i] + (1 - b1) * g[i];
      w[i] -= lr(t) * (c > 0 ? 1.0 : (c < 0 ? -1.0 : 0.0));
      m[i] = b2 * m[i] + (1 - b2) * g[i];
    }
  });
}

Vec lamb_reference(double lr, double b1, double b2, double eps) {
  Vec m(kSize, 0.0), v(kSize, 0.0);
  return reference([&](Vec& w, const Vec& g, int t) {
    Vec d(w.size());
    double w_sq = 0, d_sq = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      m[i] += (g[i] - m[i]) * (1 - b1);
      v[i] += (g[i] * g[i] - v[i]) * (1 - b2);
      d[i] = (m[i] / (1 - std::pow(b1, t))) / (std::sqrt(v[i] / (1 - std::pow(b2, t))) + eps);
      w_sq += w[i] * w[i];
      d_sq += d[i] * d[i];
    }
    const double ratio = w_sq > 0 && d_sq > 0 ? std::sqrt(w_sq) / std::sqrt(d_sq) : 1.0;
    for (std::size_t i = 0; i < w.size(); ++i) w[i] -= ratio * lr * d[i];
  });
}

Vec schedule_free_reference(double lr, double b1, double b2, double eps, int warmup) {
  Vec z, v(kSize, 0.0);
  for (int i = 0; i < kSize; ++i) z.push_back(initial_at(i));  // Keras' momentum starts as the variable
  return reference([&](Vec& w, const Vec& g, int t) {
    const double lr_t = warmup > 0 ? lr * std::min(double(t) / warmup, 1.0) : lr, c = 1.0 / t;
    for (std::size_t i = 0; i < w.size(); ++i) {
      v[i] += (g[i] * g[i] - v[i]) * (1 - b2);
      const double z_old = z[i];
      z[i] -= lr_t * g[i] / (std::sqrt(v[i] / (1 - std::pow(b2, t))) + eps);
      const double x_old = (w[i] - (1 - b1) * z_old) / b1;
      w[i] = (1 - b1) * z[i] + b1 * ((1 - c) * x_old + c * z[i]);
    }
  });
}

// Keras' base_optimizer around SGD with momentum: g / loss_scale_factor; accumulated over
// `accumulate` steps (their mean applied on every accumulate-th); clipped to ±clipvalue; decay
// w −= w·wd·lr; the step; the EMA (momentum 0 until the first update), copied into w when Keras'
// iteration count (in whole accumulation groups) + 1 is a multiple of `overwrite`. Returns the weights and the EMA.
struct OptionsResult {
  Vec w, ema;
};
OptionsResult sgd_options_reference(double lr, double momentum, double scale, int accumulate, double clipvalue,
                                    double wd, double ema_momentum, int overwrite) {
  Vec velocity(kSize, 0.0), acc(kSize, 0.0), ema(kSize, 0.0);
  Vec w = reference([&](Vec& w, const Vec& g_in, int t) {
    Vec g = g_in;
    for (double& x : g) x /= scale;
    const bool update = t % accumulate == 0;
    if (update) {
      for (std::size_t i = 0; i < g.size(); ++i) {
        g[i] = std::clamp((g[i] + acc[i]) / accumulate, -clipvalue, clipvalue);
        acc[i] = 0;
        w[i] -= w[i] * wd * lr;
        velocity[i] = momentum * velocity[i] - lr * g[i];
        w[i] += velocity[i];
      }
    } else {
      for (std::size_t i = 0; i < g.size(); ++i) acc[i] += g[i];
    }
    const int updates = (t - 1) / accumulate;  // Keras' optimizer.iterations counts whole groups
    const double m = updates == 0 ? 0.0 : ema_momentum;
    for (std::size_t i = 0; i < w.size(); ++i) ema[i] = m * ema[i] + (1 - m) * w[i];
    if ((updates + 1) % overwrite == 0) w = ema;
  });
  return {w, ema};
}

}  // namespace

TEST_CASE("Adamax, Adadelta, Ftrl, Lion, Lamb, ScheduleFreeAdamW: 20 steps match Keras 3's update rules") {
  SUBCASE("Adamax") {
    O::Adamax opt(0.02, {.beta_1 = 0.8, .beta_2 = 0.95, .epsilon = 1e-4});
    check_close(run_optimizer(opt), adamax_reference(0.02, 0.8, 0.95, 1e-4));
  }
  SUBCASE("Adadelta") {
    O::Adadelta opt(1.0, {.rho = 0.9, .epsilon = 1e-4});
    check_close(run_optimizer(opt), adadelta_reference(1.0, 0.9, 1e-4));
  }
  SUBCASE("Ftrl, regularized") {
    const O::FtrlOptions o{.initial_accumulator_value = 0.2,
                           .l1_regularization_strength = 0.01,
                           .l2_regularization_strength = 0.02,
                           .l2_shrinkage_regularization_strength = 0.01,
                           .beta = 0.1};
    O::Ftrl opt(0.1, o);
    check_close(run_optimizer(opt), ftrl_reference(0.1, o));
  }
  SUBCASE("Ftrl, another learning_rate_power") {
    const O::FtrlOptions o{.learning_rate_power = -0.3};
    O::Ftrl opt(0.2, o);
    check_close(run_optimizer(opt), ftrl_reference(0.2, o));
  }
  SUBCASE("Lion") {
    O::Lion opt(O::schedules::ExponentialDecay(0.02, 5, 0.5), {.beta_1 = 0.8, .beta_2 = 0.95});
    check_close(run_optimizer(opt),
                lion_reference([](int t) { return 0.02 * std::pow(0.5, (t - 1) / 5.0); }, 0.8, 0.95));
  }
  SUBCASE("ScheduleFreeAdamW") {
    O::ScheduleFreeAdamW opt(0.05, {.beta_1 = 0.85, .beta_2 = 0.99, .epsilon = 1e-6});
    check_close(run_optimizer(opt), schedule_free_reference(0.05, 0.85, 0.99, 1e-6, 0));
  }
  SUBCASE("ScheduleFreeAdamW with warmup") {
    O::ScheduleFreeAdamW opt(0.05, {.warmup_steps = 5});
    check_close(run_optimizer(opt), schedule_free_reference(0.05, 0.9, 0.999, 1e-8, 5));
  }
  SUBCASE("Lamb") {
    O::Lamb opt(0.01, {.beta_1 = 0.85, .beta_2 = 0.99, .epsilon = 1e-5});
    check_close(run_optimizer(opt), lamb_reference(0.01, 0.85, 0.99, 1e-5));
  }
}

TEST_CASE("Keras' common options: loss_scale_factor, accumulation, clipvalue, weight_decay and EMA in Keras' order") {
  O::SGD opt(0.05, {.momentum = 0.9});
  opt.set_gradient_clipping({.clipvalue = 0.3});
  opt.set_common_options({.weight_decay = 0.1,
                          .use_ema = true,
                          .ema_momentum = 0.8,
                          .ema_overwrite_frequency = 5,
                          .loss_scale_factor = 4.0,
                          .gradient_accumulation_steps = 2});
  CHECK(opt.loss_scale() == 4.f);
  const auto want = sgd_options_reference(0.05, 0.9, 4.0, 2, 0.3, 0.1, 0.8, 5);
  check_close(run_optimizer(opt), want.w);
  // Keras' order of the optimizer's variables: EMA averages, gradient accumulators, momentum.
  auto slots = opt.slot_tensors(0);
  REQUIRE(slots.size() == 3);
  auto ema = slots[0]->to_vector();
  for (std::size_t i = 0; i < ema.size(); ++i) CHECK(std::fabs(ema[i] - want.ema[i]) <= 1e-5);
  for (float a : slots[1]->to_vector()) CHECK(a == 0.f);  // step 20 applied (and reset) the accumulated gradients
}

TEST_CASE("Keras' common options: each one changes the run, and bad values are refused") {
  auto run_with = [](O::OptimizerOptions o) {
    O::Lion opt(0.05);
    opt.set_common_options(o);
    return run_optimizer(opt);
  };
  const auto plain = run_with({});
  auto differs = [&](const std::vector<float>& got) {
    double diff = 0;
    for (std::size_t i = 0; i < got.size(); ++i) diff = std::max(diff, std::fabs(double(got[i]) - plain[i]));
    return diff > 1e-3;
  };
  CHECK(differs(run_with({.weight_decay = 0.5})));
  CHECK(differs(run_with({.use_ema = true, .ema_overwrite_frequency = 3})));
  CHECK(differs(run_with({.gradient_accumulation_steps = 3})));
  O::Adam adam(0.05);
  adam.set_gradient_clipping({.clipvalue = 0.05});
  O::Adam unclipped(0.05);
  const auto a = run_optimizer(adam), b = run_optimizer(unclipped);
  double diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
  CHECK(diff > 1e-3);

  O::Adam bad(1e-3);
  CHECK_THROWS_WITH_AS(bad.set_common_options({.weight_decay = -1.0}), doctest::Contains("weight_decay"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(bad.set_common_options({.use_ema = true, .ema_momentum = 1.5}),
                       doctest::Contains("ema_momentum"), K::ValueError);
  CHECK_THROWS_WITH_AS(bad.set_common_options({.use_ema = true, .ema_overwrite_frequency = 0}),
                       doctest::Contains("ema_overwrite_frequency"), K::ValueError);
  CHECK_THROWS_WITH_AS(bad.set_common_options({.loss_scale_factor = 0.0}), doctest::Contains("loss_scale_factor"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(bad.set_common_options({.gradient_accumulation_steps = 1}),
                       doctest::Contains("gradient_accumulation_steps"), K::ValueError);
  CHECK_THROWS_WITH_AS(bad.set_gradient_clipping({.clipnorm = 1.0, .clipvalue = 1.0}), doctest::Contains("only one"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(bad.set_gradient_clipping({.clipvalue = -1.0}), doctest::Contains("clipvalue"), K::ValueError);
  O::AdamW adamw;
  CHECK_THROWS_WITH_AS(adamw.set_common_options({.weight_decay = 0.1}), doctest::Contains("AdamWOptions"),
                       K::ValueError);
}

TEST_CASE("Adamax, Adadelta, Ftrl, Lion, Lamb, ScheduleFreeAdamW: Keras defaults, names, and bad options refused") {
  CHECK(O::AdamaxOptions{}.beta_2 == 0.999);
  CHECK(O::AdadeltaOptions{}.rho == 0.95);
  CHECK(O::FtrlOptions{}.learning_rate_power == -0.5);
  CHECK(O::FtrlOptions{}.initial_accumulator_value == 0.1);
  CHECK(O::LionOptions{}.beta_2 == 0.99);
  CHECK(O::LambOptions{}.epsilon == 1e-7);
  for (auto [name, cls, slots] :
       {std::tuple{"adamax", "Adamax", 2}, std::tuple{"adadelta", "Adadelta", 2}, std::tuple{"ftrl", "Ftrl", 2},
        std::tuple{"lion", "Lion", 1}, std::tuple{"lamb", "Lamb", 2},
        std::tuple{"schedule_free_adamw", "ScheduleFreeAdamW", 2}}) {
    CAPTURE(name);
    O::OptimizerRef named(name);
    CHECK(named->class_name() == cls);
    CHECK(named->slots_per_variable() == slots);
    CHECK(named->learning_rate() == doctest::Approx(std::string(cls) == "ScheduleFreeAdamW" ? 0.0025 : 0.001));
  }
  CHECK_THROWS_WITH_AS((void)O::Adamax(1e-3, {.beta_1 = 1.0}), doctest::Contains("Adamax: beta_1"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::Adadelta(1e-3, {.epsilon = 0}), doctest::Contains("Adadelta: epsilon"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::Ftrl(1e-3, {.learning_rate_power = 0.5}), doctest::Contains("learning_rate_power"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::Ftrl(1e-3, {.initial_accumulator_value = -1}),
                       doctest::Contains("initial_accumulator_value"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::Lion(1e-3, {.beta_1 = 0}), doctest::Contains("Lion: beta_1"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::Lamb(1e-3, {.beta_2 = 1.0}), doctest::Contains("Lamb: beta_2"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::ScheduleFreeAdamW(1e-3, {.beta_1 = 0}), doctest::Contains("ScheduleFreeAdamW: beta_1"),
                       K::ValueError);
  O::Ftrl zero_rate(0.0);
  CHECK_THROWS_WITH_AS(run_optimizer(zero_rate), doctest::Contains("divides"), K::ValueError);
  // A serialization kerascpp cannot rebuild is refused by name.
  CHECK_THROWS_WITH_AS(O::deserialize(R"({"class_name": "Muon", "config": {"learning_rate": 0.1}})"),
                       doctest::Contains("Muon"), K::ValueError);
}

TEST_CASE("Lamb with EMA and gradient accumulation: the state survives save_weights/load_weights bit-equal") {
  kerascpp_test::TempDir tmp;
  auto d = mirrored_fixture::make_data(64);
  auto batches = [&] { return K::Dataset::from_tensor_slices(d.x, d.y).batch(16); };
  auto compile = [&](K::Model& m) {
    O::Lamb lamb(0.01);
    lamb.set_common_options({.use_ema = true, .gradient_accumulation_steps = 3});
    m.compile({.optimizer = lamb, .loss = "sparse_categorical_crossentropy"});
  };
  K::Model a = mirrored_fixture::small_convnet(false);
  compile(a);
  a.fit(batches(), {.epochs = 1, .verbose = 0});  // 4 steps: one update, one gradient accumulated
  const std::string path = (tmp.path / "lamb.weights.h5").string();
  a.save_weights(path);

  K::Model b = mirrored_fixture::small_convnet(false);
  compile(b);
  b.fit(batches(), {.epochs = 1, .steps_per_epoch = 1, .verbose = 0});  // other state, to be overwritten
  b.load_weights(path);
  auto sa = a.optimizer().slot_tensors(0), sb = b.optimizer().slot_tensors(0);
  // Per trainable variable: an average, an accumulator, then momentum and velocity.
  REQUIRE(sa.size() == 4 * a.trainable_variables().size());
  REQUIRE(sa.size() == sb.size());
  bool accumulated = false;
  for (std::size_t i = 0; i < a.trainable_variables().size(); ++i)
    for (float x : sa[a.trainable_variables().size() + i]->to_vector()) accumulated = accumulated || x != 0.f;
  CHECK(accumulated);
  for (std::size_t i = 0; i < sa.size(); ++i) CHECK(std::memcmp(sa[i]->raw(), sb[i]->raw(), sa[i]->nbytes()) == 0);

  a.fit(batches(), {.epochs = 1, .verbose = 0});
  b.fit(batches(), {.epochs = 1, .verbose = 0});
  auto wa = a.get_weights(), wb = b.get_weights();
  REQUIRE(wa.size() == wb.size());
  for (std::size_t i = 0; i < wa.size(); ++i) CHECK(std::memcmp(wa[i].raw(), wb[i].raw(), wa[i].nbytes()) == 0);
}

TEST_CASE("The newer optimizers and the common options: 2 mirrored CPU replicas match one device") {
  const std::vector<std::function<O::OptimizerRef()>> makers = {
      [] { return O::OptimizerRef(O::Adamax(2e-3)); },
      [] { return O::OptimizerRef(O::Adadelta(1.0)); },
      [] { return O::OptimizerRef(O::Ftrl(0.05)); },
      [] {
        O::Lion lion(1e-3);
        lion.set_gradient_clipping({.clipvalue = 0.5});
        lion.set_common_options(
            {.weight_decay = 0.01, .use_ema = true, .ema_overwrite_frequency = 4, .gradient_accumulation_steps = 2});
        return O::OptimizerRef(lion);
      },
      [] { return O::OptimizerRef(O::Lamb(5e-3)); },
      [] { return O::OptimizerRef(O::ScheduleFreeAdamW(2e-3)); },
  };
  for (std::size_t which = 0; which < makers.size(); ++which) {
    CAPTURE(which);
    auto one = train(K::distribute::OneDeviceStrategy("cpu:0"), makers[which]());
    K::Model mirrored = mirrored_fixture::small_convnet(true);
    auto many = train(K::distribute::MirroredStrategy<>(2), makers[which](), &mirrored);
    CHECK(max_abs_diff(one, many) <= 1e-5);
    for (K::Variable* v : mirrored.variables())
      for (int r = 1; r < v->num_copies(); ++r)
        CHECK(std::memcmp(v->value(0).raw(), v->value(r).raw(), v->value(0).nbytes()) == 0);
    K::Model fresh = mirrored_fixture::small_convnet(true);
    CHECK(max_abs_diff(fresh.get_weights(), one) > 1e-4);
  }
}
