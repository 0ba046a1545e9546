// LSTM, GRU and SimpleRNN: Keras' weight layouts and initial values (orthogonal recurrent kernel, unit
// forget bias), backprop through time against finite differences (return_sequences on and off,
// go_backwards, return_state, Keras masks), Keras' masking semantics (zero_output_for_mask too),
// SimpleRNN against a float64 loop of its formula, mask propagation and bad arguments.
// Keras 3 itself is compared in tests/python/test_transformer_layers_interop.py (kinds lstm, gru,
// lstm_masked, gru_masked, simple_rnn, simple_rnn_masked: forward both ways and one JAX training step).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/gradient_check.hpp"

namespace K = kerascpp;
namespace T = kerascpp::testing;

namespace {

void randomize(const K::LayerRef& layer, std::uint32_t seed) {
  for (auto* v : layer->trainable_variables()) v->assign(T::uniform_tensor(v->shape(), seed++, -0.6f, 0.6f));
}

K::Tensor u8(const K::Shape& shape, const std::vector<std::uint8_t>& v) { return K::Tensor::from_vector(shape, v); }

// One forward (and optionally backward) call with a Keras input mask.
std::vector<K::Tensor> run(const K::LayerRef& layer, const K::Tensor& x, const K::Tensor& mask) {
  auto be = K::make_cpu_backend(1);
  K::ReplicaContext ctx;
  ctx.backend = be.get();
  K::LayerState st;
  st.input_masks = {mask};
  return layer->forward(ctx, {x}, st);
}

// Finite differences of Σ out·R for a call with a Keras input mask (which a plain gradient check
// cannot pass): the input and every trainable variable.
T::GradientCheckResult check_masked_gradients(const K::LayerRef& layer, const K::Tensor& x, const K::Tensor& mask) {
  auto be = K::make_cpu_backend(1);
  K::ReplicaContext ctx;
  ctx.backend = be.get();
  auto forward = [&](K::LayerState& st) {
    st.input_masks = {mask};
    return layer->forward(ctx, {x}, st);
  };
  K::LayerState st;
  std::vector<K::Tensor> outs = forward(st);
  std::vector<K::Tensor> weights;  // every output counts: return_state's states too
  for (std::size_t k = 0; k < outs.size(); ++k)
    weights.push_back(T::uniform_tensor(outs[k].shape(), 77 + static_cast<std::uint32_t>(k)));
  for (auto* v : layer->trainable_variables()) v->reset_grads(0);
  std::vector<K::Tensor> input_grads = layer->backward(ctx, {x}, outs, weights, st);
  T::Evaluation base{T::weighted_sum(outs, weights), {}};
  T::Objective objective = [&] {
    K::LayerState s;
    return T::Evaluation{T::weighted_sum(forward(s), weights), {}};
  };
  T::GradientCheckResult result;
  T::compare_gradient(result, "input", x, input_grads.at(0), objective, base);
  for (auto* v : layer->trainable_variables())
    T::compare_gradient(result, v->name(), v->value(0), v->grad(0).clone(), objective, base);
  return result;
}

using Cell = K::layers::RecurrentLayer::Cell;
constexpr Cell kCells[] = {Cell::lstm, Cell::gru, Cell::simple_rnn};

K::LayerRef make(Cell cell, std::int64_t units, K::layers::RecurrentOptions o = {}) {
  switch (cell) {
    case Cell::lstm:
      return K::layers::LSTM(units, std::move(o));
    case Cell::gru:
      return K::layers::GRU(units, std::move(o));
    case Cell::simple_rnn:
      break;
  }
  return K::layers::SimpleRNN(units, std::move(o));
}

K::LayerRef make(bool lstm, std::int64_t units, K::layers::RecurrentOptions o = {}) {
  return make(lstm ? Cell::lstm : Cell::gru, units, std::move(o));
}

}  // namespace

