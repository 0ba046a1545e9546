// MirroredStrategy on CPU replicas is exact: N replicas on a global batch give the weights one
// device gives on that batch (to float tolerance), for any batch size, and copies stay identical.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "kerascpp/kerascpp.hpp"
#include "mirrored_fixture.hpp"

namespace K = kerascpp;

namespace {

using mirrored_fixture::Data;
using mirrored_fixture::make_data;
using mirrored_fixture::max_abs_diff;
using mirrored_fixture::small_convnet;

// Trains `steps` steps (cycling over the data in order) and returns the final weights.
std::vector<K::Tensor> train(K::distribute::Strategy strategy, K::optimizers::OptimizerRef opt, std::int64_t batch,
                             std::int64_t examples, int epochs, bool sync_bn, K::Model* keep = nullptr) {
  K::Model model = small_convnet(sync_bn);
  model.compile(
      {.optimizer = opt, .loss = "sparse_categorical_crossentropy", .metrics = {"accuracy"}, .distribute = strategy});
  Data d = make_data(examples);
  model.fit(K::Dataset::from_tensor_slices(d.x, d.y).batch(batch), {.epochs = epochs, .verbose = 0});
  if (keep) *keep = model;
  return model.get_weights();
}

void check_copies_identical(K::Model& model) {
  for (K::Variable* v : model.variables())
    for (int r = 1; r < v->num_copies(); ++r)
      CHECK_MESSAGE(std::memcmp(v->value(0).raw(), v->value(r).raw(), v->value(0).nbytes()) == 0,
                    v->path() << " copy " << r << " differs from copy 0");
}

}  // namespace

TEST_CASE("mirrored: N CPU replicas match one device after 20 steps (SGD momentum and Adam, synced BN)") {
  for (int replicas : {2, 3}) {
    for (int which = 0; which < 2; ++which) {
      auto opt = [&]() -> K::optimizers::OptimizerRef {
        if (which == 0) return K::optimizers::SGD(0.05, {.momentum = 0.9});
        return K::optimizers::Adam(1e-3);
      };
      CAPTURE(replicas);
      CAPTURE(which);
      // 20 steps: 160 examples in batches of 16, two epochs of 10 steps.
      auto one = train(K::distribute::OneDeviceStrategy("cpu:0"), opt(), 16, 160, 2, true);
      K::Model mirrored = small_convnet(true);
      auto many = train(K::distribute::MirroredStrategy<>(replicas), opt(), 16, 160, 2, true, &mirrored);
      double diff = max_abs_diff(one, many);
      MESSAGE("replicas=" << replicas << " optimizer=" << std::string(which ? "Adam" : "SGD") << " max|dw|=" << diff);
      CHECK(diff <= 1e-5);
      check_copies_identical(mirrored);
    }
  }
}

TEST_CASE("mirrored: uneven shards — batch 7 over 2, partial last batch, batch 1 over 2") {
  struct Case {
    std::int64_t batch, examples;
  };
  for (Case c : {Case{7, 42}, Case{16, 50}, Case{1, 12}}) {
    CAPTURE(c.batch);
    CAPTURE(c.examples);
    auto one = train(K::distribute::OneDeviceStrategy(), K::optimizers::SGD(0.05, {.momentum = 0.9}), c.batch,
                     c.examples, 1, true);
    K::Model mirrored = small_convnet(true);
    auto two = train(K::distribute::MirroredStrategy<>(2), K::optimizers::SGD(0.05, {.momentum = 0.9}), c.batch,
                     c.examples, 1, true, &mirrored);
    double diff = max_abs_diff(one, two);
    MESSAGE("batch=" << c.batch << " examples=" << c.examples << " max|dw|=" << diff);
    CHECK(diff <= 1e-5);
    for (auto& t : two)
      for (float v : t.to_vector()) REQUIRE(std::isfinite(v));
    check_copies_identical(mirrored);
  }
}

