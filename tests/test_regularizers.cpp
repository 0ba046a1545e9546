// Weight regularizers and constraints: the Backend ops against hand-computed values, the
// regularized loss reported by evaluate() and returned by Model::backward, frozen layers adding
// nothing (Keras counts trainable weights only), MaxNorm on a Conv2D kernel over axes {0, 1, 2},
// and clear errors for bad arguments. Training against NumPy and Keras:
// tests/python/test_regularization.py.
#include <doctest/doctest.h>

#include <cmath>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing.hpp"

namespace K = kerascpp;
namespace KT = kerascpp::testing;

TEST_CASE("regularizers: weight_penalty returns l1*sum|w| + l2*sum w^2 and adds its gradient") {
  auto be = K::make_cpu_backend(2);
  K::Tensor w = K::Tensor::from_vector({2, 3}, {0.5f, -2.f, 0.f, 1.5f, -0.25f, 3.f});
  K::Tensor grad = K::Tensor::full({2, 3}, 1.f);
  const double penalty = be->weight_penalty(w, 0.1f, 0.2f, grad, 1.f);
  double abs_sum = 0, square_sum = 0;
  for (float v : w.to_vector()) abs_sum += std::fabs(v), square_sum += double(v) * v;
  CHECK(penalty == doctest::Approx(0.1 * abs_sum + 0.2 * square_sum).epsilon(1e-7));
  // 1 (already there) + 0.1·sign(w) + 0.4·w; sign(0) = 0.
  std::vector<float> expected = {1.f + 0.1f + 0.2f, 1.f - 0.1f - 0.8f, 1.f,
                                 1.f + 0.1f + 0.6f, 1.f - 0.1f - 0.1f, 1.f + 0.1f + 1.2f};
  auto g = grad.to_vector();
  for (std::size_t i = 0; i < g.size(); ++i) CHECK(g[i] == doctest::Approx(expected[i]).epsilon(1e-6));
  K::Tensor none;  // undefined grad: the value only
  CHECK(be->weight_penalty(w, 0.f, 1.f, none, 1.f) == doctest::Approx(square_sum));
}

TEST_CASE("regularizers: max_norm rescales each column of the [rows, rest] view as Keras' MaxNorm") {
  auto be = K::make_cpu_backend(1);
  // Columns: (3, 4) norm 5 -> scaled to norm 2; (0.6, 0.8) norm 1 -> kept (times 1/(1+1e-7)).
  K::Tensor w = K::Tensor::from_vector({2, 2}, {3.f, 0.6f, 4.f, 0.8f});
  be->max_norm(w, 2, 2.f);
  auto v = w.to_vector();
  CHECK(v[0] == doctest::Approx(3.f * 2.f / (5.f + 1e-7f)));
  CHECK(v[2] == doctest::Approx(4.f * 2.f / (5.f + 1e-7f)));
  CHECK(v[1] == doctest::Approx(0.6f / (1.f + 1e-7f)).epsilon(1e-7));
  CHECK(v[3] == doctest::Approx(0.8f / (1.f + 1e-7f)).epsilon(1e-7));
  CHECK_THROWS_AS(be->max_norm(w, 3, 1.f), K::ShapeError);
}

namespace {

K::Model regularized_model(K::LayerRef& first) {
  K::set_random_seed(3);
  auto in = K::Input({4});
  first = K::layers::Dense(5, {.activation = "relu", .kernel_regularizer = K::regularizers::L2(0.5f)});
  auto out = K::layers::Dense(2, {.activation = "softmax", .bias_regularizer = "l1"})(first(in));
  return K::Model(in, out);
}

// The penalty of the model's current weights, computed here from get_weights().
double penalty_of(K::Model& model, bool first_trainable) {
  auto w = model.get_weights();  // kernel, bias, kernel_1, bias_1
  double p = 0;
  if (first_trainable)
    for (float v : w[0].to_vector()) p += 0.5 * double(v) * v;
  for (float v : w[3].to_vector()) p += 0.01 * std::fabs(v);
  return p;
}

}  // namespace

TEST_CASE("regularizers: evaluate() reports loss + penalty; frozen layers add none; backward returns it") {
  K::LayerRef first;
  K::Model model = regularized_model(first);
  auto blobs = KT::make_blobs(32, 2, 4, 5);
  model.compile({.optimizer = K::optimizers::SGD(0.0), .loss = "sparse_categorical_crossentropy"});
  const double with_penalty = model.evaluate(blobs.dataset().batch(32), {.verbose = 0}).at("loss");
  // The unregularized loss of the same weights: the data term alone, from the predictions.
  K::Tensor pred = model.predict(blobs.dataset().batch(32), {.verbose = 0});
  double data_loss = 0;
  auto p = pred.to_vector();
  const auto* y = blobs.y.data<std::int32_t>();
  for (std::size_t i = 0; i < 32; ++i) data_loss -= std::log(p[i * 2 + static_cast<std::size_t>(y[i])]);
  data_loss /= 32;
  CHECK(with_penalty == doctest::Approx(data_loss + penalty_of(model, true)).epsilon(1e-5));

  first->set_trainable(false);
  model.compile({.optimizer = K::optimizers::SGD(0.0), .loss = "sparse_categorical_crossentropy"});
  const double frozen = model.evaluate(blobs.dataset().batch(32), {.verbose = 0}).at("loss");
  CHECK(frozen == doctest::Approx(data_loss + penalty_of(model, false)).epsilon(1e-5));
  CHECK(with_penalty - frozen > 0.05);

  // A custom loop gets the penalty from Model::backward.
  first->set_trainable(true);
  model.compile({.optimizer = K::optimizers::SGD(0.0), .loss = "sparse_categorical_crossentropy"});
  double returned = -1;
  model.distribute_strategy().run([&](K::ReplicaContext& ctx) {
    K::Tensor out = model.forward(ctx, blobs.x.slice(0, 4));
    returned = model.backward(ctx, K::Tensor::zeros(out.shape()));
  });
  CHECK(returned == doctest::Approx(penalty_of(model, true)).epsilon(1e-6));
}

