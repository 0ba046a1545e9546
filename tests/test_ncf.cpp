// examples/ncf.cpp's NeuMF (examples/ncf_model.hpp): 2 CPU replicas train it to one device's
// weights (the embedding tables' gradients gathered as rows, not all-reduced densely), and a
// short run ranks held-out items better than the popularity baseline
// (examples/ncf_data.hpp's leave-one-out HR@10). Its layout against the official Keras model is
// tests/python/test_ncf_official.py.
#include <doctest/doctest.h>

#include <vector>

#include "../examples/ncf_data.hpp"
#include "../examples/ncf_model.hpp"
#include "distribute/row_gradients.hpp"
#include "kerascpp/kerascpp.hpp"
#include "mirrored_fixture.hpp"

namespace K = kerascpp;
using mirrored_fixture::max_abs_diff;

namespace {

examples::NcfParams small_params(std::int64_t users, std::int64_t items) {
  examples::NcfParams p;
  p.num_users = users;
  p.num_items = items;
  p.mf_dim = 4;
  p.layers = {16, 8, 4};
  p.mlp_regularization = {0, 0, 0};
  return p;
}

// Tables large enough that a batch's rows are smaller than a table (the sparse path's condition):
// 32 ids x (8-byte id + 4 floats) = 768 bytes against 500 x 4 floats = 8000 for the smallest.
constexpr std::int64_t kUsers = 500, kItems = 800;

// 20 Adam steps of batch 32 over a fixed epoch of (user, item, label) rows.
std::vector<K::Tensor> train_20_steps(K::distribute::Strategy strategy, const examples::TrainingEpoch& e) {
  K::set_random_seed(11);
  K::Model model = examples::neumf_model(small_params(kUsers, kItems));
  model.compile({.optimizer = K::optimizers::Adam(0.01),
                 .loss = K::losses::BinaryCrossentropy({.from_logits = true}),
                 .distribute = strategy});
  auto data = K::Dataset::from_tensor_slices({e.users, e.items, e.labels}).batch(32).take(20);
  model.fit(data, {.epochs = 1, .verbose = 0});
  CHECK(model.optimizer().iterations() == 20);
  return model.get_weights();
}

}  // namespace

TEST_CASE("ncf: NeuMF under MirroredStrategy with 2 CPU replicas trains to one device's weights (20 Adam steps)") {
  examples::ImplicitDataOptions o{.num_users = kUsers,
                                  .num_items = kItems,
                                  .mean_interactions = 8,
                                  .min_interactions = 4,
                                  .num_eval_negatives = 5,
                                  .seed = 3};
  auto data = examples::make_implicit_data(o);
  auto epoch = examples::make_training_epoch(data, 4, 5);
  REQUIRE(epoch.labels.dim(0) >= 20 * 32);
  auto one = train_20_steps(K::distribute::OneDeviceStrategy("cpu:0"), epoch);
  K::detail::row_gradient_stats().reset();
  auto two = train_20_steps(K::distribute::MirroredStrategy<>(2), epoch);
  // The embedding tables get gradients in only the rows a batch touched, and the replicas' shards
  // touch different rows: each of the 4 tables (GMF and MLP, users and items) is reduced by
  // gathering its rows at every step, never by the dense all-reduce.
  CHECK(K::detail::row_gradient_stats().sparse_reductions == 4 * 20);
  CHECK(K::detail::row_gradient_stats().dense_reductions == 0);
  CHECK(max_abs_diff(one, two) <= 1e-5);
  K::set_random_seed(11);
  K::Model fresh = examples::neumf_model(small_params(kUsers, kItems));
  CHECK(max_abs_diff(fresh.get_weights(), one) > 1e-3);  // training moved the weights
}

