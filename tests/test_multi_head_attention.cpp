// MultiHeadAttention: backward against finite differences (with and without masks, a separate
// key, causal), Keras' two treatments of a wholly masked row, padding that changes nothing, mask
// propagation through the graph, and the errors bad calls give. Python Keras itself is compared
// in tests/python/test_transformer_layers_interop.py (forward both ways, one JAX training step).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/gradient_check.hpp"

namespace K = kerascpp;
namespace T = kerascpp::testing;

namespace {

K::Tensor random_tensor(const K::Shape& shape, std::uint32_t seed) { return T::uniform_tensor(shape, seed); }

void randomize(const K::LayerRef& layer, std::uint32_t seed) {
  for (auto* v : layer->trainable_variables()) v->assign(T::uniform_tensor(v->shape(), seed++, -0.6f, 0.6f));
}

K::Tensor u8(const K::Shape& shape, const std::vector<std::uint8_t>& v) { return K::Tensor::from_vector(shape, v); }

// Finite differences of Σ out·R for a call with the given Keras input masks (which a plain
// gradient check cannot pass): every float input and every trainable variable.
T::GradientCheckResult check_masked_gradients(const K::LayerRef& layer, const std::vector<K::Tensor>& inputs,
                                              const std::vector<K::Tensor>& masks, bool training) {
  auto be = K::make_cpu_backend(1);
  K::ReplicaContext ctx;
  ctx.backend = be.get();
  ctx.training = training;
  auto run = [&](K::LayerState& st) {
    st.input_masks = masks;
    return layer->forward(ctx, inputs, st);
  };
  K::LayerState st;
  std::vector<K::Tensor> outs = run(st);
  std::vector<K::Tensor> weights{T::uniform_tensor(outs[0].shape(), 77)};
  for (auto* v : layer->trainable_variables()) v->reset_grads(0);
  std::vector<K::Tensor> input_grads = layer->backward(ctx, inputs, outs, weights, st);
  T::Evaluation base{T::weighted_sum(outs, weights), {}};
  T::Objective objective = [&] {
    K::LayerState s;
    return T::Evaluation{T::weighted_sum(run(s), weights), {}};
  };
  T::GradientCheckResult result;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].dtype() == K::DType::float32)
      T::compare_gradient(result, "input " + std::to_string(i), inputs[i], input_grads.at(i), objective, base);
  for (auto* v : layer->trainable_variables())
    T::compare_gradient(result, v->name(), v->value(0), v->grad(0).clone(), objective, base);
  return result;
}

K::Tensor predict(K::Model& model, const std::vector<K::Tensor>& xs) {
  return model.predict(K::Dataset::from_tensor_slices(xs).batch(xs[0].dim(0)), {.verbose = 0});
}

}  // namespace

TEST_CASE("MultiHeadAttention: shapes and Keras' weight layouts") {
  auto mha = K::layers::MultiHeadAttention(3, 4, {.value_dim = 2, .output_shape = 5});
  auto y = mha(K::Input({6, 7}), K::Input({8, 9}), {.key = K::Input({8, 10})});
  CHECK(y.shape() == K::Shape{6, 5});
  std::vector<K::Shape> shapes;
  for (auto* v : mha->trainable_variables()) shapes.push_back(v->shape());
  CHECK(shapes == std::vector<K::Shape>{{7, 3, 4}, {3, 4}, {10, 3, 4}, {3, 4}, {9, 3, 2}, {3, 2}, {3, 2, 5}, {5}});
  CHECK(mha->count_params() == 7 * 12 + 12 + 10 * 12 + 12 + 9 * 6 + 6 + 30 + 5);
  auto no_bias = K::layers::MultiHeadAttention(2, 3, {.use_bias = false});
  auto z = no_bias(K::Input({4, 6}), K::Input({5, 6}));
  CHECK(z.shape() == K::Shape{4, 6});  // output_shape defaults to the query's features
  CHECK(no_bias->trainable_variables().size() == 4);
}

TEST_CASE("MultiHeadAttention: gradients against finite differences (key input, self-attention, causal)") {
  auto cross = K::layers::MultiHeadAttention(2, 3, {.value_dim = 2, .output_shape = 4, .seed = 1});
  (void)cross(K::Input({4, 5}), K::Input({3, 6}), {.key = K::Input({3, 7})});
  randomize(cross, 10);
  auto r = T::check_layer_gradients(
      cross, {random_tensor({2, 4, 5}, 1), random_tensor({2, 3, 6}, 2), random_tensor({2, 3, 7}, 3)});
  CHECK_MESSAGE(r.passed(), r.summary());

  auto self = K::layers::MultiHeadAttention(2, 2, {.seed = 2});
  (void)self(K::Input({5, 4}), K::Input({5, 4}), {.use_causal_mask = true});
  randomize(self, 20);
  K::Tensor x = random_tensor({2, 5, 4}, 4);
  r = T::check_layer_gradients(self, {x, x.clone()});
  CHECK_MESSAGE(r.passed(), r.summary());
}

