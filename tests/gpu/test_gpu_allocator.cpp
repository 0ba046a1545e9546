// The caching device allocator: a released block goes onto a free list and is handed out again
// for the next request of its size class, so after warm-up a training step (or a fixed sequence
// of backend ops) makes no cudaMalloc call — cuda::allocator_stats(d).cuda_malloc_calls stays put.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backend/cuda/allocation_size_class.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/device_runtime.hpp"
#include "gpu_test_util.hpp"
#include "kerascpp/kerascpp.hpp"

using namespace gputest;
namespace cuda = kerascpp::cuda;

TEST_CASE("gpu allocator: a released block is reused, release_cached_blocks hands it back to the driver") {
  cuda::release_cached_blocks(0);  // start from an empty cache: the first request must reach cudaMalloc
  const auto s0 = cuda::allocator_stats(0);
  CHECK(s0.bytes_cached == 0);
  const std::size_t n = 1000, cls = cuda::allocation_size_class(n * sizeof(float));

  K::Tensor t({static_cast<std::int64_t>(n)}, K::DType::float32, gpu());
  const void* first = t.raw();
  const auto s1 = cuda::allocator_stats(0);
  CHECK(s1.cuda_malloc_calls == s0.cuda_malloc_calls + 1);
  CHECK(s1.bytes_in_use == s0.bytes_in_use + cls);

  t = K::Tensor();  // released: parked on the free list, not freed
  const auto s2 = cuda::allocator_stats(0);
  CHECK(s2.bytes_cached == cls);
  CHECK(s2.bytes_in_use == s0.bytes_in_use);
  CHECK(s2.cuda_malloc_calls == s1.cuda_malloc_calls);

  // Same size class (a slightly smaller request): the same block comes back, no cudaMalloc.
  K::Tensor u({static_cast<std::int64_t>(n - 3)}, K::DType::float32, gpu());
  REQUIRE(cuda::allocation_size_class((n - 3) * sizeof(float)) == cls);
  const auto s3 = cuda::allocator_stats(0);
  CHECK(u.raw() == first);
  CHECK(s3.cuda_malloc_calls == s1.cuda_malloc_calls);
  CHECK(s3.bytes_cached == 0);
  CHECK(s3.bytes_in_use == s1.bytes_in_use);

  // The reused block holds real, writable memory.
  auto values = random_tensor({static_cast<std::int64_t>(n - 3)}, 7);
  u.copy_from(values);
  CHECK(bit_equal(u, values));

  // Many allocate/release rounds of a few sizes: one cudaMalloc per size class at most.
  const auto s4 = cuda::allocator_stats(0);
  for (int round = 0; round < 50; ++round) {
    std::vector<K::Tensor> ts;
    for (std::int64_t size : {17, 4096, 100000, 3 << 20}) ts.emplace_back(K::Shape{size}, K::DType::float32, gpu());
  }
  const auto s5 = cuda::allocator_stats(0);
  CHECK(s5.cuda_malloc_calls <= s4.cuda_malloc_calls + 4);
  CHECK(s5.bytes_in_use == s4.bytes_in_use);

  // After release_cached_blocks the cache is empty and the next request allocates again.
  u = K::Tensor();
  cuda::release_cached_blocks(0);
  const auto s6 = cuda::allocator_stats(0);
  CHECK(s6.bytes_cached == 0);
  K::Tensor v({static_cast<std::int64_t>(n)}, K::DType::float32, gpu());
  CHECK(cuda::allocator_stats(0).cuda_malloc_calls == s6.cuda_malloc_calls + 1);
}

TEST_CASE("gpu allocator: repeated backend op calls make no new cudaMalloc after warm-up") {
  auto be = K::detail::make_gpu_backend(0);
  auto* cuda_be = dynamic_cast<cuda::CudaBackend*>(be.get());
  REQUIRE(cuda_be != nullptr);
  auto x = on_gpu(random_tensor({16, 12, 12, 3}, 1)), w = on_gpu(random_tensor({3, 3, 3, 8}, 2));
  auto dense_w = on_gpu(random_tensor({6 * 6 * 8, 10}, 3)), dense_b = on_gpu(random_tensor({10}, 4));
  auto labels = on_gpu(labels_as(random_labels(16, 10, 5), K::DType::int32, {16}));
  K::Tensor m = K::Tensor::zeros(dense_w.shape(), K::DType::float32, gpu()),
            v = K::Tensor::zeros(dense_w.shape(), K::DType::float32, gpu());
  K::Conv2DGeometry g{3, 3, 1, 1, 1, 1, 1, 1};
  K::Pool2DGeometry pg;
  // One training-like step: every temporary is created here and released at the end.
  auto step = [&] {
    K::Tensor y, mean, var, yn, p, ws, flat, logits, loss, grad = K::Tensor::zeros({16, 10}, K::DType::float32, gpu());
    be->conv2d_forward(x, w, K::Tensor(), g, K::ActivationKind::linear, y);
    be->batchnorm_forward_training(y, K::Tensor(), K::Tensor(), 1e-3f, yn, mean, var);
    be->activation_forward(K::ActivationKind::relu, yn, yn);
    be->pool2d_forward(yn, pg, p, ws);
    flat = p.reshape({16, -1});
    be->dense_forward(flat, dense_w, dense_b, K::ActivationKind::linear, logits);
    be->sparse_categorical_crossentropy(logits, labels, true, loss, grad, 1.f / 16);
    K::Tensor dw = K::Tensor::zeros(dense_w.shape(), K::DType::float32, gpu()), db, dflat;
    be->matmul(flat, true, grad, false, dw, false);
    be->sum_to_last_axis(grad, db, false);
    dflat = K::Tensor(flat.shape(), K::DType::float32, gpu());
    be->matmul(grad, false, dense_w, true, dflat, false);
    K::Tensor dp = dflat.reshape(p.shape()), dyn, dx, dcw, no_db;
    be->pool2d_backward(dp, yn, pg, ws, dyn);
    be->activation_backward(K::ActivationKind::relu, yn, dyn, dyn);
    K::Tensor dy, no_dg, no_dbeta;
    be->batchnorm_backward(dyn, y, K::Tensor(), mean, var, 1e-3f, dy, no_dg, no_dbeta);
    be->conv2d_backward_weights(x, dy, g, dcw, no_db, false);
    dx = K::Tensor(x.shape(), K::DType::float32, gpu());
    be->conv2d_backward_data(dy, w, g, dx);
    be->adam_update(dense_w, dw, m, v, 1e-3f, 0.9f, 0.999f, 1e-7f);
    (void)be->sum(loss);
  };
  for (int i = 0; i < 3; ++i) step();
  cuda_be->synchronize();
  const auto before = cuda::allocator_stats(0);
  for (int i = 0; i < 20; ++i) step();
  cuda_be->synchronize();
  const auto after = cuda::allocator_stats(0);
  MESSAGE("backend ops: cudaMalloc calls " << before.cuda_malloc_calls << " -> " << after.cuda_malloc_calls
                                           << ", bytes in use " << before.bytes_in_use << " -> " << after.bytes_in_use
                                           << ", cached " << after.bytes_cached);
  CHECK(after.cuda_malloc_calls == before.cuda_malloc_calls);
  CHECK(after.bytes_in_use == before.bytes_in_use);  // every step's temporaries went back
  CHECK(before.cuda_malloc_calls > 0);               // the warm-up did go through this allocator
}

