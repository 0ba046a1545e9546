// Row gradients (IndexedSlices) of an Embedding under MirroredStrategy on CPU replicas: the
// deduplicating op, the gathered sum against the dense all-reduce, and training with 2 replicas
// against one device, with the stats proving which path ran.
#include <doctest/doctest.h>

#include <cmath>
#include <thread>

#include "backend/cpu/cpu_backend.hpp"
#include "distribute/collectives/shared_memory.hpp"
#include "distribute/row_gradients.hpp"
#include "kerascpp/kerascpp.hpp"
#include "mirrored_fixture.hpp"

namespace K = kerascpp;

namespace {

K::Tensor random_rows(K::Shape s, std::uint64_t seed) {
  K::Rng rng(seed);
  K::Tensor t(s, K::DType::float32, K::Device{});
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(rng.normal());
  return t;
}

K::Tensor ids_tensor(const std::vector<std::int32_t>& v) {
  return K::Tensor::from_vector({static_cast<std::int64_t>(v.size())}, v);
}

}  // namespace

TEST_CASE("unique_row_sums: sorted distinct ids, rows summed as scatter_add_rows, bad ids refused") {
  auto be = K::make_cpu_backend(2);
  K::Tensor ids = K::Tensor::from_vector({2, 3}, std::vector<std::int32_t>{4, 1, 4, 0, 4, 1});
  K::Tensor dy = random_rows({2, 3, 5}, 3);
  K::Tensor uid, sums;
  be->unique_row_sums(ids, dy, 6, uid, sums);
  CHECK(uid.shape() == K::Shape{3});
  CHECK(std::vector<std::int64_t>(uid.data<std::int64_t>(), uid.data<std::int64_t>() + 3) ==
        std::vector<std::int64_t>{0, 1, 4});
  K::Tensor dense = K::Tensor::zeros({6, 5});
  be->scatter_add_rows(ids, dy, dense, false);
  K::Tensor back = K::Tensor::zeros({6, 5});
  be->scatter_add_rows(uid, sums, back, false);
  CHECK(std::memcmp(dense.raw(), back.raw(), dense.nbytes()) == 0);  // same bits
  CHECK_THROWS_AS(be->unique_row_sums(ids, dy, 4, uid, sums), K::ValueError);
  CHECK_THROWS_AS(be->unique_row_sums(ids, random_rows({2, 5}, 1), 6, uid, sums), K::ShapeError);
}

TEST_CASE("row gradients: the gathered sum equals the dense all-reduce (repeats, ids one replica sees, empty shard)") {
  // 3 replicas: replica 2 has no rows at all (an empty shard), ids 7 and 9 only replica 1 sees.
  const std::int64_t V = 64, D = 6;
  std::vector<std::vector<std::int32_t>> ids = {{3, 5, 3, 3, 11}, {5, 7, 9, 9, 3}, {}};
  const int n = 3;
  K::distribute::SharedMemoryCollective sparse_c(n, K::distribute::CrossDeviceOpsKind::shared_memory);
  K::distribute::SharedMemoryCollective dense_c(n, K::distribute::CrossDeviceOpsKind::shared_memory);
  std::vector<K::Tensor> sparse_out(n), dense_out(n);
  K::detail::row_gradient_stats().reset();
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      auto be = K::make_cpu_backend(1);
      K::Tensor id = ids_tensor(ids[static_cast<std::size_t>(r)]);
      K::Tensor dy = random_rows({id.dim(0), D}, 10 + static_cast<std::uint64_t>(r));
      // Sparse: rows through a Variable (n copies: the reducer indexes it by replica) and the reducer.
      K::Variable v("embeddings", K::Tensor::zeros({V, D}), true);
      v.mirror(std::vector<K::Device>(n, K::Device{}));
      v.set_rows_gradient(true);
      K::Tensor uid, sums;
      be->unique_row_sums(id, dy, V, uid, sums);
      if (id.dim(0) > 0) v.add_grad_rows(r, uid, sums);  // an empty shard's backward hands in nothing
      K::ReplicaContext ctx;
      ctx.replica_id = r;
      ctx.num_replicas = n;
      ctx.backend = be.get();
      ctx.cross = &sparse_c;
      K::detail::reduce_row_gradient(ctx, v);
      sparse_out[static_cast<std::size_t>(r)] = v.grad(r).clone();
      // Dense: scatter into the table, all-reduce.
      std::vector<K::Tensor> t{K::Tensor::zeros({V, D})};
      be->scatter_add_rows(id, dy, t[0], false);
      dense_c.all_reduce_sum(r, t);
      dense_out[static_cast<std::size_t>(r)] = t[0];
    });
  for (auto& t : threads) t.join();
  CHECK(K::detail::row_gradient_stats().sparse_reductions == 1);
  CHECK(K::detail::row_gradient_stats().dense_reductions == 0);
  for (int r = 0; r < n; ++r) {
    auto a = sparse_out[static_cast<std::size_t>(r)].to_vector(),
         b = dense_out[static_cast<std::size_t>(r)].to_vector();
    REQUIRE(a.size() == b.size());
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      worst = std::max(worst, std::fabs(double(a[i]) - b[i]) / std::max(1.0, std::fabs(double(b[i]))));
    CHECK(worst <= 1e-6);
  }
  // Row 7 came only from replica 1, row 0 from nobody.
  CHECK(sparse_out[0].to_vector()[7 * D] != 0.f);
  CHECK(sparse_out[0].to_vector()[0] == 0.f);
}