TEST_CASE("MultiHeadAttention: gradients with query/value masks and an attention_mask, both masking paths") {
  // Row 1 of the query mask is off and example 1's value mask leaves one position: rows wholly
  // masked in both examples once the explicit mask removes the rest.
  const K::Tensor qmask = u8({2, 3}, {1, 0, 1, 1, 1, 1});
  const K::Tensor vmask = u8({2, 4}, {1, 1, 0, 1, 0, 0, 1, 0});
  const K::Tensor explicit_mask = u8({2, 3, 4}, {1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1,  //
                                                 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1});
  for (double dropout : {0.0, 0.25}) {
    CAPTURE(dropout);
    auto mha = K::layers::MultiHeadAttention(2, 3, {.dropout = dropout, .seed = 3});
    (void)mha(K::Input({3, 5}), K::Input({4, 6}),
              {.attention_mask = K::Input({3, 4}, K::DType::uint8), .use_causal_mask = true});
    randomize(mha, 30);
    // Training with dropout draws random masks, so that layer is checked in inference, where
    // Keras' -1e9-then-zero path runs all the same.
    std::vector<K::Tensor> inputs{random_tensor({2, 3, 5}, 5), random_tensor({2, 4, 6}, 6), explicit_mask};
    auto r = check_masked_gradients(mha, inputs, {qmask, vmask, K::Tensor()}, dropout == 0.0);
    CHECK_MESSAGE(r.passed(), r.summary());
    CHECK(r.checked > 100);
  }
}

