// The official Transformer of examples/transformer_model.hpp: 2 CPU replicas train it to the
// weights one device reaches (the tied embedding's gradient all-reduced densely), the shared
// embedding's projection mode against finite differences, and the sinusoid table. (That the tiny
// model learns its task is the transformer_learns test of tests/CMakeLists.txt, which runs the
// example.)
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "../examples/transformer_model.hpp"
#include "distribute/row_gradients.hpp"
#include "kerascpp/testing/gradient_check.hpp"
#include "mirrored_fixture.hpp"

namespace K = kerascpp;
namespace T = examples::transformer;

namespace {

T::Params small_params() {
  T::Params p = T::tiny_params();
  p.vocab_size = 12;
  p.hidden_size = 16;
  p.num_heads = 2;
  p.filter_size = 24;
  p.num_hidden_layers = 2;
  // No dropout: its masks are drawn per replica, so they differ between 1 and 2 replicas.
  p.layer_postprocess_dropout = p.attention_dropout = p.relu_dropout = 0.0;
  p.learning_rate_warmup_steps = 10;
  p.learning_rate =
      0.1;  // peak 0.008: the official 2.0 with 10 warm-up steps (0.16) is chaotic enough to blow rounding up
  return p;
}

std::vector<K::Tensor> batch_data(std::int64_t n, std::int64_t length, std::int64_t vocab) {
  std::mt19937 gen(11);
  std::vector<std::int32_t> src(static_cast<std::size_t>(n * length)), dec(src.size()), pos(src.size());
  std::vector<float> y(static_cast<std::size_t>(n * length * vocab), 0.f);
  for (std::int64_t i = 0; i < n * length; ++i) {
    src[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(2 + gen() % (vocab - 2));
    dec[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(1 + gen() % (vocab - 1));
    pos[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i % length);
    y[static_cast<std::size_t>(i * vocab + 2 + gen() % (vocab - 2))] = 1.f;
  }
  return {K::Tensor::from_vector({n, length}, src), K::Tensor::from_vector({n, length}, dec),
          K::Tensor::from_vector({n, length}, pos), K::Tensor::from_vector({n, length, vocab}, y)};
}

T::Built train(K::distribute::Strategy strategy) {
  const T::Params p = small_params();
  K::set_random_seed(4);
  T::Built built = T::build_transformer(p, 6, 9);
  built.model.compile(
      {.optimizer = K::optimizers::Adam(
           K::optimizers::schedules::TransformerSchedule(p.learning_rate, p.hidden_size, p.learning_rate_warmup_steps),
           {.beta_1 = p.adam_beta1, .beta_2 = p.adam_beta2, .epsilon = p.adam_epsilon}),
       .loss = K::losses::CategoricalCrossentropy({.from_logits = true, .label_smoothing = p.label_smoothing}),
       .distribute = strategy});
  // 20 steps of 8 sequences (the last batch of each epoch has 5: shards of 3 and 2).
  built.model.fit(K::Dataset::from_tensor_slices(batch_data(45, 6, p.vocab_size)).batch(8),
                  {.epochs = 4, .verbose = 0});
  return built;
}

}  // namespace

TEST_CASE("Transformer: 2 CPU replicas train to the weights of one device (20 steps, Adam, schedule)") {
  auto one = train(K::distribute::OneDeviceStrategy("cpu:0")).model.get_weights();
  K::detail::row_gradient_stats().reset();
  T::Built mirrored = train(K::distribute::MirroredStrategy<>(2));
  auto two = mirrored.model.get_weights();
  // The tied embedding can never take the sparse (row-gathering) path: as the pre-softmax
  // projection it gives the whole [vocab, hidden] table a dense gradient at every step, so it is
  // no row-gradient variable and is all-reduced densely in the gradient buckets with the other
  // weights. (The position Embedding is frozen: no gradient.) Nothing goes through the row reducer.
  CHECK_FALSE(mirrored.embedding->variables().front()->sparse_capable());
  CHECK_FALSE(mirrored.embedding->variables().front()->rows_gradient());
  CHECK(K::detail::row_gradient_stats().sparse_reductions == 0);
  CHECK(K::detail::row_gradient_stats().dense_reductions == 0);
  const double diff = mirrored_fixture::max_abs_diff(one, two);
  MESSAGE("max |dw| = " << diff);
  CHECK(diff <= 1e-5);
  K::set_random_seed(4);
  T::Built fresh = T::build_transformer(small_params(), 6, 9);
  CHECK(mirrored_fixture::max_abs_diff(fresh.model.get_weights(), one) > 1e-3);  // it did train
}

TEST_CASE("Transformer: the shared embedding's logits mode against finite differences; sinusoids") {
  auto embedding = std::make_shared<T::EmbeddingSharedWeights>(7, 4, 3);
  (void)(*embedding)(K::Input({5, 4}));
  auto r = K::testing::check_layer_gradients(K::LayerRef(embedding), {K::testing::uniform_tensor({2, 5, 4}, 1)});
  CHECK_MESSAGE(r.passed(), r.summary());
  // The table: N(0, hidden^-0.5) values, not zeros.
  auto w = embedding->variables().front()->value().to_vector();
  double sq = 0;
  for (float v : w) sq += double(v) * v;
  CHECK(std::sqrt(sq / double(w.size())) == doctest::Approx(0.5).epsilon(0.35));

  auto table = T::position_encoding(3, 6).to_vector();  // 3 timescales: 1, 1e-2, 1e-4
  CHECK(table[0] == 0.f);                               // sin(0)
  CHECK(table[3] == 1.f);                               // cos(0)
  CHECK(table[6] == doctest::Approx(std::sin(1.0)));    // position 1, timescale 1
  CHECK(table[6 + 1] == doctest::Approx(std::sin(0.01)));
  CHECK(table[12 + 5] == doctest::Approx(std::cos(2e-4)));
}