TEST_CASE("constraints: MaxNorm over axes {0, 1, 2} keeps every Conv2D filter's norm <= max after each step") {
  K::set_random_seed(4);
  auto in = K::Input({6, 6, 2});
  auto x = K::layers::Conv2D(
      3, 3, {.kernel_initializer = "ones", .kernel_constraint = K::constraints::MaxNorm(1.5f, {0, 1, 2})})(in);
  auto out = K::layers::Dense(2, {.activation = "softmax"})(K::layers::Flatten()(x));
  K::Model model(in, out);
  model.compile({.optimizer = K::optimizers::SGD(0.01), .loss = "sparse_categorical_crossentropy"});
  K::Tensor xs = K::Tensor::full({4, 6, 6, 2}, 0.1f);
  K::Tensor ys = K::Tensor::from_vector({4}, std::vector<std::int32_t>{0, 1, 0, 1});
  model.train_on_batch(xs, ys);
  auto kernel = model.get_weights()[0].to_vector();  // (3, 3, 2, 3): 18 rows, 3 filters
  for (int f = 0; f < 3; ++f) {
    double sq = 0;
    for (int r = 0; r < 18; ++r) sq += double(kernel[std::size_t(r * 3 + f)]) * kernel[std::size_t(r * 3 + f)];
    CHECK(std::sqrt(sq) <= 1.5 + 1e-5);
    CHECK(std::sqrt(sq) > 1.4);  // the ones start at norm sqrt(18) ~ 4.2: the constraint bound
  }
}

TEST_CASE("regularizers and constraints: bad arguments name the problem and the fix") {
  CHECK_THROWS_WITH_AS(K::regularizers::L2(-1.f), doctest::Contains("l2 must be a finite number >= 0"), K::ValueError);
  CHECK_THROWS_WITH_AS(K::regularizers::Regularizer("l3"), doctest::Contains("unknown regularizer 'l3'"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(K::constraints::MaxNorm(0.f), doctest::Contains("max_value must be"), K::ValueError);
  CHECK_THROWS_WITH_AS(K::constraints::MaxNorm(2.f, {1}), doctest::Contains("leading axes"), K::ValueError);
  auto in = K::Input({4});
  // Axes {0, 1} of a 2-D kernel take one norm of the whole kernel (Keras allows it); {0, 1, 2} do not exist.
  auto whole = K::layers::Dense(3, {.kernel_constraint = K::constraints::MaxNorm(2.f, {0, 1})});
  CHECK_NOTHROW(whole(in));
  auto dense = K::layers::Dense(3, {.kernel_constraint = K::constraints::MaxNorm(2.f, {0, 1, 2}), .name = "too_many"});
  CHECK_THROWS_WITH_AS(dense(in), doctest::Contains("too_many"), K::ValueError);
  CHECK(K::regularizers::Regularizer("l2").l2() == doctest::Approx(0.01f));
  CHECK(K::regularizers::Regularizer("l1_l2").l1() == doctest::Approx(0.01f));
  CHECK_FALSE(K::regularizers::Regularizer(""));
}

TEST_CASE("regularizers: Conv1D, DepthwiseConv2D and Conv2DTranspose take them; the penalty and config follow") {
  namespace R = K::regularizers;
  auto seq = K::Input({6, 2});
  auto c1 = K::layers::Conv1D(3, 2, {.kernel_regularizer = R::L2(0.1), .bias_regularizer = R::L1(0.2)});
  auto img = K::Input({5, 5, 2});
  auto dw = K::layers::DepthwiseConv2D(3, {.depthwise_regularizer = R::L1(0.3)});
  auto up = K::layers::Conv2DTranspose(
      2, 2, {.kernel_regularizer = R::L1L2(0.05, 0.4), .bias_constraint = K::constraints::MaxNorm(2)});
  auto a = K::layers::Flatten()(c1(seq));
  auto b = K::layers::Flatten()(up(dw(img)));
  K::Model model(std::vector<K::KerasTensor>{seq, img}, {K::layers::Concatenate()({a, b})});
  std::uint32_t seed = 3;
  for (auto* v : model.trainable_variables()) v->assign(K::testing::uniform_tensor(v->shape(), seed++));
  auto sums = [](const K::Variable* v) {
    double l1 = 0, l2 = 0;
    for (float x : v->value().to_vector()) {
      l1 += std::fabs(double(x));
      l2 += double(x) * x;
    }
    return std::pair{l1, l2};
  };
  const auto k1 = sums(c1->trainable_variables()[0]), b1 = sums(c1->trainable_variables()[1]);
  const auto kd = sums(dw->trainable_variables()[0]), ku = sums(up->trainable_variables()[0]);
  const double want = 0.1 * k1.second + 0.2 * b1.first + 0.3 * kd.first + 0.05 * ku.first + 0.4 * ku.second;
  CHECK(model.regularization_loss() == doctest::Approx(want).epsilon(1e-5));
  CHECK(c1->get_config().dump().find("\"kernel_regularizer\"") != std::string::npos);
  CHECK(dw->get_config().dump().find("\"depthwise_regularizer\"") != std::string::npos);
  CHECK(up->get_config().dump().find("\"bias_constraint\"") != std::string::npos);
}