TEST_CASE("MultiHeadAttention: a wholly masked row attends uniformly (dropout 0) or to nothing (dropout > 0)") {
  auto be = K::make_cpu_backend(1);
  K::ReplicaContext ctx;
  ctx.backend = be.get();
  K::Tensor q = random_tensor({1, 2, 4}, 7), v = random_tensor({1, 3, 4}, 8);
  const K::Tensor none = u8({1, 3}, {0, 0, 0});
  for (double dropout : {0.0, 0.5}) {
    CAPTURE(dropout);
    auto mha = K::layers::MultiHeadAttention(2, 2, {.dropout = dropout, .seed = 4});
    (void)mha(K::Input({2, 4}), K::Input({3, 4}));
    randomize(mha, 40);
    K::LayerState st;
    st.input_masks = {K::Tensor(), none};
    auto masked = mha->forward(ctx, {q, v}, st).at(0).to_vector();
    std::vector<float> want;
    if (dropout == 0.0) {
      // Uniform attention is what all-zero scores give: zero the key projection, no mask.
      for (auto* var : mha->trainable_variables())
        if (var->name().rfind("key_dense", 0) == 0) var->assign(K::Tensor::zeros(var->shape()));
      K::LayerState plain;
      want = mha->forward(ctx, {q, v}, plain).at(0).to_vector();
    } else {
      // No attention at all: the output is the output projection's bias.
      auto bias = mha->trainable_variables().back()->value().to_vector();
      for (int row = 0; row < 2; ++row) want.insert(want.end(), bias.begin(), bias.end());
    }
    REQUIRE(masked.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(masked[i] == doctest::Approx(want[i]).epsilon(1e-5));
  }
}

TEST_CASE("masks: padding from Embedding(mask_zero) changes nothing in the unpadded positions") {
  // One Embedding and one attention layer, called on 4-step and 2-step ids: with [a, b, 0, 0]
  // the first two outputs equal those of [a, b] (value positions 2 and 3 are masked off).
  auto embed = K::layers::Embedding(10, 6, {.mask_zero = true, .seed = 5});
  auto mha = K::layers::MultiHeadAttention(2, 3, {.seed = 6});
  auto ffn = K::layers::Dense(5, {.activation = "tanh", .seed = 7});
  auto build = [&](std::int64_t steps) {
    auto ids = K::Input({steps}, K::DType::int32);
    auto e = embed(ids);
    return K::Model(ids, ffn(K::layers::Add()({e, mha(e, e)})));
  };
  K::Model padded = build(4), short_model = build(2);
  auto y4 = predict(padded, {K::Tensor::from_vector({1, 4}, std::vector<std::int32_t>{3, 7, 0, 0})}).to_vector();
  auto y2 = predict(short_model, {K::Tensor::from_vector({1, 2}, std::vector<std::int32_t>{3, 7})}).to_vector();
  for (std::size_t i = 0; i < y2.size(); ++i) CHECK(y4[i] == doctest::Approx(y2[i]).epsilon(1e-5));
  // Without the mask the padding's embeddings take part, and the outputs differ.
  auto plain = K::layers::Embedding(10, 6, {.seed = 5});
  auto ids = K::Input({4}, K::DType::int32);
  auto e = plain(ids);
  K::Model unmasked(ids, ffn(K::layers::Add()({e, mha(e, e)})));
  auto y4u = predict(unmasked, {K::Tensor::from_vector({1, 4}, std::vector<std::int32_t>{3, 7, 0, 0})}).to_vector();
  bool differs = false;
  for (std::size_t i = 0; i < y2.size(); ++i) differs = differs || std::abs(y4u[i] - y2[i]) > 1e-4;
  CHECK(differs);
}

TEST_CASE("MultiHeadAttention: bad calls name the layer and the shapes") {
  auto message_of = [](auto&& f) {
    try {
      f();
    } catch (const K::Error& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  auto has = [](const std::string& m, const std::string& part) {
    INFO(m);
    CHECK(m.find(part) != std::string::npos);
  };
  std::string m =
      message_of([] { K::layers::MultiHeadAttention(2, 3, {.name = "att"})(K::Input({4}), K::Input({4})); });
  has(m, "att");
  has(m, "(None, 4)");
  m = message_of([] {
    K::layers::MultiHeadAttention(2, 3, {.name = "att_kv"})(K::Input({4, 5}), K::Input({3, 5}),
                                                            {.key = K::Input({2, 5})});
  });
  has(m, "att_kv");
  has(m, "same number of steps");
  m = message_of([] {
    K::layers::MultiHeadAttention(2, 3, {.name = "att_mask"})(K::Input({4, 5}), K::Input({3, 5}),
                                                              {.attention_mask = K::Input({3, 4}, K::DType::uint8)});
  });
  has(m, "att_mask");
  has(m, "(batch, 4, 3)");
  m = message_of([] {
    K::layers::MultiHeadAttention(2, 3, {.name = "att_f32"})(K::Input({4, 5}), K::Input({3, 5}),
                                                             {.attention_mask = K::Input({4, 3})});
  });
  has(m, "att_f32");
  has(m, "uint8");
  m = message_of([] {
    auto mha = K::layers::MultiHeadAttention(2, 3, {.name = "att_twice"});
    auto x = K::Input({4, 5});
    (void)mha(x, x);
    (void)mha(x, x, {.use_causal_mask = true});
  });
  has(m, "att_twice");
  has(m, "another MultiHeadAttention");
  has(message_of([] { K::layers::MultiHeadAttention(0, 3); }), "num_heads");
  has(message_of([] { K::layers::MultiHeadAttention(2, 3, {.dropout = 1.0}); }), "dropout");
}

TEST_CASE("masks: Softmax applies its input's mask as Keras (-1e9 before, 0 after) and refuses one that does not fit") {
  auto softmax = K::layers::Softmax();
  (void)softmax(K::Input({4}));
  K::Tensor x = random_tensor({2, 4}, 12);
  const K::Tensor mask = u8({2, 4}, {1, 0, 1, 1, 0, 0, 0, 0});  // example 1 wholly masked
  auto be = K::make_cpu_backend(1);
  K::ReplicaContext ctx;
  ctx.backend = be.get();
  K::LayerState st;
  st.input_masks = {mask};
  auto y = softmax->forward(ctx, {x}, st).at(0).to_vector();
  auto xv = x.to_vector();
  const double z = std::exp(double(xv[0])) + std::exp(double(xv[2])) + std::exp(double(xv[3]));
  CHECK(y[0] == doctest::Approx(std::exp(double(xv[0])) / z));
  CHECK(y[1] == 0.f);
  CHECK(y[3] == doctest::Approx(std::exp(double(xv[3])) / z));
  for (int i = 4; i < 8; ++i) CHECK(y[static_cast<std::size_t>(i)] == 0.f);
  auto r = check_masked_gradients(softmax, {x}, {mask}, true);
  CHECK_MESSAGE(r.passed(), r.summary());
  // A (batch, steps) mask on (batch, steps, 1) scores does not broadcast: Keras raises, so do we.
  auto column = K::layers::Softmax({.axis = 1});
  (void)column(K::Input({4, 1}));
  K::LayerState bad;
  bad.input_masks = {mask};
  CHECK_THROWS_AS(column->forward(ctx, {random_tensor({2, 4, 1}, 13)}, bad), K::ValueError);
}
