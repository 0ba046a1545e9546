// CentralStorageStrategy on CPU replicas: each trainable variable and its optimizer slots exist
// once on the host, every replica reads that copy, and the summed gradient is applied once; the
// result equals one device on the same global batches (to float tolerance), as MirroredStrategy's.
#include <doctest/doctest.h>

#include <cmath>

#include "kerascpp/distribute/central_storage.hpp"
#include "kerascpp/kerascpp.hpp"
#include "mirrored_fixture.hpp"

namespace K = kerascpp;
namespace D = kerascpp::distribute;

namespace {

using mirrored_fixture::Data;
using mirrored_fixture::make_data;
using mirrored_fixture::max_abs_diff;
using mirrored_fixture::small_convnet;

std::vector<K::Tensor> train(D::Strategy strategy, K::optimizers::OptimizerRef opt, K::Model& model) {
  model.compile({.optimizer = opt, .loss = "sparse_categorical_crossentropy", .distribute = strategy});
  Data d = make_data(96);
  // 12 steps: two epochs of 6 batches of 16 (the last partial batch of 96 % 16 = 0 rows is none).
  model.fit(K::Dataset::from_tensor_slices(d.x, d.y).batch(16), {.epochs = 2, .verbose = 0});
  return model.get_weights();
}

// A tiny recommender-shaped model: an Embedding (row gradients) under a Dense head.
K::Model embedding_model() {
  K::set_random_seed(11);
  auto ids = K::Input({3}, K::DType::int32, "ids");
  auto x = K::layers::Flatten()(K::layers::Embedding(20, 4)(ids));
  auto out = K::layers::Dense(1, {.activation = "sigmoid"})(x);
  return K::Model(ids, out);
}

}  // namespace

TEST_CASE("central storage: N CPU replicas match one device (SGD momentum and Adam, synced BN), one copy each") {
  for (int replicas : {2, 3}) {
    for (bool adam : {false, true}) {
      CAPTURE(replicas);
      CAPTURE(adam);
      auto opt = [&]() -> K::optimizers::OptimizerRef {
        if (adam) return K::optimizers::Adam(1e-3);
        return K::optimizers::SGD(0.05, {.momentum = 0.9});
      };
      K::Model reference = small_convnet(true);
      auto one = train(D::OneDeviceStrategy("cpu:0"), opt(), reference);
      K::Model central = small_convnet(true);
      D::CentralStorageStrategy strategy(replicas);
      auto many = train(strategy, opt(), central);
      const double diff = max_abs_diff(one, many);
      MESSAGE("replicas=" << replicas << " adam=" << adam << " max|dw|=" << diff);
      CHECK(diff <= 1e-5);
      CHECK(strategy.num_replicas_in_sync() == replicas);
      // Trainable variables: one host copy that every replica reads; BN's moving statistics stay
      // one per replica. The optimizer holds one set of slots, not one per replica.
      for (K::Variable* v : central.variables()) {
        REQUIRE(v->num_copies() == replicas);
        for (int r = 1; r < replicas; ++r) CHECK(v->value(r).same_storage(v->value(0)) == v->trainable());
      }
      CHECK(central.optimizer().slot_replicas() == 1);
    }
  }
}

TEST_CASE("central storage: embedding row gradients and a custom loop equal one device") {
  K::Rng rng(5);
  K::Tensor ids({40, 3}, K::DType::int32, K::Device{});
  K::Tensor y({40, 1}, K::DType::float32, K::Device{});
  for (std::int64_t i = 0; i < ids.numel(); ++i)
    ids.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng.next_u64() % 20);
  for (std::int64_t i = 0; i < 40; ++i) y.data<float>()[i] = static_cast<float>(rng.next_u64() % 2);

  auto fit = [&](D::Strategy s) {
    K::Model m = embedding_model();
    m.compile({.optimizer = K::optimizers::Adam(1e-2), .loss = "binary_crossentropy", .distribute = s});
    m.fit(K::Dataset::from_tensor_slices(ids, y).batch(10), {.epochs = 2, .verbose = 0});
    return m.get_weights();
  };
  auto one = fit(D::OneDeviceStrategy());
  CHECK(max_abs_diff(one, fit(D::CentralStorageStrategy(2))) <= 1e-5);

  // strategy.run + forward/backward/apply_gradients: every replica calls apply_gradients, the
  // one copy is updated once.
  D::CentralStorageStrategy strategy(2);
  K::Model custom = embedding_model();
  custom.compile({.optimizer = K::optimizers::Adam(1e-2), .loss = "binary_crossentropy", .distribute = strategy});
  K::losses::BinaryCrossentropy loss;
  for (int epoch = 0; epoch < 2; ++epoch)
    for (std::int64_t start = 0; start < 40; start += 10) {
      K::Tensor gx = ids.slice(start, start + 10), gy = y.slice(start, start + 10);
      strategy.run([&](K::ReplicaContext& ctx) {
        K::Tensor x = strategy.shard(ctx, gx), t = strategy.shard(ctx, gy);
        K::Tensor pred = custom.forward(ctx, x);
        K::Tensor per_example({x.dim(0)}), grad(pred.shape());
        loss.compute(*ctx.backend, pred, t, per_example, grad, 1.0f / static_cast<float>(gx.dim(0)));
        custom.backward(ctx, grad);
        custom.apply_gradients(ctx);
      });
      custom.optimizer().finish_step();
    }
  CHECK(max_abs_diff(one, custom.get_weights()) <= 1e-5);
}

TEST_CASE("central storage: bad compute devices are refused with the fix") {
  CHECK_THROWS_WITH_AS(D::CentralStorageStrategy(0), doctest::Contains("at least 1"), K::ValueError);
  CHECK_THROWS_WITH_AS(D::CentralStorageStrategy(std::vector<std::string>{}), doctest::Contains("is empty"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(D::CentralStorageStrategy(std::vector<std::string>{"gpu:0"}),
                       doctest::Contains("MirroredStrategy for GPUs"), K::ValueError);
  CHECK(D::CentralStorageStrategy(2).describe().find("CentralStorageStrategy(cpu:0, cpu:1") == 0);
}
