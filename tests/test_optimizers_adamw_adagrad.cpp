// AdamW and Adagrad follow Keras 3's update rules: 20 steps on a fixed variable and fixed gradients
// match a double-precision reference of keras/src/optimizers/{adamw,adagrad}.py written out here;
// bad options are refused; their slots survive a .weights.h5 round trip; 2 CPU replicas equal 1.
// Also clipnorm / global_clipnorm (Keras' base_optimizer clipping) on exact small cases and mirrored.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>

#include "kerascpp/kerascpp.hpp"
#include "mirrored_fixture.hpp"
#include "optimizer_steps.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;

using mirrored_fixture::max_abs_diff;
using namespace optimizer_steps;

namespace {

// keras/src/optimizers/adamw.py = adam.py + base_optimizer._apply_weight_decay, in double.
std::vector<double> adamw_reference(double lr, double wd, double b1, double b2, double eps) {
  std::vector<double> out;
  for (int i = 0; i < kSize; ++i) {
    double w = initial_at(i), m = 0, v = 0;
    for (int t = 0; t < kSteps; ++t) {
      w = w - w * wd * lr;  // decoupled decay with the plain learning rate
      double g = grad_at(i, t);
      double step = t + 1;
      double alpha = lr * std::sqrt(1 - std::pow(b2, step)) / (1 - std::pow(b1, step));
      m += (g - m) * (1 - b1);
      v += (g * g - v) * (1 - b2);
      w -= m * alpha / (std::sqrt(v) + eps);
    }
    out.push_back(w);
  }
  return out;
}

// keras/src/optimizers/adagrad.py, in double.
std::vector<double> adagrad_reference(double lr, double initial_accumulator, double eps) {
  std::vector<double> out;
  for (int i = 0; i < kSize; ++i) {
    double w = initial_at(i), acc = initial_accumulator;
    for (int t = 0; t < kSteps; ++t) {
      double g = grad_at(i, t);
      acc += g * g;
      w -= lr * g / std::sqrt(acc + eps);
    }
    out.push_back(w);
  }
  return out;
}

}  // namespace

TEST_CASE("AdamW: 20 steps match Keras 3's update rule (decoupled weight decay, then Adam)") {
  SUBCASE("defaults (weight_decay 0.004)") {
    K::optimizers::AdamW opt(0.01);
    check_close(run_optimizer(opt), adamw_reference(0.01, 0.004, 0.9, 0.999, 1e-7));
  }
  SUBCASE("strong decay, other betas") {
    K::optimizers::AdamW opt(0.05, {.weight_decay = 0.5, .beta_1 = 0.8, .beta_2 = 0.99, .epsilon = 1e-6});
    check_close(run_optimizer(opt), adamw_reference(0.05, 0.5, 0.8, 0.99, 1e-6));
  }
  SUBCASE("decay really differs from plain Adam") {
    K::optimizers::AdamW decayed(0.05, {.weight_decay = 0.5});
    K::optimizers::Adam plain(0.05);
    auto a = run_optimizer(decayed), b = run_optimizer(plain);
    double diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::fabs(double(a[i]) - double(b[i])));
    CHECK(diff > 1e-3);
  }
}

TEST_CASE("Adagrad: 20 steps match Keras 3's update rule, accumulator starting at initial_accumulator_value") {
  SUBCASE("defaults") {
    K::optimizers::Adagrad opt;
    auto got = run_optimizer(opt);
    auto want = adagrad_reference(0.001, 0.1, 1e-7);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::fabs(double(got[i]) - want[i]) <= 1e-5);
  }
  SUBCASE("larger rate, other accumulator") {
    K::optimizers::Adagrad opt(0.1, {.initial_accumulator_value = 0.5, .epsilon = 1e-5});
    check_close(run_optimizer(opt), adagrad_reference(0.1, 0.5, 1e-5));
  }
  SUBCASE("zero initial accumulator") {
    K::optimizers::Adagrad opt(0.1, {.initial_accumulator_value = 0.0});
    check_close(run_optimizer(opt), adagrad_reference(0.1, 0.0, 1e-7));
  }
}

TEST_CASE("AdamW and Adagrad: Keras names, defaults and slot counts") {
  K::optimizers::OptimizerRef adamw("adamw"), adagrad("adagrad");
  CHECK(adamw->class_name() == "AdamW");
  CHECK(adamw->slots_per_variable() == 2);
  CHECK(adamw->learning_rate() == doctest::Approx(0.001));
  CHECK(adagrad->class_name() == "Adagrad");
  CHECK(adagrad->slots_per_variable() == 1);
  CHECK(adagrad->learning_rate() == doctest::Approx(0.001));
  K::optimizers::AdamWOptions wo;
  CHECK(wo.weight_decay == 0.004);
  K::optimizers::AdagradOptions ao;
  CHECK(ao.initial_accumulator_value == 0.1);
  CHECK(ao.epsilon == 1e-7);
  CHECK_THROWS_WITH_AS(K::optimizers::OptimizerRef("adagrd"), doctest::Contains("\"adagrad\""), K::ValueError);
}

