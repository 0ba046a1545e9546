// Synthetic implicit feedback in MovieLens-1M shapes for examples/ncf.cpp, its tests and bench/:
// users and items get hidden latent factors and items a Zipf-like popularity, and each user's
// items are drawn (without replacement) with probability ~ exp(taste * <u, v> / sqrt(k) +
// popularity), so both "what is popular" and "what this user likes" are there to learn.
//
// Evaluation is the official model's leave-one-out protocol (official/recommendation,
// constants.py: NUM_EVAL_NEGATIVES = 999, TOP_K = 10): one positive per user is held out and
// ranked among num_eval_negatives items the user never interacted with; HR@10 is the share of
// users whose held-out item is in the top 10, NDCG@10 the mean of log(2) / log(rank + 2) over
// those hits. Ties count half (the expected rank under a random tie-break), which keeps the
// popularity baseline's many equal counts from helping or hurting it.
#pragma once
#include <kerascpp/kerascpp.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

namespace examples {

struct ImplicitDataOptions {
  std::int64_t num_users = 6040;  // MovieLens-1M: 6040 users, 3706 rated items,
  std::int64_t num_items = 3706;  // 1,000,209 ratings (>= 20 per user)
  std::int64_t mean_interactions = 166;
  std::int64_t min_interactions = 20;
  std::int64_t latent_dim = 8;
  double taste = 2.5;       // weight of the user-item affinity
  double popularity = 1.0;  // Zipf exponent of the item popularity
  std::int64_t num_eval_negatives = 999;
  std::uint64_t seed = 1;
};

struct ImplicitData {
  std::int64_t num_users = 0, num_items = 0;
  std::vector<std::vector<std::int32_t>> train_items;     // per user, sorted
  std::vector<std::int32_t> held_out;                     // per user
  std::vector<std::vector<std::int32_t>> eval_negatives;  // per user, items the user never had
  std::vector<std::int64_t> item_counts;                  // training interactions per item
  std::int64_t num_train = 0;
};

inline ImplicitData make_implicit_data(const ImplicitDataOptions& o) {
  namespace K = kerascpp;
  if (o.num_users < 1 || o.num_items < 2 || o.latent_dim < 1 || o.min_interactions < 2 ||
      o.mean_interactions < o.min_interactions || o.num_eval_negatives < 1)
    throw K::ValueError(
        "synthetic NCF data: need users >= 1, items >= 2, latent_dim >= 1 and 2 <= min_interactions "
        "<= mean_interactions, num_eval_negatives >= 1");
  // The most interactions a user may have leaves room for the evaluation negatives.
  const std::int64_t max_interactions = o.num_items - o.num_eval_negatives;
  if (max_interactions < o.mean_interactions)
    throw K::ValueError("synthetic NCF data: " + std::to_string(o.num_items) + " items cannot hold " +
                        std::to_string(o.mean_interactions) + " interactions per user plus " +
                        std::to_string(o.num_eval_negatives) +
                        " evaluation negatives; use more items or fewer negatives (--num_eval_negatives)");
  K::Rng rng(o.seed);
  const std::int64_t U = o.num_users, I = o.num_items, k = o.latent_dim;
  std::vector<float> uf(U * k), vf(I * k), bias(I);
  for (auto& x : uf) x = static_cast<float>(rng.normal());
  for (auto& x : vf) x = static_cast<float>(rng.normal());
  std::vector<std::int64_t> rank(I);
  std::iota(rank.begin(), rank.end(), 0);
  for (std::int64_t i = I - 1; i > 0; --i) std::swap(rank[i], rank[rng.next_u64() % (i + 1)]);
  for (std::int64_t i = 0; i < I; ++i) bias[i] = static_cast<float>(-o.popularity * std::log(rank[i] + 1.0));

  ImplicitData d;
  d.num_users = U;
  d.num_items = I;
  d.train_items.resize(U);
  d.held_out.resize(U);
  d.eval_negatives.resize(U);
  d.item_counts.assign(I, 0);
  const double inv_sqrt_k = 1.0 / std::sqrt(static_cast<double>(k));
  std::vector<std::pair<float, std::int32_t>> keys(I);
  std::vector<char> taken(I);
  for (std::int64_t u = 0; u < U; ++u) {
    // Activity: min + exponential with the right mean (ML-1M's long tail of heavy raters).
    double extra = -std::log(1.0 - rng.uniform_double()) * double(o.mean_interactions - o.min_interactions);
    std::int64_t n = std::min<std::int64_t>(o.min_interactions + std::int64_t(extra), max_interactions);
    // Gumbel top-n: n distinct items, each draw ~ softmax(logit) among those left.
    for (std::int64_t i = 0; i < I; ++i) {
      double dot = 0;
      for (std::int64_t f = 0; f < k; ++f) dot += double(uf[u * k + f]) * vf[i * k + f];
      double g = -std::log(-std::log(std::max(rng.uniform_double(), 1e-300)));
      keys[i] = {static_cast<float>(o.taste * dot * inv_sqrt_k + bias[i] + g), static_cast<std::int32_t>(i)};
    }
    std::partial_sort(keys.begin(), keys.begin() + n, keys.end(), [](auto& a, auto& b) { return a.first > b.first; });
    std::vector<std::int32_t> items(n);
    for (std::int64_t j = 0; j < n; ++j) items[j] = keys[j].second;
    const std::int64_t held = rng.next_u64() % n;
    d.held_out[u] = items[held];
    std::fill(taken.begin(), taken.end(), 0);
    for (auto i : items) taken[i] = 1;
    items.erase(items.begin() + held);
    std::sort(items.begin(), items.end());
    for (auto i : items) ++d.item_counts[i];
    d.num_train += static_cast<std::int64_t>(items.size());
    d.train_items[u] = std::move(items);
    auto& neg = d.eval_negatives[u];
    while (static_cast<std::int64_t>(neg.size()) < o.num_eval_negatives) {
      auto i = static_cast<std::int32_t>(rng.next_u64() % I);
      if (!taken[i]) taken[i] = 1, neg.push_back(i);
    }
  }
  return d;
}

// One epoch of training examples, as the official pipeline makes them: every training positive
// (label 1) and num_neg items outside the user's training items (label 0) for each, drawn anew each epoch, in a
// random order. Tensors (n, 1) int32 users and items, (n, 1) float32 labels.
struct TrainingEpoch {
  kerascpp::Tensor users, items, labels;
};

inline TrainingEpoch make_training_epoch(const ImplicitData& d, std::int64_t num_neg, std::uint64_t seed) {
  namespace K = kerascpp;
  K::Rng rng(seed);
  const std::int64_t n = d.num_train * (1 + num_neg);
  std::vector<std::int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  for (std::int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.next_u64() % (i + 1)]);
  TrainingEpoch e{K::Tensor({n, 1}, K::DType::int32, K::Device{}), K::Tensor({n, 1}, K::DType::int32, K::Device{}),
                  K::Tensor({n, 1}, K::DType::float32, K::Device{})};
  auto* users = e.users.data<std::int32_t>();
  auto* items = e.items.data<std::int32_t>();
  auto* labels = e.labels.data<float>();
  std::int64_t next = 0;
  for (std::int64_t u = 0; u < d.num_users; ++u) {
    const auto& pos = d.train_items[u];
    for (auto i : pos) {
      std::int64_t at = order[next++];
      users[at] = static_cast<std::int32_t>(u), items[at] = i, labels[at] = 1.f;
      for (std::int64_t j = 0; j < num_neg; ++j) {
        std::int32_t neg;
        do neg = static_cast<std::int32_t>(rng.next_u64() % d.num_items);
        while (std::binary_search(pos.begin(), pos.end(), neg));
        at = order[next++];
        users[at] = static_cast<std::int32_t>(u), items[at] = neg, labels[at] = 0.f;
      }
    }
  }
  return e;
}