TEST_CASE("mirrored: evaluate and predict under 2 replicas equal one device") {
  Data d = make_data(37);  // not a multiple of the batch
  auto ds = K::Dataset::from_tensor_slices(d.x, d.y).batch(8);
  K::Model a = small_convnet(false), b = small_convnet(false);
  a.compile({.optimizer = "sgd", .loss = "sparse_categorical_crossentropy", .metrics = {"accuracy"}});
  b.compile({.optimizer = "sgd",
             .loss = "sparse_categorical_crossentropy",
             .metrics = {"accuracy"},
             .distribute = K::distribute::MirroredStrategy<>(2)});
  auto ea = a.evaluate(ds, {.verbose = 0});
  auto eb = b.evaluate(ds, {.verbose = 0});
  CHECK(ea["loss"] == doctest::Approx(eb["loss"]).epsilon(1e-6));
  CHECK(ea["accuracy"] == doctest::Approx(eb["accuracy"]).epsilon(1e-9));
  auto pa = a.predict(ds), pb = b.predict(ds);
  REQUIRE(pa.shape() == pb.shape());
  CHECK(pa.dim(0) == 37);
  CHECK(max_abs_diff({pa}, {pb}) <= 1e-6);
}

TEST_CASE("mirrored: per-replica BN statistics keep moving averages identical across copies") {
  K::Model m = small_convnet(false);
  train(K::distribute::MirroredStrategy<>(2), K::optimizers::Adam(1e-3), 10, 40, 1, false, &m);
  check_copies_identical(m);
}

TEST_CASE("strategy errors: unknown GPU, mixed kinds, GPU all-reduce on CPU replicas, zero replicas") {
  // gpu:64 exists on no machine this suite runs on; the GPU-absent cases are in test_gpu_host.cpp.
  CHECK_THROWS_WITH_AS(K::distribute::OneDeviceStrategy("gpu:64"), doctest::Contains("Available devices"), K::Error);
  CHECK_THROWS_WITH_AS(K::distribute::MirroredStrategy<>(std::vector<std::string>{"cpu:0", "gpu:0"}),
                       doctest::Contains("mixed device kinds"), K::Error);
  CHECK_THROWS_WITH_AS(K::distribute::MirroredStrategy<K::distribute::NcclAllReduce>(2),
                       doctest::Contains("needs GPU devices"), K::Error);
  CHECK_THROWS_AS(K::distribute::MirroredStrategy<>(0), K::Error);
  CHECK_THROWS_AS(K::distribute::OneDeviceStrategy("tpu:0"), K::Error);
}

TEST_CASE("strategy: shard ranges split unevenly and allow empty shards") {
  K::distribute::MirroredStrategy<> s(3);
  auto r = s.shard_ranges(7);
  REQUIRE(r.size() == 3);
  CHECK(r[0] == std::pair<std::int64_t, std::int64_t>{0, 3});
  CHECK(r[1] == std::pair<std::int64_t, std::int64_t>{3, 5});
  CHECK(r[2] == std::pair<std::int64_t, std::int64_t>{5, 7});
  auto e = s.shard_ranges(1);
  CHECK(e[1].first == e[1].second);
  CHECK(e[2].first == e[2].second);
}

TEST_CASE("strategy: an exception on one replica is rethrown, not a hang") {
  K::distribute::MirroredStrategy<> s(2);
  CHECK_THROWS_WITH(s.run([](K::ReplicaContext& ctx) {
    if (ctx.replica_id == 1) throw K::Error("replica 1 failed");
    std::vector<K::Tensor> t{K::Tensor::zeros({4})};
    ctx.cross->all_reduce_sum(ctx.replica_id, t);  // would wait forever for replica 1 without abort
  }),
                    "replica 1 failed");
  // The strategy is usable afterwards.
  std::vector<double> seen(2, 0);
  s.run([&](K::ReplicaContext& ctx) {
    std::vector<K::Tensor> t{K::Tensor::full({3}, float(ctx.replica_id + 1))};
    ctx.cross->all_reduce_sum(ctx.replica_id, t);
    seen[static_cast<std::size_t>(ctx.replica_id)] = t[0].to_vector()[2];
  });
  CHECK(seen[0] == 3.0);
  CHECK(seen[1] == 3.0);
}