TEST_CASE("LSTM/GRU: shapes, Keras' weight layouts, orthogonal recurrent kernel, unit_forget_bias") {
  for (bool lstm : {true, false}) {
    CAPTURE(lstm);
    auto in = K::Input({5, 3});
    auto layer = make(lstm, 4, {.seed = 3});
    auto y = layer(in);
    CHECK(y.shape() == K::Shape{4});
    const std::int64_t G = lstm ? 16 : 12;
    auto vars = layer->trainable_variables();
    REQUIRE(vars.size() == 3);
    CHECK(vars[0]->shape() == K::Shape{3, G});
    CHECK(vars[1]->shape() == K::Shape{4, G});
    CHECK(vars[2]->shape() == (lstm ? K::Shape{G} : K::Shape{2, G}));
    // Keras' Orthogonal on [units, G] (rows < cols): orthonormal rows, U·Uᵀ = I.
    auto u = vars[1]->value(0).to_vector();
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        double dot = 0;
        for (std::int64_t k = 0; k < G; ++k) dot += double(u[a * G + k]) * u[b * G + k];
        CHECK(dot == doctest::Approx(a == b ? 1.0 : 0.0).epsilon(1e-5));
      }
    auto bias = vars[2]->value(0).to_vector();
    for (std::int64_t k = 0; k < G; ++k)
      CHECK(bias[k] == ((lstm && k >= 4 && k < 8) ? 1.f : 0.f));  // LSTM: the forget gate's bias is 1
    CHECK(make(lstm, 4, {.return_sequences = true})(in).shape() == K::Shape{5, 4});
  }
}

TEST_CASE("LSTM/GRU/SimpleRNN: backprop through time against finite differences") {
  for (Cell cell : kCells)
    for (bool sequences : {false, true})
      for (bool backwards : {false, true}) {
        CAPTURE(static_cast<int>(cell));
        CAPTURE(sequences);
        CAPTURE(backwards);
        auto layer = make(cell, 3, {.return_sequences = sequences, .go_backwards = backwards, .seed = 2});
        (void)layer(K::Input({4, 2}));
        randomize(layer, 10);
        auto r = T::check_layer_gradients(layer, {T::uniform_tensor({2, 4, 2}, 5)});
        CHECK_MESSAGE(r.passed(), r.summary());
      }
  // Without bias.
  auto layer = K::layers::GRU(3, {.use_bias = false, .return_sequences = true, .seed = 4});
  (void)layer(K::Input({3, 2}));
  randomize(layer, 20);
  auto r = T::check_layer_gradients(layer, {T::uniform_tensor({2, 3, 2}, 6)});
  CHECK_MESSAGE(r.passed(), r.summary());
}

TEST_CASE("LSTM/GRU/SimpleRNN: gradients with a Keras mask (leading, inner and trailing masked steps)") {
  const K::Tensor mask = u8({3, 5}, {0, 1, 1, 0, 1,  //
                                     1, 1, 1, 0, 0,  //
                                     1, 0, 0, 1, 1});
  for (Cell cell : kCells)
    for (bool sequences : {false, true})
      for (bool backwards : {false, true}) {
        CAPTURE(static_cast<int>(cell));
        CAPTURE(sequences);
        CAPTURE(backwards);
        auto layer = make(cell, 3, {.return_sequences = sequences, .go_backwards = backwards, .seed = 2});
        (void)layer(K::Input({5, 2}));
        randomize(layer, 30);
        auto r = check_masked_gradients(layer, T::uniform_tensor({3, 5, 2}, 8), mask);
        CHECK_MESSAGE(r.passed(), r.summary());
      }
}

TEST_CASE("LSTM/GRU/SimpleRNN: a masked step repeats the previous output and carries the states, as Keras' rnn") {
  for (Cell cell : kCells) {
    CAPTURE(static_cast<int>(cell));
    auto layer = make(cell, 3, {.return_sequences = true, .seed = 7});
    (void)layer(K::Input({4, 2}));
    randomize(layer, 40);
    const K::Tensor x = T::uniform_tensor({1, 4, 2}, 9);
    // Steps 0 and 2 masked: output 0 is zeros (nothing before it), output 2 repeats output 1, and
    // step 3 sees the state of step 1, so outputs 1 and 3 equal an unmasked run on steps {1, 3}.
    auto masked = run(layer, x, u8({1, 4}, {0, 1, 0, 1})).at(0).to_vector();
    auto xv = x.to_vector();
    K::Tensor x13 = K::Tensor::from_vector({1, 2, 2}, std::vector<float>{xv[2], xv[3], xv[6], xv[7]});
    auto plain = run(layer, x13, K::Tensor()).at(0).to_vector();
    for (int u = 0; u < 3; ++u) {
      CHECK(masked[u] == 0.f);
      CHECK(masked[3 + u] == doctest::Approx(plain[u]).epsilon(1e-6));
      CHECK(masked[6 + u] == masked[3 + u]);
      CHECK(masked[9 + u] == doctest::Approx(plain[3 + u]).epsilon(1e-6));
    }
    // A fully kept mask changes nothing.
    auto all = run(layer, x, u8({1, 4}, {1, 1, 1, 1})).at(0).to_vector();
    auto none = run(layer, x, K::Tensor()).at(0).to_vector();
    CHECK(all == none);
  }
}

