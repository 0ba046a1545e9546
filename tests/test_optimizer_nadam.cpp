// Nadam follows Keras 3's update rule (keras/src/optimizers/nadam.py): 20 steps on fixed
// gradients match a double-precision reference written out here, with a constant rate and with
// a schedule; u_product is Keras' running product; bad options are refused; the slots and
// u_product survive a .weights.h5 round trip and training resumes bit-equal; 2 CPU replicas
// (with clipnorm) equal 1 device. Keras itself: tests/python/test_nadam_steps.py.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "kerascpp/kerascpp.hpp"
#include "mirrored_fixture.hpp"
#include "optimizer_steps.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;

using mirrored_fixture::max_abs_diff;
using namespace optimizer_steps;

namespace {

// keras/src/optimizers/nadam.py in double: u_product advances before the step's updates.
struct Reference {
  std::vector<double> w;
  double u_product = 1;
};
Reference nadam_reference(const std::function<double(int)>& lr, double b1, double b2, double eps) {
  Reference r;
  for (int i = 0; i < kSize; ++i) {
    double w = initial_at(i), m = 0, v = 0, u_product = 1;
    for (int t = 0; t < kSteps; ++t) {
      const double step = t + 1;
      const double u_t = b1 * (1 - 0.5 * std::pow(0.96, step));
      const double u_t_1 = b1 * (1 - 0.5 * std::pow(0.96, step + 1));
      u_product *= u_t;  // _backend_update_step
      const double u_product_t_1 = u_product * u_t_1;
      const double g = grad_at(i, t);
      m += (g - m) * (1 - b1);
      v += (g * g - v) * (1 - b2);
      const double m_hat = u_t_1 * m / (1 - u_product_t_1) + (1 - u_t) * g / (1 - u_product);
      const double v_hat = v / (1 - std::pow(b2, step));
      w -= m_hat * lr(t) / (std::sqrt(v_hat) + eps);
    }
    r.w.push_back(w);
    r.u_product = u_product;
  }
  return r;
}

}  // namespace

TEST_CASE("Nadam: 20 steps match Keras 3's update rule, and u_product its running product") {
  SUBCASE("defaults") {
    K::optimizers::Nadam opt(0.01);
    Reference want = nadam_reference([](int) { return 0.01; }, 0.9, 0.999, 1e-7);
    check_close(run_optimizer(opt), want.w);
    CHECK(opt.u_product() == doctest::Approx(want.u_product).epsilon(1e-6));
    CHECK(want.u_product < 0.1);  // it really decayed
  }
  SUBCASE("other betas and epsilon") {
    K::optimizers::Nadam opt(0.05, {.beta_1 = 0.8, .beta_2 = 0.99, .epsilon = 1e-4});
    check_close(run_optimizer(opt), nadam_reference([](int) { return 0.05; }, 0.8, 0.99, 1e-4).w);
  }
  SUBCASE("a learning-rate schedule") {
    K::optimizers::Nadam opt(K::optimizers::schedules::ExponentialDecay(0.05, 5, 0.5));
    check_close(run_optimizer(opt),
                nadam_reference([](int t) { return 0.05 * std::pow(0.5, t / 5.0); }, 0.9, 0.999, 1e-7).w);
  }
  SUBCASE("differs from Adam") {
    K::optimizers::Nadam nadam(0.05);
    K::optimizers::Adam adam(0.05);
    auto a = run_optimizer(nadam), b = run_optimizer(adam);
    double diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
    CHECK(diff > 1e-3);
  }
}

