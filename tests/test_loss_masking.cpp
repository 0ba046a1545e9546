// Keras weights the loss by the output's mask (src/training/loss_mask.hpp): a sequence model from
// Embedding(mask_zero) is scored on its unmasked steps only, Σ mask·w·loss / Σ mask, and its
// metrics count unmasked steps only. Checked here against the formula on predict()'s outputs, by
// finite differences of evaluate()'s loss, by the invariance of training to the labels of masked
// steps, and MirroredStrategy (2 replicas holding different numbers of padded steps) against
// one device.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kerascpp/kerascpp.hpp"
#include "mirrored_fixture.hpp"

namespace K = kerascpp;

namespace {

constexpr std::int64_t kN = 6, kT = 5, kVocab = 9, kClasses = 4;

// ids [N, T] with trailing padding (0) of different lengths per row; every row keeps >= 1 token.
K::Tensor padded_ids() {
  const std::int64_t lengths[kN] = {5, 1, 3, 0, 4, 2};  // row 3 is all padding
  std::vector<std::int32_t> ids(kN * kT, 0);
  for (std::int64_t n = 0; n < kN; ++n)
    for (std::int64_t t = 0; t < lengths[n]; ++t) ids[n * kT + t] = static_cast<std::int32_t>(1 + (n * 3 + t * 5) % 8);
  return K::Tensor::from_vector({kN, kT}, ids);
}

K::Tensor labels(std::int32_t masked_label) {
  K::Tensor ids = padded_ids();
  std::vector<std::int32_t> y(kN * kT);
  for (std::int64_t i = 0; i < kN * kT; ++i)
    y[i] = ids.data<std::int32_t>()[i] == 0 ? masked_label : static_cast<std::int32_t>((i * 7) % kClasses);
  return K::Tensor::from_vector({kN, kT}, y);
}

K::Model tagger() {
  K::set_random_seed(5);
  auto in = K::Input({kT}, K::DType::int32);
  auto x = K::layers::Embedding(kVocab, 6, {.mask_zero = true})(in);
  x = K::layers::Dense(8, {.activation = "tanh"})(x);
  auto out = K::layers::Dense(kClasses, {.activation = "softmax"})(x);
  return K::Model(in, out);
}

K::Dataset data(std::int32_t masked_label, std::int64_t batch) {
  return K::Dataset::from_tensor_slices(padded_ids(), labels(masked_label)).batch(batch);
}

}  // namespace

TEST_CASE("loss masking: evaluate's loss and accuracy count only the unmasked steps (Keras' formula)") {
  K::Model m = tagger();
  m.compile({.optimizer = "sgd", .loss = "sparse_categorical_crossentropy", .metrics = {"accuracy"}});
  auto logs = m.evaluate(data(1, kN), {.verbose = 0});
  const std::vector<float> p =
      m.predict(K::Dataset::from_tensor_slices(padded_ids()).batch(kN), {.verbose = 0}).to_vector();
  const K::Tensor ids = padded_ids(), y = labels(1);
  double loss = 0, correct = 0, valid = 0, unmasked_mean = 0;
  for (std::int64_t i = 0; i < kN * kT; ++i) {
    const float* row = &p[static_cast<std::size_t>(i * kClasses)];
    const int label = y.data<std::int32_t>()[i];
    int arg = 0;
    for (int c = 1; c < kClasses; ++c)
      if (row[c] > row[arg]) arg = c;
    unmasked_mean += -std::log(row[label]) / (kN * kT);
    if (ids.data<std::int32_t>()[i] == 0) continue;
    valid += 1;
    loss += -std::log(row[label]);
    correct += arg == label;
  }
  CHECK(valid == 15);
  CHECK(logs["loss"] == doctest::Approx(loss / valid).epsilon(1e-5));
  CHECK(logs["accuracy"] == doctest::Approx(correct / valid).epsilon(1e-6));
  // The mask really changed the number (the mean over every step differs).
  CHECK(std::fabs(unmasked_mean - loss / valid) > 1e-3);
}