TEST_CASE("AdamW and Adagrad: options outside their range are refused with ValueError") {
  namespace O = K::optimizers;
  const double nan = std::nan("");
  CHECK_THROWS_WITH_AS((void)O::AdamW(1e-3, {.weight_decay = -0.1}), doctest::Contains("weight_decay"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::AdamW(1e-3, {.weight_decay = nan}), doctest::Contains("weight_decay"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::AdamW(1e-3, {.beta_1 = 1.0}), doctest::Contains("AdamW: beta_1"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::AdamW(1e-3, {.beta_2 = -1}), doctest::Contains("AdamW: beta_2"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::AdamW(1e-3, {.epsilon = 0}), doctest::Contains("AdamW: epsilon"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::AdamW(-1), doctest::Contains("learning_rate"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::Adagrad(1e-3, {.initial_accumulator_value = -0.1}),
                       doctest::Contains("initial_accumulator_value"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::Adagrad(1e-3, {.initial_accumulator_value = nan}),
                       doctest::Contains("initial_accumulator_value"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::Adagrad(1e-3, {.epsilon = -1}), doctest::Contains("Adagrad: epsilon"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::Adagrad(nan), doctest::Contains("learning_rate"), K::ValueError);
  CHECK_NOTHROW((void)O::AdamW(1e-3, {.weight_decay = 0}));
  CHECK_NOTHROW((void)O::Adagrad(1e-3, {.initial_accumulator_value = 0}));
}

TEST_CASE("AdamW and Adagrad: optimizer state survives save_weights/load_weights and training resumes bit-equal") {
  kerascpp_test::TempDir tmp;
  for (const char* name : {"adamw", "adagrad"}) {
    CAPTURE(name);
    auto d = mirrored_fixture::make_data(64);
    auto batches = [&] { return K::Dataset::from_tensor_slices(d.x, d.y).batch(16); };
    auto compile = [&](K::Model& m) {
      K::optimizers::OptimizerRef opt =
          std::string(name) == "adamw" ? K::optimizers::OptimizerRef(K::optimizers::AdamW(0.01, {.weight_decay = 0.1}))
                                       : K::optimizers::OptimizerRef(K::optimizers::Adagrad(0.05));
      m.compile({.optimizer = opt, .loss = "sparse_categorical_crossentropy"});
    };
    K::Model a = mirrored_fixture::small_convnet(false);
    compile(a);
    a.fit(batches(), {.epochs = 1, .verbose = 0});
    std::string path = (tmp.path / (std::string(name) + ".weights.h5")).string();
    a.save_weights(path);

    K::Model b = mirrored_fixture::small_convnet(false);
    compile(b);
    b.load_weights(path);
    CHECK(b.optimizer().iterations() == a.optimizer().iterations());
    auto sa = a.optimizer().slot_tensors(0), sb = b.optimizer().slot_tensors(0);
    REQUIRE(sa.size() == sb.size());
    REQUIRE(!sa.empty());
    for (std::size_t i = 0; i < sa.size(); ++i) CHECK(std::memcmp(sa[i]->raw(), sb[i]->raw(), sa[i]->nbytes()) == 0);
    // Slots hold real state (Adagrad's accumulator grew past its initial 0.1, Adam's moments left 0).
    auto s0 = sa[0]->to_vector();
    bool moved = false;
    for (float x : s0) moved |= x != 0.f && x != 0.1f;
    CHECK(moved);

    a.fit(batches(), {.epochs = 1, .verbose = 0});
    b.fit(batches(), {.epochs = 1, .verbose = 0});
    auto wa = a.get_weights(), wb = b.get_weights();
    REQUIRE(wa.size() == wb.size());
    for (std::size_t i = 0; i < wa.size(); ++i) CHECK(std::memcmp(wa[i].raw(), wb[i].raw(), wa[i].nbytes()) == 0);
  }
}

TEST_CASE("AdamW and Adagrad: 2 mirrored CPU replicas match one device after 20 steps") {
  for (int which = 0; which < 2; ++which) {
    CAPTURE(which);
    auto opt = [&]() -> K::optimizers::OptimizerRef {
      if (which == 0) return K::optimizers::AdamW(1e-3, {.weight_decay = 0.05});
      return K::optimizers::Adagrad(0.05);
    };
    auto one = train(K::distribute::OneDeviceStrategy("cpu:0"), opt());
    K::Model mirrored = mirrored_fixture::small_convnet(true);
    auto many = train(K::distribute::MirroredStrategy<>(2), opt(), &mirrored);
    CHECK(max_abs_diff(one, many) <= 1e-5);
    for (K::Variable* v : mirrored.variables())
      for (int r = 1; r < v->num_copies(); ++r)
        CHECK(std::memcmp(v->value(0).raw(), v->value(r).raw(), v->value(0).nbytes()) == 0);
    // and training moved the weights
    K::Model fresh = mirrored_fixture::small_convnet(true);
    CHECK(max_abs_diff(fresh.get_weights(), one) > 1e-4);
  }
}

TEST_CASE("clipnorm clips each gradient by its own L2 norm, global_clipnorm all of them by their global norm") {
  auto backend = K::make_cpu_backend(1);
  // Two variables with gradients (3, 4) (norm 5) and (12) (norm 12): global norm 13.
  auto step = [&](K::optimizers::GradientClipping clipping) {
    K::Variable a("a", K::Tensor::from_vector(K::Shape{2}, {1.0f, 1.0f}), true);
    K::Variable b("b", K::Tensor::from_vector(K::Shape{1}, {1.0f}), true);
    K::optimizers::SGD opt(0.1);
    opt.set_gradient_clipping(clipping);
    opt.build({&a, &b}, 1);
    a.grad(0).data<float>()[0] = 3;
    a.grad(0).data<float>()[1] = 4;
    b.grad(0).data<float>()[0] = 12;
    opt.clip_gradients(*backend, 0, {&a, &b});
    opt.apply(*backend, 0, 0, a);
    opt.apply(*backend, 0, 1, b);
    auto va = a.value(0).to_vector(), vb = b.value(0).to_vector();
    return std::vector<double>{va[0], va[1], vb[0]};
  };
  auto expect = [](const std::vector<double>& got, std::vector<double> grads) {
    for (std::size_t i = 0; i < 3; ++i) CHECK(got[i] == doctest::Approx(1.0 - 0.1 * grads[i]).epsilon(1e-6));
  };
  SUBCASE("none") { expect(step({}), {3, 4, 12}); }
  SUBCASE("clipnorm 1: each gradient to norm 1") { expect(step({.clipnorm = 1.0}), {0.6, 0.8, 1.0}); }
  SUBCASE("clipnorm 6: (3, 4) is under the norm and stays, (12) goes to 6") {
    expect(step({.clipnorm = 6.0}), {3, 4, 6});
  }
  SUBCASE("global_clipnorm 1.3: everything scaled by 1.3 / 13") {
    expect(step({.global_clipnorm = 1.3}), {0.3, 0.4, 1.2});
  }
  SUBCASE("global_clipnorm above the global norm: unchanged") { expect(step({.global_clipnorm = 20.0}), {3, 4, 12}); }
}

TEST_CASE("gradient clipping: bad norms, or both set, are refused with ValueError") {
  K::optimizers::Adam opt;
  CHECK_THROWS_WITH_AS(opt.set_gradient_clipping({.clipnorm = 0.0}), doctest::Contains("clipnorm"), K::ValueError);
  CHECK_THROWS_WITH_AS(opt.set_gradient_clipping({.clipnorm = -1.0}), doctest::Contains("clipnorm"), K::ValueError);
  CHECK_THROWS_WITH_AS(opt.set_gradient_clipping({.global_clipnorm = std::nan("")}),
                       doctest::Contains("global_clipnorm"), K::ValueError);
  CHECK_THROWS_WITH_AS(opt.set_gradient_clipping({.clipnorm = 1.0, .global_clipnorm = 1.0}),
                       doctest::Contains("only one"), K::ValueError);
  CHECK_FALSE(opt.gradient_clipping().clipnorm);  // a refused setting leaves the optimizer as it was
  opt.set_gradient_clipping({.global_clipnorm = 2.0});
  CHECK(*opt.gradient_clipping().global_clipnorm == 2.0);
}

TEST_CASE("gradient clipping: 2 mirrored CPU replicas match one device, and clipping changes training") {
  for (int which = 0; which < 2; ++which) {
    CAPTURE(which);
    auto opt = [&](bool clip) -> K::optimizers::OptimizerRef {
      K::optimizers::SGD sgd(0.5, {.momentum = 0.9});
      if (clip && which == 0) sgd.set_gradient_clipping({.clipnorm = 0.05});
      if (clip && which == 1) sgd.set_gradient_clipping({.global_clipnorm = 0.05});
      return sgd;
    };
    auto one = train(K::distribute::OneDeviceStrategy("cpu:0"), opt(true));
    K::Model mirrored = mirrored_fixture::small_convnet(true);
    auto many = train(K::distribute::MirroredStrategy<>(2), opt(true), &mirrored);
    CHECK(max_abs_diff(one, many) <= 1e-5);
    for (K::Variable* v : mirrored.variables())
      for (int r = 1; r < v->num_copies(); ++r)
        CHECK(std::memcmp(v->value(0).raw(), v->value(r).raw(), v->value(0).nbytes()) == 0);
    auto unclipped = train(K::distribute::OneDeviceStrategy("cpu:0"), opt(false));
    CHECK(max_abs_diff(one, unclipped) > 1e-3);
  }
}