TEST_CASE("Nadam: Keras defaults, its name, and options outside their range refused with ValueError") {
  namespace O = K::optimizers;
  O::NadamOptions o;
  CHECK(o.beta_1 == 0.9);
  CHECK(o.beta_2 == 0.999);
  CHECK(o.epsilon == 1e-7);
  K::optimizers::OptimizerRef named("nadam");
  CHECK(named->class_name() == "Nadam");
  CHECK(named->learning_rate() == doctest::Approx(0.001));
  CHECK(named->slots_per_variable() == 2);
  CHECK_THROWS_WITH_AS(O::OptimizerRef("nadm"), doctest::Contains("\"nadam\""), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::Nadam(1e-3, {.beta_1 = 1.0}), doctest::Contains("Nadam: beta_1"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::Nadam(1e-3, {.beta_2 = -0.5}), doctest::Contains("Nadam: beta_2"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::Nadam(1e-3, {.epsilon = 0}), doctest::Contains("Nadam: epsilon"), K::ValueError);
  CHECK_THROWS_WITH_AS((void)O::Nadam(std::nan("")), doctest::Contains("learning_rate"), K::ValueError);
}

TEST_CASE("Nadam: slots and u_product survive save_weights/load_weights and training resumes bit-equal") {
  kerascpp_test::TempDir tmp;
  auto d = mirrored_fixture::make_data(64);
  auto batches = [&] { return K::Dataset::from_tensor_slices(d.x, d.y).batch(16); };
  auto compile = [&](K::Model& m) {
    m.compile({.optimizer = K::optimizers::Nadam(0.01), .loss = "sparse_categorical_crossentropy"});
  };
  K::Model a = mirrored_fixture::small_convnet(false);
  compile(a);
  a.fit(batches(), {.epochs = 1, .verbose = 0});
  const std::string path = (tmp.path / "nadam.weights.h5").string();
  a.save_weights(path);

  K::Model b = mirrored_fixture::small_convnet(false);
  compile(b);
  b.fit(batches(), {.epochs = 1, .steps_per_epoch = 1, .verbose = 0});  // other state, to be overwritten
  b.load_weights(path);
  CHECK(b.optimizer().iterations() == a.optimizer().iterations());
  auto sa = a.optimizer().slot_tensors(0), sb = b.optimizer().slot_tensors(0);
  REQUIRE(sa.size() == sb.size());
  // Two slots per trainable variable, then u_product (a float32 scalar, last as in Keras).
  REQUIRE(sa.size() == 2 * a.trainable_variables().size() + 1);
  CHECK(sa.back()->shape().empty());
  const float u = sa.back()->data<float>()[0];
  CHECK(u > 0.f);
  CHECK(u < 0.1f);  // 4 steps of u_t < 0.9 each
  for (std::size_t i = 0; i < sa.size(); ++i) CHECK(std::memcmp(sa[i]->raw(), sb[i]->raw(), sa[i]->nbytes()) == 0);

  a.fit(batches(), {.epochs = 1, .verbose = 0});
  b.fit(batches(), {.epochs = 1, .verbose = 0});
  auto wa = a.get_weights(), wb = b.get_weights();
  REQUIRE(wa.size() == wb.size());
  for (std::size_t i = 0; i < wa.size(); ++i) CHECK(std::memcmp(wa[i].raw(), wb[i].raw(), wa[i].nbytes()) == 0);
}

TEST_CASE("Nadam: 2 mirrored CPU replicas match one device after 20 steps, with and without clipping") {
  for (int which = 0; which < 3; ++which) {
    CAPTURE(which);
    auto opt = [&]() -> K::optimizers::OptimizerRef {
      K::optimizers::Nadam nadam(2e-3);
      if (which == 1) nadam.set_gradient_clipping({.clipnorm = 0.05});
      if (which == 2) nadam.set_gradient_clipping({.global_clipnorm = 0.05});
      return nadam;
    };
    auto one = train(K::distribute::OneDeviceStrategy("cpu:0"), opt());
    K::Model mirrored = mirrored_fixture::small_convnet(true);
    auto many = train(K::distribute::MirroredStrategy<>(2), opt(), &mirrored);
    CHECK(max_abs_diff(one, many) <= 1e-5);
    for (K::Variable* v : mirrored.variables())
      for (int r = 1; r < v->num_copies(); ++r)
        CHECK(std::memcmp(v->value(0).raw(), v->value(r).raw(), v->value(0).nbytes()) == 0);
    K::Model fresh = mirrored_fixture::small_convnet(true);
    CHECK(max_abs_diff(fresh.get_weights(), one) > 1e-4);
    if (which > 0) {  // clipping really changed the run
      CHECK(max_abs_diff(train(K::distribute::OneDeviceStrategy("cpu:0"), K::optimizers::Nadam(2e-3)), one) > 1e-4);
    }
  }
}