TEST_CASE("LSTM/GRU/SimpleRNN: go_backwards reads the steps in reverse and returns them in that order") {
  for (Cell cell : kCells) {
    CAPTURE(static_cast<int>(cell));
    auto fwd = make(cell, 3, {.return_sequences = true, .seed = 7});
    auto bwd = make(cell, 3, {.return_sequences = true, .go_backwards = true, .seed = 7});
    (void)fwd(K::Input({4, 2}));
    (void)bwd(K::Input({4, 2}));
    randomize(fwd, 50);
    randomize(bwd, 50);
    auto x = T::uniform_tensor({2, 4, 2}, 3);
    auto xv = x.to_vector();
    std::vector<float> rv(xv.size());
    for (int b = 0; b < 2; ++b)
      for (int t = 0; t < 4; ++t)
        for (int d = 0; d < 2; ++d) rv[(b * 4 + t) * 2 + d] = xv[(b * 4 + (3 - t)) * 2 + d];
    auto a = run(bwd, x, K::Tensor()).at(0).to_vector();
    auto b = run(fwd, K::Tensor::from_vector({2, 4, 2}, rv), K::Tensor()).at(0).to_vector();
    CHECK(a == b);
  }
}

TEST_CASE("LSTM/GRU: the output mask is the input mask with return_sequences, none otherwise") {
  // Embedding(mask_zero) -> LSTM(return_sequences) -> GRU: trailing padding changes nothing only if
  // the LSTM passes the mask on to the GRU (which would otherwise step over the padded outputs).
  auto embed = K::layers::Embedding(10, 3, {.mask_zero = true, .seed = 1});
  auto lstm = K::layers::LSTM(2, {.return_sequences = true, .seed = 2});
  auto gru = K::layers::GRU(2, {.seed = 3});
  auto padded_in = K::Input({4}, K::DType::int32);
  K::Model padded(padded_in, gru(lstm(embed(padded_in))));
  auto short_in = K::Input({2}, K::DType::int32);
  K::Model unpadded(short_in, gru(lstm(embed(short_in))));
  randomize(lstm, 60);
  randomize(gru, 70);
  auto predict = [](K::Model& m, const K::Tensor& x) {
    return m.predict(K::Dataset::from_tensor_slices({x}).batch(1), {.verbose = 0}).to_vector();
  };
  auto a = predict(padded, K::Tensor::from_vector({1, 4}, std::vector<std::int32_t>{3, 5, 0, 0}));
  auto b = predict(unpadded, K::Tensor::from_vector({1, 2}, std::vector<std::int32_t>{3, 5}));
  REQUIRE(a.size() == 2);
  CHECK(a[0] == doctest::Approx(b[0]).epsilon(1e-6));
  CHECK(a[1] == doctest::Approx(b[1]).epsilon(1e-6));
  CHECK(a[0] != 0.f);
}

TEST_CASE("LSTM/GRU: bad arguments and inputs name the layer and the shape") {
  CHECK_THROWS_WITH_AS(K::layers::LSTM(0, {.name = "enc"}), doctest::Contains("'enc'"), K::ValueError);
  CHECK_THROWS_WITH_AS(K::layers::GRU(-2), doctest::Contains("units must be positive"), K::ValueError);
  CHECK_THROWS_AS(K::layers::LSTM(2, {.activation = "softmax"}), K::ValueError);
  auto layer = K::layers::LSTM(2, {.name = "lstm_rank"});
  CHECK_THROWS_WITH_AS(layer(K::Input({4})), doctest::Contains("lstm_rank"), K::ShapeError);
  CHECK_THROWS_WITH_AS(K::layers::GRU(2, {.name = "gru_rank"})(K::Input({4, 3, 2})),
                       doctest::Contains("(None, 4, 3, 2)"), K::ShapeError);
}

