// attention: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU),
// the forward against a float64 loop of Keras' formula with masks, causal masking and use_scale,
// and gradients with masks; Keras: the attention kinds of tests/python/test_transformer_layers_interop.py.
#include <cmath>

#include "expect_layer_passes.hpp"
#include "kerascpp/testing/gradient_check.hpp"
#include "layer_on_cpu.hpp"

namespace {

namespace T = K::testing;

// Keras' Attention on one example: scores = scale·q·kᵀ, −1e9 where the value is masked or s > t
// (causal), softmax, ·v, zero rows where the query is masked.
std::vector<double> reference(const std::vector<float>& q, const std::vector<float>& v, const std::vector<float>& k,
                              std::int64_t Tq, std::int64_t Tv, std::int64_t D, std::int64_t Dv, double scale,
                              const std::vector<float>& qmask, const std::vector<float>& vmask, bool causal) {
  std::vector<double> out(static_cast<std::size_t>(Tq * Dv), 0.0);
  for (std::int64_t t = 0; t < Tq; ++t) {
    std::vector<double> s(static_cast<std::size_t>(Tv));
    double top = -1e300;
    for (std::int64_t j = 0; j < Tv; ++j) {
      double dot = 0;
      for (std::int64_t d = 0; d < D; ++d) dot += double(q[t * D + d]) * k[j * D + d];
      s[j] = scale * dot;
      // Masked: float32's score − 1e9, as Keras computes it (all masked: a uniform row).
      if (vmask[j] == 0.f || (causal && j > t)) s[j] = double(static_cast<float>(s[j]) - 1.0e9f);
      top = std::max(top, s[j]);
    }
    double sum = 0;
    for (double& e : s) sum += (e = std::exp(e - top));
    for (std::int64_t j = 0; j < Tv; ++j)
      for (std::int64_t c = 0; c < Dv; ++c) out[t * Dv + c] += s[j] / sum * v[j * Dv + c];
    if (qmask[t] == 0.f)
      for (std::int64_t c = 0; c < Dv; ++c) out[t * Dv + c] = 0;
  }
  return out;
}

}  // namespace

TEST_CASE("layer test: Attention on [query, value], and with use_scale on [query, value, key]") {
  expect_layer_passes({.make = [] { return K::layers::Attention(); },
                       .input_shapes = {{3, 4}, {5, 4}},
                       .expected_output_shape = K::Shape{3, 4},
                       .expected_trainable_weights = 0});
  expect_layer_passes({.make = [] { return K::layers::Attention({.use_scale = true}); },
                       .input_shapes = {{3, 4}, {5, 2}, {5, 4}},
                       .expected_output_shape = K::Shape{3, 2},
                       .expected_trainable_weights = 1});
}

TEST_CASE("Attention: Keras' formula with query and value masks, causal, use_scale; gradients with masks") {
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    layer_on_cpu::Replica rep;
    auto layer = K::layers::Attention({.use_scale = true});
    auto& attention = dynamic_cast<K::layers::AttentionLayer&>(*layer);
    (void)attention.call({K::Input({4, 3}), K::Input({4, 2}), K::Input({4, 3})}, {.use_causal_mask = causal});
    layer->trainable_variables()[0]->assign(K::Tensor::from_vector({}, std::vector<float>{0.7f}));
    const K::Tensor q = T::uniform_tensor({2, 4, 3}, 21), v = T::uniform_tensor({2, 4, 2}, 22),
                    k = T::uniform_tensor({2, 4, 3}, 23);
    const std::vector<std::uint8_t> qm{1, 1, 0, 1, 1, 1, 1, 1},
        vm{1, 0, 1, 1, 1, 0, 1, 0};  // no query row left with nothing to attend to
    K::LayerState st;
    st.input_masks = {K::Tensor::from_vector({2, 4}, qm), K::Tensor::from_vector({2, 4}, vm), K::Tensor()};
    auto y = layer->forward(rep.ctx, {q, v, k}, st).at(0).to_vector();
    auto qv = q.to_vector(), vv = v.to_vector(), kv = k.to_vector();
    for (int n = 0; n < 2; ++n) {
      std::vector<float> qmask(qm.begin() + n * 4, qm.begin() + n * 4 + 4),
          vmask(vm.begin() + n * 4, vm.begin() + n * 4 + 4);
      auto want =
          reference({qv.begin() + n * 12, qv.begin() + n * 12 + 12}, {vv.begin() + n * 8, vv.begin() + n * 8 + 8},
                    {kv.begin() + n * 12, kv.begin() + n * 12 + 12}, 4, 4, 3, 2, 0.7, qmask, vmask, causal);
      for (int i = 0; i < 8; ++i) CHECK(y[n * 8 + i] == doctest::Approx(want[i]).epsilon(1e-5));
    }
    auto masks = layer->compute_output_masks(rep.ctx, {q, v, k}, {}, st);
    CHECK(masks.at(0).to_vector() == st.input_masks[0].to_vector());

    // Finite differences of Σ y·R through the masks (which a plain gradient check cannot pass).
    const K::Tensor R = T::uniform_tensor({2, 4, 2}, 24);
    auto forward = [&](K::LayerState& s) {
      s.input_masks = st.input_masks;
      return layer->forward(rep.ctx, {q, v, k}, s);
    };
    K::LayerState s0;
    auto outs = forward(s0);
    for (auto* var : layer->trainable_variables()) var->reset_grads(0);
    auto dx = layer->backward(rep.ctx, {q, v, k}, outs, {R}, s0);
    T::Evaluation base{T::weighted_sum(outs, {R}), {}};
    T::Objective objective = [&] {
      K::LayerState s;
      return T::Evaluation{T::weighted_sum(forward(s), {R}), {}};
    };
    T::GradientCheckResult r;
    T::compare_gradient(r, "query", q, dx.at(0), objective, base);
    T::compare_gradient(r, "value", v, dx.at(1), objective, base);
    T::compare_gradient(r, "key", k, dx.at(2), objective, base);
    auto* scale = layer->trainable_variables()[0];
    T::compare_gradient(r, "scale", scale->value(0), scale->grad(0).clone(), objective, base);
    CHECK_MESSAGE(r.passed(), r.summary());
  }
}