struct RankingMetrics {
  double hit_rate = 0, ndcg = 0;
};

// Leave-one-out HR@top_k and NDCG@top_k from a scorer that fills scores[i] for (users[i], items[i]).
inline RankingMetrics rank_held_out(
    const ImplicitData& d,
    const std::function<void(const std::vector<std::int32_t>&, const std::vector<std::int32_t>&, std::vector<float>&)>&
        score,
    std::int64_t top_k = 10) {
  std::vector<std::int32_t> users, items;
  for (std::int64_t u = 0; u < d.num_users; ++u) {
    users.push_back(static_cast<std::int32_t>(u));
    items.push_back(d.held_out[u]);
    for (auto i : d.eval_negatives[u]) users.push_back(static_cast<std::int32_t>(u)), items.push_back(i);
  }
  std::vector<float> scores(users.size());
  score(users, items, scores);
  RankingMetrics m;
  std::size_t at = 0;
  for (std::int64_t u = 0; u < d.num_users; ++u) {
    const float pos = scores[at++];
    double above = 0;
    for (std::size_t j = 0; j < d.eval_negatives[u].size(); ++j, ++at)
      above += scores[at] > pos ? 1.0 : scores[at] == pos ? 0.5 : 0.0;
    if (above < double(top_k)) {
      m.hit_rate += 1;
      m.ndcg += std::log(2.0) / std::log(above + 2.0);
    }
  }
  m.hit_rate /= double(d.num_users);
  m.ndcg /= double(d.num_users);
  return m;
}

// The popularity baseline: every user's items ranked by their training count.
inline RankingMetrics popularity_baseline(const ImplicitData& d, std::int64_t top_k = 10) {
  return rank_held_out(
      d,
      [&](const std::vector<std::int32_t>&, const std::vector<std::int32_t>& items, std::vector<float>& s) {
        for (std::size_t i = 0; i < items.size(); ++i) s[i] = static_cast<float>(d.item_counts[items[i]]);
      },
      top_k);
}

// The model's ranking: its logits for every (user, candidate) pair, batch_size pairs at a time.
inline RankingMetrics model_ranking(kerascpp::Model& model, const ImplicitData& d, std::int64_t batch_size,
                                    std::int64_t top_k = 10) {
  namespace K = kerascpp;
  return rank_held_out(
      d,
      [&](const std::vector<std::int32_t>& users, const std::vector<std::int32_t>& items, std::vector<float>& s) {
        const auto n = static_cast<std::int64_t>(users.size());
        K::Tensor u({n, 1}, K::DType::int32, K::Device{}), i({n, 1}, K::DType::int32, K::Device{});
        std::copy(users.begin(), users.end(), u.data<std::int32_t>());
        std::copy(items.begin(), items.end(), i.data<std::int32_t>());
        K::Tensor logits = model.predict(K::Dataset::from_tensor_slices({u, i}).batch(batch_size), {.verbose = 0});
        auto v = logits.to_vector();
        std::copy(v.begin(), v.end(), s.begin());
      },
      top_k);
}

}  // namespace examples
