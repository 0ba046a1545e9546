// SparseTopKCategoricalAccuracy: hits counted against a rank computed another way (sorting), ties
// at the k-th score counted in, labels out of range named, the same sums over 2 replicas as 1
// (Keras values: tests/python/test_loss_values.py).
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing.hpp"

namespace K = kerascpp;
namespace KT = kerascpp::testing;

TEST_CASE("top-k accuracy: hits equal a rank by sorting, ties count in") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t n = 40, classes = 9;
  std::mt19937 gen(3);
  std::vector<float> scores(static_cast<std::size_t>(n * classes));
  // Scores on a coarse grid so that ties happen.
  for (float& s : scores) s = static_cast<float>(gen() % 6) * 0.25f;
  std::vector<std::int32_t> labels(static_cast<std::size_t>(n));
  for (auto& l : labels) l = static_cast<std::int32_t>(gen() % classes);
  K::Tensor pred = K::Tensor::from_vector({n, classes}, scores);
  K::Tensor lab({n}, K::DType::int32, K::Device{});
  std::copy(labels.begin(), labels.end(), lab.data<std::int32_t>());
  for (int k : {1, 2, 5, 9}) {
    CAPTURE(k);
    double expected = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      // The label is in the top k when its score is >= the k-th largest score of the row.
      std::vector<float> row(scores.begin() + i * classes, scores.begin() + (i + 1) * classes);
      std::vector<float> sorted = row;
      std::sort(sorted.rbegin(), sorted.rend());
      expected +=
          row[static_cast<std::size_t>(labels[static_cast<std::size_t>(i)])] >= sorted[static_cast<std::size_t>(k - 1)];
    }
    CHECK(be->sparse_top_k_accuracy_sum(pred, lab, k) == expected);
  }
  CHECK(be->sparse_top_k_accuracy_sum(pred, lab, static_cast<int>(classes)) == static_cast<double>(n));
  lab.data<std::int32_t>()[7] = 9;
  CHECK_THROWS_AS(be->sparse_top_k_accuracy_sum(pred, lab, 2), K::Error);
  CHECK_THROWS_WITH_AS(K::metrics::SparseTopKCategoricalAccuracy(0), doctest::Contains("k must be >= 1"),
                       K::ValueError);
}

TEST_CASE("top-k accuracy: logged by fit, the same over 2 replicas as 1") {
  auto blobs = KT::make_blobs(120, 6, 4, 9);
  std::vector<double> logged;
  for (int replicas : {1, 2}) {
    K::set_random_seed(2);
    auto in = K::Input({4});
    K::Model model(in, K::layers::Dense(6, {.activation = "softmax"})(K::layers::Dense(8)(in)));
    model.compile(
        {.optimizer = "sgd",
         .loss = "sparse_categorical_crossentropy",
         .metrics = {"sparse_top_k_categorical_accuracy", K::metrics::SparseTopKCategoricalAccuracy(2, "top2")},
         .distribute = K::distribute::MirroredStrategy<>(replicas)});
    auto logs = model.evaluate(blobs.dataset().batch(32), {.verbose = 0});
    CHECK(logs["top2"] <= logs["sparse_top_k_categorical_accuracy"]);
    logged.push_back(logs["top2"]);
  }
  CHECK(logged[0] == logged[1]);
}