namespace {

K::Model small_model() {
  K::set_random_seed(3);
  auto in = K::Input({8, 8, 1});
  auto x = K::layers::Conv2D(4, 3, {.activation = "relu"})(in);
  x = K::layers::MaxPooling2D(2)(x);
  x = K::layers::BatchNormalization({.synchronized = true})(x);
  x = K::layers::Flatten()(x);
  auto out = K::layers::Dense(3, {.activation = "softmax"})(x);
  return K::Model(in, out);
}

std::vector<std::string> all_gpus() {
  std::vector<std::string> d;
  for (int i = 0; i < gpu_count(); ++i) d.push_back("gpu:" + std::to_string(i));
  return d;
}

}  // namespace

TEST_CASE("gpu allocator: a model's training steps make no new cudaMalloc after warm-up (train_on_batch and fit)") {
  struct Setup {
    std::string name;
    K::distribute::Strategy strategy;
  };
  std::vector<Setup> setups;
  setups.push_back({"OneDeviceStrategy(gpu:0)", K::distribute::OneDeviceStrategy("gpu:0")});
  if (gpu_count() >= 2) setups.push_back({"MirroredStrategy(all GPUs)", K::distribute::MirroredStrategy<>(all_gpus())});
  else MESSAGE("only one GPU: the MirroredStrategy variant of this test needs >= 2 GPUs, skipped");

  for (auto& s : setups) {
    CAPTURE(s.name);
    const int replicas = s.strategy.num_replicas_in_sync();
    K::Model model = small_model();
    model.compile({.optimizer = "adam",
                   .loss = "sparse_categorical_crossentropy",
                   .metrics = {"accuracy"},
                   .distribute = s.strategy});
    K::Tensor xs = random_tensor({16, 8, 8, 1}, 11);
    K::Tensor ys = labels_as(random_labels(16, 3, 12), K::DType::int32, {16});

    auto stats = [&] {
      std::vector<cuda::AllocatorStats> v;
      for (int d = 0; d < replicas; ++d) v.push_back(cuda::allocator_stats(d));
      return v;
    };
    auto check_unchanged = [&](const std::vector<cuda::AllocatorStats>& a, const std::vector<cuda::AllocatorStats>& b,
                               const std::string& phase) {
      for (int d = 0; d < replicas; ++d) {
        MESSAGE(s.name << " " << phase << " gpu:" << d << ": cudaMalloc calls " << a[d].cuda_malloc_calls << " -> "
                       << b[d].cuda_malloc_calls);
        CHECK_MESSAGE(b[d].cuda_malloc_calls == a[d].cuda_malloc_calls,
                      s.name << " " << phase << ": gpu:" << d << " made new cudaMalloc calls");
        CHECK_MESSAGE(a[d].cuda_malloc_calls > 0, s.name << ": gpu:" << d << " never used the caching allocator");
      }
    };

    for (int i = 0; i < 3; ++i) model.train_on_batch(xs, ys);
    auto before = stats();
    for (int i = 0; i < 10; ++i) model.train_on_batch(xs, ys);
    check_unchanged(before, stats(), "train_on_batch");

    // fit: one warm-up epoch (with a partial last batch), then more epochs of the same batches.
    auto ds = K::Dataset::from_tensor_slices(random_tensor({40, 8, 8, 1}, 13),
                                             labels_as(random_labels(40, 3, 14), K::DType::int32, {40}))
                  .batch(16);
    model.fit(ds, {.epochs = 1, .verbose = 0});
    auto before_fit = stats();
    model.fit(ds, {.epochs = 3, .verbose = 0});
    check_unchanged(before_fit, stats(), "fit");
  }
}