TEST_CASE("Attention: bad arguments name the layer and the fix") {
  CHECK_THROWS_WITH_AS(K::layers::Attention({.score_mode = "concat"}), doctest::Contains("score_mode 'concat'"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(K::layers::Attention()({K::Input({3, 4}), K::Input({5, 2})}),
                       doctest::Contains("same last dimension"), K::ValueError);
}

TEST_CASE("layer test: AdditiveAttention, with and without its scale") {
  expect_layer_passes({.make = [] { return K::layers::AdditiveAttention(); },
                       .input_shapes = {{3, 4}, {5, 2}, {5, 4}},
                       .expected_output_shape = K::Shape{3, 2},
                       .expected_trainable_weights = 1});
  expect_layer_passes({.make = [] { return K::layers::AdditiveAttention({.use_scale = false}); },
                       .input_shapes = {{3, 4}, {5, 4}},
                       .expected_output_shape = K::Shape{3, 4},
                       .expected_trainable_weights = 0});
}

TEST_CASE("AdditiveAttention: scores Σ_d scale_d·tanh(q_d + k_d) against a float64 loop, masks, gradients") {
  layer_on_cpu::Replica rep;
  auto layer = K::layers::AdditiveAttention();
  (void)layer->call_multi({K::Input({3, 2}), K::Input({4, 3}), K::Input({4, 2})});
  auto* scale = layer->trainable_variables().at(0);
  CHECK(scale->shape() == K::Shape{2});
  const K::Tensor q = T::uniform_tensor({2, 3, 2}, 31), v = T::uniform_tensor({2, 4, 3}, 32),
                  k = T::uniform_tensor({2, 4, 2}, 33);
  const std::vector<std::uint8_t> qm{1, 0, 1, 1, 1, 1}, vm{1, 1, 0, 1, 0, 1, 1, 1};
  K::LayerState st;
  st.input_masks = {K::Tensor::from_vector({2, 3}, qm), K::Tensor::from_vector({2, 4}, vm), K::Tensor()};
  auto y = layer->forward(rep.ctx, {q, v, k}, st).at(0).to_vector();
  auto qv = q.to_vector(), vv = v.to_vector(), kv = k.to_vector(), w = scale->value(0).to_vector();
  for (int n = 0; n < 2; ++n)
    for (int t = 0; t < 3; ++t) {
      std::vector<double> s(4);
      double top = -1e300, sum = 0;
      for (int j = 0; j < 4; ++j) {
        for (int d = 0; d < 2; ++d) s[j] += w[d] * std::tanh(double(qv[(n * 3 + t) * 2 + d]) + kv[(n * 4 + j) * 2 + d]);
        if (vm[n * 4 + j] == 0) s[j] = double(static_cast<float>(s[j]) - 1.0e9f);
        top = std::max(top, s[j]);
      }
      for (double& e : s) sum += (e = std::exp(e - top));
      for (int c = 0; c < 3; ++c) {
        double want = 0;
        for (int j = 0; j < 4; ++j) want += s[j] / sum * vv[(n * 4 + j) * 3 + c];
        if (qm[n * 3 + t] == 0) want = 0;
        CHECK(y[(n * 3 + t) * 3 + c] == doctest::Approx(want).epsilon(1e-5));
      }
    }
  const K::Tensor R = T::uniform_tensor({2, 3, 3}, 34);
  auto forward = [&](K::LayerState& s) {
    s.input_masks = st.input_masks;
    return layer->forward(rep.ctx, {q, v, k}, s);
  };
  K::LayerState s0;
  auto outs = forward(s0);
  scale->reset_grads(0);
  auto dx = layer->backward(rep.ctx, {q, v, k}, outs, {R}, s0);
  T::Evaluation base{T::weighted_sum(outs, {R}), {}};
  T::Objective objective = [&] {
    K::LayerState s;
    return T::Evaluation{T::weighted_sum(forward(s), {R}), {}};
  };
  T::GradientCheckResult r;
  T::compare_gradient(r, "query", q, dx.at(0), objective, base);
  T::compare_gradient(r, "value", v, dx.at(1), objective, base);
  T::compare_gradient(r, "key", k, dx.at(2), objective, base);
  T::compare_gradient(r, "scale", scale->value(0), scale->grad(0).clone(), objective, base);
  CHECK_MESSAGE(r.passed(), r.summary());
  CHECK(layer->get_config().contains("score_mode") == false);
}