namespace {

// Embedding -> Flatten -> Dense softmax over `vocab` ids, trained `steps` batches.
std::vector<K::Tensor> train_embedding(K::distribute::Strategy strategy, K::optimizers::OptimizerRef opt,
                                       std::int64_t vocab, std::int64_t examples, std::int64_t batch) {
  K::set_random_seed(5);
  auto in = K::Input({4}, K::DType::int32);
  auto x = K::layers::Embedding(vocab, 8)(in);
  x = K::layers::Flatten()(x);
  auto out = K::layers::Dense(3, {.activation = "softmax"})(x);
  K::Model model(in, out);
  model.compile({.optimizer = opt, .loss = "sparse_categorical_crossentropy", .distribute = strategy});
  K::Rng rng(17);
  K::Tensor ids({examples, 4}, K::DType::int32, K::Device{});
  K::Tensor y({examples}, K::DType::int32, K::Device{});
  for (std::int64_t i = 0; i < ids.numel(); ++i)
    ids.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng.next_u64() % static_cast<std::uint64_t>(vocab));
  for (std::int64_t i = 0; i < examples; ++i) y.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng.next_u64() % 3);
  model.fit(K::Dataset::from_tensor_slices(ids, y).batch(batch), {.epochs = 1, .verbose = 0});
  return model.get_weights();
}

}  // namespace

TEST_CASE("row gradients: 2 replicas train an Embedding model to one device's weights, sparse path taken") {
  struct Case {
    const char* name;
    K::optimizers::OptimizerRef (*opt)();
  };
  Case cases[] = {{"Adam", [] { return K::optimizers::OptimizerRef(K::optimizers::Adam(1e-2)); }},
                  {"SGD", [] { return K::optimizers::OptimizerRef(K::optimizers::SGD(0.1, {.momentum = 0.9})); }}};
  for (const Case& c : cases) {
    CAPTURE(c.name);
    // 20 steps of 8 examples (32 ids) on a 1000-row table: the sparse path every step; the
    // last batch of 7 gives the replicas 4 and 3 examples.
    auto one = train_embedding(K::distribute::OneDeviceStrategy(), c.opt(), 1000, 159, 8);
    K::detail::row_gradient_stats().reset();
    auto two = train_embedding(K::distribute::MirroredStrategy<>(2), c.opt(), 1000, 159, 8);
    CHECK(K::detail::row_gradient_stats().sparse_reductions == 20);
    MESSAGE("row gradients moved ", K::detail::row_gradient_stats().sparse_bytes.load() / 20,
            " bytes per replica per step; the dense table gradient is ", 1000 * 8 * 4);
    CHECK(K::detail::row_gradient_stats().dense_reductions == 0);
    CHECK(mirrored_fixture::max_abs_diff(one, two) <= 1e-5);
  }
}

TEST_CASE("row gradients: a batch touching most of a small table falls back to the dense all-reduce") {
  // 16-row table, 8 examples x 4 ids: gathering the rows would move more than the table.
  auto one = train_embedding(K::distribute::OneDeviceStrategy(), K::optimizers::Adam(1e-2), 16, 160, 8);
  K::detail::row_gradient_stats().reset();
  auto two = train_embedding(K::distribute::MirroredStrategy<>(2), K::optimizers::Adam(1e-2), 16, 160, 8);
  CHECK(K::detail::row_gradient_stats().dense_reductions == 20);
  CHECK(K::detail::row_gradient_stats().sparse_reductions == 0);
  CHECK(mirrored_fixture::max_abs_diff(one, two) <= 1e-5);
}

TEST_CASE("row gradients: a last batch of one example leaves one replica's shard empty") {
  auto one = train_embedding(K::distribute::OneDeviceStrategy(), K::optimizers::Adam(1e-2), 1000, 17, 8);
  K::detail::row_gradient_stats().reset();
  auto two = train_embedding(K::distribute::MirroredStrategy<>(2), K::optimizers::Adam(1e-2), 1000, 17, 8);
  CHECK(K::detail::row_gradient_stats().sparse_reductions == 3);  // 8, 8, 1 (replica 1 empty)
  CHECK(mirrored_fixture::max_abs_diff(one, two) <= 1e-5);
}