TEST_CASE("mirrored: many small gradient buckets reduced asynchronously give the same result") {
  auto one = train(K::distribute::OneDeviceStrategy(), K::optimizers::Adam(1e-3), 16, 64, 1, true);
  K::Model mirrored = small_convnet(true);
  // 16-byte buckets: every variable is its own bucket, reduced by whichever replica finishes it last.
  auto many = train(K::distribute::MirroredStrategy<>(3, {.bucket_bytes = 16}), K::optimizers::Adam(1e-3), 16, 64, 1,
                    true, &mirrored);
  CHECK(max_abs_diff(one, many) <= 1e-5);
  check_copies_identical(mirrored);
}

TEST_CASE("custom training loop: strategy.run + forward/backward/apply_gradients equals fit, bit for bit") {
  K::distribute::MirroredStrategy<> strategy(2);
  Data d = make_data(48);
  K::Model by_fit = small_convnet(true);
  by_fit.compile({.optimizer = K::optimizers::SGD(0.05, {.momentum = 0.9}),
                  .loss = "sparse_categorical_crossentropy",
                  .distribute = strategy});
  by_fit.fit(K::Dataset::from_tensor_slices(d.x, d.y).batch(12), {.epochs = 1, .verbose = 0});

  K::Model custom = small_convnet(true);
  custom.compile({.optimizer = K::optimizers::SGD(0.05, {.momentum = 0.9}),
                  .loss = "sparse_categorical_crossentropy",
                  .distribute = strategy});
  K::losses::SparseCategoricalCrossentropy loss;
  for (std::int64_t start = 0; start < 48; start += 12) {
    K::Tensor gx = d.x.slice(start, start + 12), gy = d.y.slice(start, start + 12);
    std::vector<double> losses(2, 0.0);
    strategy.run([&](K::ReplicaContext& ctx) {
      K::Tensor x = strategy.shard(ctx, gx), y = strategy.shard(ctx, gy);
      K::Tensor pred = custom.forward(ctx, x);
      K::Tensor per_example({x.dim(0)}), grad(pred.shape());
      loss.compute(*ctx.backend, pred, y, per_example, grad, 1.0f / static_cast<float>(gx.dim(0)));
      losses[static_cast<std::size_t>(ctx.replica_id)] = ctx.backend->sum(per_example);
      custom.backward(ctx, grad);
      custom.apply_gradients(ctx);
    });
    custom.optimizer().finish_step();
    CHECK(std::isfinite(strategy.reduce(K::distribute::ReduceOp::sum, losses)));
  }
  auto a = by_fit.get_weights(), b = custom.get_weights();
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(std::memcmp(a[i].raw(), b[i].raw(), a[i].nbytes()) == 0);

  // Running the model on another strategy's replica is refused.
  K::distribute::MirroredStrategy<> other(2);
  CHECK_THROWS_WITH_AS(other.run([&](K::ReplicaContext& ctx) { custom.forward(ctx, other.shard(ctx, d.x)); }),
                       doctest::Contains("compile it again"), K::Error);
}

TEST_CASE("mirrored: ReductionToOneDevice (replica 0 sums, then broadcasts) matches shared memory and one device") {
  using R2O = K::distribute::ReductionToOneDevice;
  auto one = train(K::distribute::OneDeviceStrategy(), K::optimizers::SGD(0.05, {.momentum = 0.9}), 16, 64, 1, true);
  for (std::size_t bucket_bytes : {std::size_t(16), std::size_t(25) << 20}) {
    CAPTURE(bucket_bytes);
    K::Model mirrored = small_convnet(true);
    auto r2o = train(K::distribute::MirroredStrategy<R2O>(3, {.bucket_bytes = bucket_bytes}),
                     K::optimizers::SGD(0.05, {.momentum = 0.9}), 16, 64, 1, true, &mirrored);
    CHECK(max_abs_diff(one, r2o) <= 1e-5);
    check_copies_identical(mirrored);
    CHECK(K::distribute::MirroredStrategy<R2O>(2).describe().find("ReductionToOneDevice") != std::string::npos);
  }
}
