// NeuMF, the official TensorFlow models' NCF (official/recommendation/neumf_model.py,
// construct_model), shared by examples/ncf.cpp, tests/test_ncf.cpp and bench/.
//
//   user id -> Embedding -> GMF part (mf_dim)  ┐ Multiply            ┐
//   item id -> Embedding -> GMF part (mf_dim)  ┘                     ├ Concatenate -> Dense(1) logits
//   user id -> Embedding -> MLP part (layers[0]/2) ┐ Concatenate     │
//   item id -> Embedding -> MLP part (layers[0]/2) ┘ -> Dense(layers[1..], relu)
//
// Defaults: the official MLPerf-style run (official/recommendation/run.sh: --layers 256,256,128,64
// --num_factors 64; regularization left at ncf_common.define_ncf_flags' defaults, mf_regularization
// 0 and mlp_regularization 0,...). ncf_common's own flag defaults are the smaller num_factors 8,
// layers 64,32,16,8 (examples/ncf.cpp --small uses those). The official model keeps each
// id's GMF and MLP vectors in one table of width mf_dim + layers[0]/2 and slices it with two
// Lambda layers; kerascpp has no Lambda, so the two slices are two tables here. The parameter
// count is the same (tests/python/test_ncf_official.py checks it against the official layout),
// and so is the maths; only the glorot_uniform limit of each table differs (its fans are
// (ids, width)). mf_regularization applies to both tables, as in the official model (its one
// table holds both parts), and mlp_regularization[0] is unused there too (layers[0] is the
// embedding concat, not a Dense).
#pragma once
#include <kerascpp/kerascpp.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace examples {

struct NcfParams {
  std::int64_t num_users = 6040;  // MovieLens-1M
  std::int64_t num_items = 3706;
  std::int64_t mf_dim = 64;
  std::vector<std::int64_t> layers = {256, 256, 128, 64};
  double mf_regularization = 0.0;
  std::vector<double> mlp_regularization = {0.0, 0.0, 0.0, 0.0};
};

// Refuses what the official model refuses (an odd layers[0]) and what cannot be built.
inline void check_ncf_params(const NcfParams& p) {
  if (p.num_users < 1 || p.num_items < 1)
    throw kerascpp::ValueError("NeuMF: num_users and num_items must be >= 1, got " + std::to_string(p.num_users) +
                               " and " + std::to_string(p.num_items));
  if (p.mf_dim < 1) throw kerascpp::ValueError("NeuMF: --num_factors must be >= 1, got " + std::to_string(p.mf_dim));
  if (p.layers.empty() || p.layers[0] % 2 != 0 || p.layers[0] < 2)
    throw kerascpp::ValueError(
        "NeuMF: --layers must start with an even size (the user and item MLP embeddings are half of it "
        "each), e.g. 64,32,16,8");
  for (auto units : p.layers)
    if (units < 1) throw kerascpp::ValueError("NeuMF: every --layers size must be >= 1, got " + std::to_string(units));
  if (p.mlp_regularization.size() != p.layers.size())
    throw kerascpp::ValueError("NeuMF: --mlp_regularization needs one factor per --layers entry (" +
                               std::to_string(p.layers.size()) + "), got " +
                               std::to_string(p.mlp_regularization.size()));
}

// Two int32 Inputs of shape (1,), "user_id" and "item_id" (the official column names); one
// logit out, trained with BinaryCrossentropy(from_logits=true) as the official sigmoid
// cross-entropy on logits.
inline kerascpp::Model neumf_model(const NcfParams& p) {
  namespace K = kerascpp;
  namespace L = kerascpp::layers;
  check_ncf_params(p);
  auto user = K::Input({1}, K::DType::int32, "user_id");
  auto item = K::Input({1}, K::DType::int32, "item_id");
  auto table = [&](std::int64_t ids, std::int64_t width, const std::string& name, const K::KerasTensor& in) {
    K::layers::EmbeddingOptions o{.embeddings_initializer = "glorot_uniform", .name = name};
    if (p.mf_regularization > 0) o.embeddings_regularizer = K::regularizers::L2(p.mf_regularization);
    return L::Flatten()(L::Embedding(ids, width, o)(in));  // (batch, 1, width) -> (batch, width)
  };
  auto mf_user = table(p.num_users, p.mf_dim, "embedding_user_mf", user);
  auto mf_item = table(p.num_items, p.mf_dim, "embedding_item_mf", item);
  auto mlp_user = table(p.num_users, p.layers[0] / 2, "embedding_user_mlp", user);
  auto mlp_item = table(p.num_items, p.layers[0] / 2, "embedding_item_mlp", item);

  auto mf_vector = L::Multiply()({mf_user, mf_item});
  auto mlp_vector = L::Concatenate()({mlp_user, mlp_item});
  for (std::size_t i = 1; i < p.layers.size(); ++i) {
    L::DenseOptions o{.activation = "relu"};
    if (p.mlp_regularization[i] > 0) o.kernel_regularizer = K::regularizers::L2(p.mlp_regularization[i]);
    mlp_vector = L::Dense(p.layers[i], o)(mlp_vector);
  }
  auto predict_vector = L::Concatenate()({mf_vector, mlp_vector});
  auto logits = L::Dense(1, {.kernel_initializer = "lecun_uniform", .name = "rating"})(predict_vector);
  return K::Model(std::vector<K::KerasTensor>{user, item}, {logits});
}

}  // namespace examples