TEST_CASE("LSTM/GRU: the orthogonal initializer (tall and wide), seeded") {
  auto orth = [](const K::Shape& shape, std::uint64_t seed) {
    K::Tensor t(shape);
    K::initializers::initialize(t, "orthogonal", seed, "test");
    return t.to_vector();
  };
  // Tall [6, 3]: orthonormal columns; wide [3, 6] (the recurrent kernel's shape): orthonormal rows.
  for (bool tall : {true, false}) {
    CAPTURE(tall);
    const std::int64_t rows = tall ? 6 : 3, cols = tall ? 3 : 6;
    auto q = orth({rows, cols}, 11);
    auto at = [&](std::int64_t r, std::int64_t c) { return double(q[static_cast<std::size_t>(r * cols + c)]); };
    const std::int64_t n = std::min(rows, cols), m = std::max(rows, cols);
    for (std::int64_t a = 0; a < n; ++a)
      for (std::int64_t b = 0; b < n; ++b) {
        double dot = 0;
        for (std::int64_t k = 0; k < m; ++k) dot += tall ? at(k, a) * at(k, b) : at(a, k) * at(b, k);
        CHECK(dot == doctest::Approx(a == b ? 1.0 : 0.0).epsilon(1e-6));
      }
    CHECK(orth({rows, cols}, 11) == q);
    CHECK(orth({rows, cols}, 12) != q);
  }
}

TEST_CASE("SimpleRNN: Keras' weight layout and h_t = tanh(x_t·W + h_{t-1}·U + b), against a float64 loop") {
  auto layer = K::layers::SimpleRNN(3, {.return_sequences = true, .seed = 5});
  (void)layer(K::Input({4, 2}));
  auto vars = layer->trainable_variables();
  REQUIRE(vars.size() == 3);
  CHECK(vars[0]->shape() == K::Shape{2, 3});
  CHECK(vars[1]->shape() == K::Shape{3, 3});
  CHECK(vars[2]->shape() == K::Shape{3});
  randomize(layer, 80);
  const K::Tensor x = T::uniform_tensor({2, 4, 2}, 11);
  auto got = run(layer, x, K::Tensor()).at(0).to_vector();
  auto xv = x.to_vector(), W = vars[0]->value(0).to_vector(), U = vars[1]->value(0).to_vector(),
       b = vars[2]->value(0).to_vector();
  for (int n = 0; n < 2; ++n) {
    std::vector<double> h(3, 0.0);
    for (int t = 0; t < 4; ++t) {
      std::vector<double> next(3);
      for (int u = 0; u < 3; ++u) {
        double z = b[u];
        for (int d = 0; d < 2; ++d) z += double(xv[(n * 4 + t) * 2 + d]) * W[d * 3 + u];
        for (int k = 0; k < 3; ++k) z += h[k] * U[k * 3 + u];
        next[u] = std::tanh(z);
      }
      h = next;
      for (int u = 0; u < 3; ++u) CHECK(got[(n * 4 + t) * 3 + u] == doctest::Approx(h[u]).epsilon(1e-5));
    }
  }
  // SimpleRNN's config has no recurrent activation (Keras' has none either).
  const K::Json config = layer->get_config();
  CHECK(config.find("recurrent_activation") == config.end());
  CHECK(config["units"] == 3);
}

TEST_CASE("LSTM/GRU/SimpleRNN: return_state outputs the carried final states, with their gradients") {
  const K::Tensor mask = u8({3, 5}, {1, 1, 1, 0, 1,  //
                                     1, 1, 0, 0, 0,  //
                                     0, 0, 0, 0, 0});
  for (Cell cell : kCells)
    for (bool sequences : {false, true}) {
      CAPTURE(static_cast<int>(cell));
      CAPTURE(sequences);
      auto layer = make(cell, 3, {.return_sequences = sequences, .return_state = true, .go_backwards = true});
      auto outs = layer->call_multi({K::Input({5, 2})});
      REQUIRE(outs.size() == (cell == Cell::lstm ? 3u : 2u));
      CHECK(outs[0].shape() == (sequences ? K::Shape{5, 3} : K::Shape{3}));
      for (std::size_t k = 1; k < outs.size(); ++k) CHECK(outs[k].shape() == K::Shape{3});
      randomize(layer, 90);
      const K::Tensor x = T::uniform_tensor({3, 5, 2}, 12);
      auto y = run(layer, x, mask);
      // h is the last output (the output at a masked step repeats the carried state); the
      // all-masked row keeps the zero initial states.
      auto h = y[1].to_vector(), last = y[0].to_vector();
      for (int n = 0; n < 3; ++n)
        for (int u = 0; u < 3; ++u) {
          const float out = sequences ? last[(n * 5 + 4) * 3 + u] : last[n * 3 + u];
          CHECK(h[n * 3 + u] == out);
          if (n == 2) CHECK(h[n * 3 + u] == 0.f);
        }
      auto r = check_masked_gradients(layer, x, mask);
      CHECK_MESSAGE(r.passed(), r.summary());
    }
}