TEST_CASE("ncf: a short run beats the popularity baseline on leave-one-out HR@10") {
  // examples/ncf.cpp --small, smaller still: 500 users, 400 items, 99 evaluation negatives.
  examples::ImplicitDataOptions o{
      .num_users = 500, .num_items = 400, .mean_interactions = 40, .num_eval_negatives = 99, .seed = 7};
  auto data = examples::make_implicit_data(o);
  auto pop = examples::popularity_baseline(data);
  examples::NcfParams p;
  p.num_users = o.num_users;
  p.num_items = o.num_items;
  p.mf_dim = 8;
  p.layers = {64, 32, 16, 8};
  K::set_random_seed(42);
  K::Model model = examples::neumf_model(p);
  model.compile(
      {.optimizer = K::optimizers::Adam(0.005), .loss = K::losses::BinaryCrossentropy({.from_logits = true})});
  auto untrained = examples::model_ranking(model, data, 10000);
  for (int epoch = 0; epoch < 8; ++epoch) {
    auto e = examples::make_training_epoch(data, 4, 100 + epoch);
    model.fit(K::Dataset::from_tensor_slices({e.users, e.items, e.labels}).batch(1024), {.epochs = 1, .verbose = 0});
  }
  auto trained = examples::model_ranking(model, data, 10000);
  INFO("popularity HR@10 " << pop.hit_rate << " NDCG@10 " << pop.ndcg << "; untrained HR@10 " << untrained.hit_rate
                           << "; NeuMF HR@10 " << trained.hit_rate << " NDCG@10 " << trained.ndcg);
  // Random ranking among 100 candidates gives HR@10 ~0.1; popularity knows the skew.
  CHECK(untrained.hit_rate < 0.25);
  CHECK(pop.hit_rate > 0.2);
  CHECK(trained.hit_rate > pop.hit_rate + 0.05);
  CHECK(trained.ndcg > pop.ndcg);
}

TEST_CASE("ncf: leave-one-out metrics count ranks as the official evaluation") {
  // 2 users, 3 negatives each; the scorer puts user 0's held-out item first (HR 1, NDCG 1) and
  // user 1's behind exactly one negative (rank 1: NDCG log 2 / log 3), top_k 1 then 2.
  examples::ImplicitData d;
  d.num_users = 2;
  d.num_items = 10;
  d.held_out = {0, 1};
  d.eval_negatives = {{5, 6, 7}, {5, 6, 7}};
  auto scorer = [](const std::vector<std::int32_t>& users, const std::vector<std::int32_t>& items,
                   std::vector<float>& s) {
    for (std::size_t i = 0; i < items.size(); ++i)
      s[i] = users[i] == 0 ? (items[i] == 0 ? 9.f : 1.f) : (items[i] == 1 ? 5.f : items[i] == 6 ? 8.f : 2.f);
  };
  auto top1 = examples::rank_held_out(d, scorer, 1);
  CHECK(top1.hit_rate == doctest::Approx(0.5));
  CHECK(top1.ndcg == doctest::Approx(0.5));
  auto top2 = examples::rank_held_out(d, scorer, 2);
  CHECK(top2.hit_rate == doctest::Approx(1.0));
  CHECK(top2.ndcg == doctest::Approx((1.0 + std::log(2.0) / std::log(3.0)) / 2));
}

TEST_CASE("ncf: bad parameters name the flag and the fix") {
  auto p = small_params(5, 5);
  p.layers = {15, 8};
  p.mlp_regularization = {0, 0};
  CHECK_THROWS_WITH_AS(examples::neumf_model(p), doctest::Contains("--layers must start with an even size"),
                       K::ValueError);
  p = small_params(5, 5);
  p.mlp_regularization = {0};
  CHECK_THROWS_WITH_AS(examples::neumf_model(p), doctest::Contains("one factor per --layers entry"), K::ValueError);
  examples::ImplicitDataOptions o{.num_users = 5, .num_items = 50, .mean_interactions = 20, .num_eval_negatives = 40};
  CHECK_THROWS_WITH_AS(examples::make_implicit_data(o), doctest::Contains("--num_eval_negatives"), K::ValueError);
}