TEST_CASE("loss masking: batches are weighted by size in the epoch's loss, as Keras' loss tracker does") {
  K::Model m = tagger();
  m.compile({.optimizer = "sgd", .loss = "sparse_categorical_crossentropy"});
  // Batches of 4 and 2 rows: the epoch loss is (4·L1 + 2·L2) / 6 with each Li over its own valid steps.
  const double whole = m.evaluate(data(1, 4), {.verbose = 0})["loss"];
  K::Tensor ids = padded_ids(), y = labels(1);
  const double l1 =
      m.evaluate(K::Dataset::from_tensor_slices(ids.slice(0, 4), y.slice(0, 4)).batch(4), {.verbose = 0})["loss"];
  const double l2 =
      m.evaluate(K::Dataset::from_tensor_slices(ids.slice(4, 6), y.slice(4, 6)).batch(2), {.verbose = 0})["loss"];
  CHECK(whole == doctest::Approx((4 * l1 + 2 * l2) / 6).epsilon(1e-6));
}

TEST_CASE("loss masking: the gradient is the masked loss's (finite differences) and ignores masked labels") {
  auto train_once = [](std::int32_t masked_label) {
    K::Model m = tagger();
    m.compile({.optimizer = K::optimizers::SGD(1.0), .loss = "sparse_categorical_crossentropy"});
    const auto before = m.get_weights();
    m.fit(data(masked_label, kN), {.epochs = 1, .verbose = 0});
    return std::make_pair(before, m.get_weights());
  };
  auto [w0, w1] = train_once(1);
  auto [v0, v1] = train_once(3);  // other labels on the masked steps only
  for (std::size_t i = 0; i < w1.size(); ++i) CHECK(w1[i].to_vector() == v1[i].to_vector());

  // SGD(1): w1 = w0 − g. Central differences of evaluate()'s loss on a few output-layer weights.
  K::Model probe = tagger();
  probe.compile({.optimizer = "sgd", .loss = "sparse_categorical_crossentropy"});
  const std::size_t kernel = w0.size() - 2;  // the last Dense's kernel [8, 4]
  for (std::int64_t e : {0, 5, 13, 30}) {
    const double h = 1e-2;
    auto loss_at = [&](double delta) {
      auto w = w0;
      std::vector<float> k = w[kernel].to_vector();
      k[static_cast<std::size_t>(e)] += static_cast<float>(delta);
      w[kernel] = K::Tensor::from_vector(w[kernel].shape(), k);
      probe.set_weights(w);
      return probe.evaluate(data(1, kN), {.verbose = 0})["loss"];
    };
    const double fd = (loss_at(h) - loss_at(-h)) / (2 * h);
    const double g =
        w0[kernel].to_vector()[static_cast<std::size_t>(e)] - w1[kernel].to_vector()[static_cast<std::size_t>(e)];
    CAPTURE(e);
    CHECK(g == doctest::Approx(fd).epsilon(2e-3).scale(1e-3));
  }
}

TEST_CASE("loss masking: 2 replicas with different padded steps train to one device's weights") {
  auto train = [](K::distribute::Strategy strategy) {
    K::Model m = tagger();
    m.compile({.optimizer = K::optimizers::Adam(1e-2),
               .loss = "sparse_categorical_crossentropy",
               .metrics = {"accuracy"},
               .distribute = strategy});
    // 3 epochs of one batch of 6 rows: replica 0 gets rows 0-2 (9 steps), replica 1 rows 3-5 (6 steps).
    auto history = m.fit(data(1, kN), {.epochs = 3, .verbose = 0});
    return std::make_pair(m.get_weights(), history.history.at("loss"));
  };
  auto [one, one_loss] = train(K::distribute::OneDeviceStrategy("cpu:0"));
  auto [two, two_loss] = train(K::distribute::MirroredStrategy<>(2));
  CHECK(mirrored_fixture::max_abs_diff(one, two) <= 1e-6);
  REQUIRE(one_loss.size() == two_loss.size());
  for (std::size_t i = 0; i < one_loss.size(); ++i) CHECK(two_loss[i] == doctest::Approx(one_loss[i]).epsilon(1e-6));
}