TEST_CASE("LSTM/GRU/SimpleRNN: zero_output_for_mask zeroes the masked steps' outputs, not the states") {
  const K::Tensor mask = u8({2, 4}, {1, 0, 1, 0,  //
                                     0, 1, 1, 1});
  for (Cell cell : kCells)
    for (bool backwards : {false, true}) {
      CAPTURE(static_cast<int>(cell));
      CAPTURE(backwards);
      K::layers::RecurrentOptions o{.return_sequences = true, .return_state = true, .go_backwards = backwards};
      auto carry = make(cell, 3, o);
      o.zero_output_for_mask = true;
      auto zero = make(cell, 3, o);
      for (auto* l : {&carry, &zero}) {
        (void)(*l)->call_multi({K::Input({4, 2})});
        randomize(*l, 100);
      }
      const K::Tensor x = T::uniform_tensor({2, 4, 2}, 13);
      auto a = run(carry, x, mask), b = run(zero, x, mask);
      auto av = a[0].to_vector(), bv = b[0].to_vector(), mv = mask.to_vector();
      for (int n = 0; n < 2; ++n)
        for (int s = 0; s < 4; ++s) {
          const int t = backwards ? 3 - s : s;  // output s is input step t's
          for (int u = 0; u < 3; ++u) {
            const int i = (n * 4 + s) * 3 + u;
            CHECK(bv[i] == (mv[n * 4 + t] != 0.f ? av[i] : 0.f));
          }
        }
      CHECK(a[1].to_vector() == b[1].to_vector());  // the states are carried either way
      auto r = check_masked_gradients(zero, x, mask);
      CHECK_MESSAGE(r.passed(), r.summary());
    }
}

TEST_CASE("Bidirectional: each merge mode against its two layers run alone, with a mask") {
  const K::Tensor mask = u8({2, 4}, {1, 1, 0, 1,  //
                                     0, 1, 1, 0});
  const K::Tensor x = T::uniform_tensor({2, 4, 2}, 14);
  for (const char* mode : {"concat", "sum", "mul", "ave", ""}) {
    CAPTURE(mode);
    const std::optional<std::string> merge = *mode ? std::optional<std::string>(mode) : std::nullopt;
    auto layer = K::layers::Bidirectional(K::layers::SimpleRNN(3, {.return_sequences = true, .name = "rnn"}),
                                          {.merge_mode = merge});
    (void)layer->call_multi({K::Input({4, 2})});
    randomize(layer, 110);
    auto& bi = dynamic_cast<K::layers::BidirectionalLayer&>(*layer);
    CHECK(bi.forward_layer()->name() == "forward_rnn");
    CHECK(bi.backward_layer()->name() == "backward_rnn");
    auto out = run(layer, x, mask);
    REQUIRE(out.size() == (merge ? 1u : 2u));
    // The backward layer returns its steps last to first; Bidirectional puts them back in order.
    auto f = run(bi.forward_layer(), x, mask).at(0).to_vector(),
         b = run(bi.backward_layer(), x, mask).at(0).to_vector();
    auto y = out[0].to_vector();
    for (int n = 0; n < 2; ++n)
      for (int t = 0; t < 4; ++t)
        for (int u = 0; u < 3; ++u) {
          const float fv = f[(n * 4 + t) * 3 + u], bv = b[(n * 4 + (3 - t)) * 3 + u];
          if (!merge) {
            CHECK(y[(n * 4 + t) * 3 + u] == fv);
            CHECK(out[1].to_vector()[(n * 4 + t) * 3 + u] == bv);
          } else if (*merge == "concat") {
            CHECK(y[(n * 4 + t) * 6 + u] == fv);
            CHECK(y[(n * 4 + t) * 6 + 3 + u] == bv);
          } else {
            const float want = *merge == "sum" ? fv + bv : *merge == "mul" ? fv * bv : (fv + bv) * 0.5f;
            CHECK(y[(n * 4 + t) * 3 + u] == doctest::Approx(want).epsilon(1e-6));
          }
          // Both layers output zeros at masked steps (Keras' Bidirectional sets zero_output_for_mask).
          if (u == 0 && mask.to_vector()[n * 4 + t] == 0.f) {
            CHECK(fv == 0.f);
            CHECK(bv == 0.f);
          }
        }
  }
}

