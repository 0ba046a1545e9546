// A training step in steady state takes no memory from the system allocator: tensors come from
// the caching host allocator and oneDNN primitives from each backend's cache.
#include <doctest/doctest.h>

#include "kerascpp/kerascpp.hpp"
#include "tensor/host_allocator.hpp"

namespace K = kerascpp;

TEST_CASE("steady state: no new host allocations after warm-up (1 and 2 replicas)") {
  for (int replicas : {1, 2}) {
    CAPTURE(replicas);
    K::set_random_seed(1);
    auto in = K::Input({8, 8, 1});
    auto x = K::layers::Conv2D(4, 3, {.activation = "relu"})(in);
    x = K::layers::MaxPooling2D(2)(x);
    x = K::layers::BatchNormalization({.synchronized = true})(x);
    x = K::layers::Flatten()(x);
    auto out = K::layers::Dense(3, {.activation = "softmax"})(x);
    K::Model model(in, out);
    model.compile({.optimizer = "adam",
                   .loss = "sparse_categorical_crossentropy",
                   .metrics = {"accuracy"},
                   .distribute = K::distribute::MirroredStrategy<>(replicas)});
    K::Tensor xs = K::Tensor::full({16, 8, 8, 1}, 0.5f);
    K::Tensor ys = K::Tensor::zeros({16}, K::DType::int32);
    for (int i = 0; i < 3; ++i) model.train_on_batch(xs, ys);
    std::size_t before = K::detail::host_system_allocations();
    for (int i = 0; i < 10; ++i) model.train_on_batch(xs, ys);
    CHECK(K::detail::host_system_allocations() == before);
  }
}

TEST_CASE("host allocator: a block above 32 MiB is kept for reuse only once its size recurs") {
  namespace D = K::detail;
  const std::size_t size = (std::size_t(33) << 20) + 4096;  // a size nothing else here asks for
  const std::size_t cached = D::host_cached_bytes();
  D::host_release(D::host_allocate(size), size);
  CHECK(D::host_cached_bytes() == cached);  // a one-off buffer goes back to the system
  const std::size_t before = D::host_system_allocations();
  void* again = D::host_allocate(size);
  CHECK(D::host_system_allocations() == before + 1);
  D::host_release(again, size);
  CHECK(D::host_cached_bytes() == cached + size);  // asked for twice: a recurring size, kept
  void* reused = D::host_allocate(size);
  CHECK(reused == again);
  CHECK(D::host_system_allocations() == before + 1);
  D::host_release(reused, size);
}

#include "core/graph.hpp"

TEST_CASE("graph: layers with nothing trainable upstream are not asked for input gradients") {
  K::set_random_seed(2);
  auto in = K::Input({6});
  auto h = K::layers::Dense(4, {.activation = "relu"})(in);
  auto out = K::layers::Dense(2)(h);
  K::detail::Graph graph({in}, {out});
  auto backend = K::make_cpu_backend(1);
  K::ReplicaContext ctx;
  ctx.backend = backend.get();
  K::detail::GraphState state;
  graph.forward(ctx, {K::Tensor::full({3, 6}, 0.25f)}, state);
  graph.backward(ctx, {K::Tensor::full({3, 2}, 1.f)}, state, nullptr);
  REQUIRE(state.layer_states.size() == 3);              // Input, Dense, Dense
  CHECK_FALSE(state.layer_states[1].need_input_grads);  // first Dense: dL/dx would go nowhere
  CHECK(state.layer_states[2].need_input_grads);        // second Dense feeds the first one's kernel
}