TEST_CASE("Bidirectional: gradients with a mask, return_state and every merge mode") {
  const K::Tensor mask = u8({3, 4}, {1, 1, 0, 1,  //
                                     0, 1, 1, 0,  //
                                     1, 1, 1, 1});
  for (Cell cell : kCells)
    for (const char* mode : {"concat", "mul", "ave", ""}) {
      CAPTURE(static_cast<int>(cell));
      CAPTURE(mode);
      const bool sequences = cell != Cell::gru;
      auto layer = K::layers::Bidirectional(
          make(cell, 2, {.return_sequences = sequences, .return_state = cell != Cell::simple_rnn}),
          {.merge_mode = *mode ? std::optional<std::string>(mode) : std::nullopt});
      (void)layer->call_multi({K::Input({4, 3})});
      randomize(layer, 120);
      auto r = check_masked_gradients(layer, T::uniform_tensor({3, 4, 3}, 15), mask);
      CHECK_MESSAGE(r.passed(), r.summary());
    }
}

TEST_CASE("Bidirectional: bad arguments name the layer and the fix") {
  CHECK_THROWS_WITH_AS(K::layers::Bidirectional(K::layers::Dense(2)), doctest::Contains("LSTM, GRU or SimpleRNN"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(K::layers::Bidirectional(K::layers::LSTM(2), {.merge_mode = "max"}),
                       doctest::Contains("merge_mode 'max'"), K::ValueError);
  const K::layers::RecurrentOptions backwards{.go_backwards = true};
  CHECK_THROWS_WITH_AS(K::layers::Bidirectional(K::layers::LSTM(2, {.return_sequences = true}),
                                                {.merge_mode = "sum", .backward_layer = K::layers::LSTM(3, backwards)}),
                       doctest::Contains("return_sequences"), K::ValueError);
  CHECK_THROWS_WITH_AS(K::layers::Bidirectional(K::layers::LSTM(2),
                                                {.merge_mode = "sum", .backward_layer = K::layers::LSTM(3, backwards)}),
                       doctest::Contains("same units"), K::ValueError);
  // As Keras: the two directions must differ (a go_backwards layer wrapped alone is refused too).
  CHECK_THROWS_WITH_AS(K::layers::Bidirectional(K::layers::LSTM(2), {.backward_layer = K::layers::LSTM(2)}),
                       doctest::Contains("opposite directions"), K::ValueError);
  CHECK_THROWS_WITH_AS(K::layers::Bidirectional(K::layers::GRU(2, backwards)), doctest::Contains("opposite directions"),
                       K::ValueError);
}

TEST_CASE("Bidirectional and TimeDistributed train under MirroredStrategy(2) to one replica's weights") {
  // The wrapped layers' variables are the wrappers' (core/sublayers.hpp): mirrored per replica and
  // all-reduced like any other, so 2 replicas end where 1 does.
  std::vector<std::vector<K::Tensor>> trained;
  for (int replicas : {1, 2}) {
    auto in = K::Input({5, 3});
    auto x = K::layers::TimeDistributed(K::layers::Dense(4, {.activation = "tanh", .seed = 1}))(in);
    x = K::layers::Bidirectional(K::layers::SimpleRNN(3, {.return_sequences = true, .seed = 2}))(x);
    x = K::layers::Bidirectional(K::layers::GRU(2, {.seed = 3}), {.merge_mode = "sum"})(x);
    K::Model model(in, K::layers::Dense(1, {.seed = 4})(x));
    REQUIRE(model.trainable_variables().size() == 2 + 6 + 6 + 2);
    model.compile({.optimizer = K::optimizers::SGD(0.1),
                   .loss = "mse",
                   .distribute = K::distribute::MirroredStrategy<>(replicas)});
    auto ds = K::Dataset::from_tensor_slices(T::uniform_tensor({8, 5, 3}, 16), T::uniform_tensor({8, 1}, 17)).batch(8);
    model.fit(ds, {.epochs = 2, .verbose = 0});
    trained.push_back(model.get_weights());
  }
  REQUIRE(trained[0].size() == trained[1].size());
  for (std::size_t i = 0; i < trained[0].size(); ++i) {
    auto a = trained[0][i].to_vector(), b = trained[1][i].to_vector();
    for (std::size_t k = 0; k < a.size(); ++k) CHECK(b[k] == doctest::Approx(a[k]).epsilon(1e-5));
  }
}
