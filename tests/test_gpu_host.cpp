// Host-side logic of the GPU path, tested on every machine: device discovery and the CPU
// fallback, device errors, the allocator's size classes, placing tensors and variables, and
// gradient bucket planning. The GPU kernels themselves are tested in tests/gpu/.
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>

#include "backend/cuda/allocation_size_class.hpp"
#include "backend/gpu_support.hpp"
#include "distribute/gradient_buckets.hpp"
#include "kerascpp/kerascpp.hpp"

namespace K = kerascpp;

namespace {

bool machine_has_gpu() { return K::detail::gpu_availability().device_count > 0; }

// Captures what `f` writes to std::cerr.
template <class F>
std::string captured_stderr(F f) {
  std::ostringstream out;
  auto* old = std::cerr.rdbuf(out.rdbuf());
  try {
    f();
  } catch (...) {
    std::cerr.rdbuf(old);
    throw;
  }
  std::cerr.rdbuf(old);
  return out.str();
}

}  // namespace

TEST_CASE("gpu discovery: the build flag and the reason when no GPU is visible") {
  const auto& a = K::detail::gpu_availability();
  CHECK(a.built == (KERASCPP_TESTS_WITH_CUDA != 0));
  CHECK(a.device_count >= 0);
  if (a.device_count == 0) {
    CHECK_FALSE(a.reason.empty());  // always says why: no CUDA build, no driver, or no device
  } else {
    CHECK(a.reason.empty());
  }
  CHECK((K::detail::gpu_memory_ops() != nullptr) == a.built);
}

TEST_CASE("gpu fallback: MirroredStrategy<>() without a GPU mirrors over the CPU with a one-line notice") {
  if (machine_has_gpu()) {
    MESSAGE("skipped: this machine has a GPU, so MirroredStrategy<>() uses it (tests/gpu checks that case)");
    return;
  }
  std::string notice = captured_stderr([] {
    K::distribute::MirroredStrategy<> s;
    CHECK(s.num_replicas_in_sync() == 1);
    CHECK(s.devices().at(0) == K::Device{});
    CHECK(s.describe().find("SharedMemoryAllReduce") != std::string::npos);
  });
  CHECK(notice == K::distribute::no_gpu_notice() + "\n");
  CHECK(notice.find("no GPU available") != std::string::npos);
  CHECK(notice.find(K::detail::gpu_availability().reason) != std::string::npos);
  CHECK(std::count(notice.begin(), notice.end(), '\n') == 1);
  CHECK(K::distribute::local_devices() == std::vector<std::string>{"cpu:0"});
}

TEST_CASE("gpu errors: an explicit GPU that does not exist lists the available devices") {
  if (machine_has_gpu()) {
    MESSAGE("skipped: this machine has a GPU; the nonexistent-device case is covered with gpu:64 in test_mirrored");
    return;
  }
  for (std::string name : {"gpu:0", "/gpu:0", "GPU:1"}) {
    CAPTURE(name);
    CHECK_THROWS_WITH_AS(K::distribute::OneDeviceStrategy{name},
                         doctest::Contains("Available devices: cpu:0 (and any number of CPU replicas cpu:N)"),
                         K::Error);
  }
  CHECK_THROWS_WITH_AS(K::distribute::MirroredStrategy<>(std::vector<std::string>{"gpu:0", "gpu:1"}),
                       doctest::Contains("does not exist"), K::Error);
  CHECK_THROWS_WITH_AS(
      K::distribute::MirroredStrategy<K::distribute::NcclAllReduce>(std::vector<std::string>{"gpu:0", "gpu:1"}),
      doctest::Contains(K::detail::gpu_availability().reason.c_str()), K::Error);
  // Placing a tensor on a missing GPU is an error, not a crash.
  K::Tensor host = K::Tensor::from_vector({2}, std::vector<float>{1.f, 2.f});
  if (!K::detail::gpu_availability().built) {
    CHECK_THROWS_WITH_AS(host.to(K::Device::parse("gpu:0")), doctest::Contains("no CUDA backend"), K::Error);
    CHECK_THROWS_AS(K::Tensor({3}, K::DType::float32, K::Device::parse("gpu:0")), K::Error);
  }
  CHECK_THROWS_WITH_AS(K::detail::make_gpu_backend(0), doctest::Contains("gpu:0"), K::Error);
}

TEST_CASE("gpu errors: GPU and CPU devices do not mix; SharedMemoryAllReduce is for CPU replicas") {
  CHECK_THROWS_WITH_AS(K::distribute::MirroredStrategy<>(std::vector<std::string>{"gpu:0", "cpu:0"}),
                       doctest::Contains("mixed device kinds"), K::Error);
  if (machine_has_gpu()) {
    CHECK_THROWS_WITH_AS(
        K::distribute::MirroredStrategy<K::distribute::SharedMemoryAllReduce>(std::vector<std::string>{"gpu:0"}),
        doctest::Contains("needs CPU replicas"), K::Error);
  }
}

TEST_CASE("device scope: new tensors follow the scope's device; explicit devices win") {
  CHECK(K::default_device() == K::Device{});
  {
    K::DeviceScope scope(K::Device{K::Device::Kind::cpu, 3});
    CHECK(K::default_device().index == 3);
    K::Tensor t({2, 2});
    CHECK(t.device().index == 3);
    CHECK(K::Tensor({1}, K::DType::float32, K::Device{}).device().index == 0);
    CHECK(K::Tensor::from_vector({1}, std::vector<float>{1.f}).device().index == 0);  // host data stays on the host
  }
  CHECK(K::default_device() == K::Device{});
}

TEST_CASE("tensor to(): same device returns the same storage, another makes an equal copy") {
  K::Tensor a = K::Tensor::from_vector({3}, std::vector<float>{1.f, 2.f, 3.f});
  CHECK(a.to(K::Device{}).same_storage(a));
  K::Tensor b = a.to(K::Device{K::Device::Kind::cpu, 1});
  CHECK_FALSE(b.same_storage(a));
  CHECK(b.device().index == 1);
  CHECK(b.to_vector() == a.to_vector());
}

TEST_CASE("variables mirror onto the replicas' devices with zeroed gradients") {
  K::Variable v("kernel", K::Tensor::from_vector({2}, std::vector<float>{4.f, 5.f}), true);
  std::vector<K::Device> devices{K::Device{K::Device::Kind::cpu, 0}, K::Device{K::Device::Kind::cpu, 1}};
  v.mirror(devices);
  REQUIRE(v.num_copies() == 2);
  CHECK(v.value(1).device().index == 1);
  CHECK(v.grad(1).device().index == 1);
  CHECK(v.value(1).to_vector() == std::vector<float>{4.f, 5.f});
  CHECK(v.grad(1).to_vector() == std::vector<float>{0.f, 0.f});
  CHECK_FALSE(v.value(1).same_storage(v.value(0)));
  CHECK_THROWS_AS(v.mirror(std::vector<K::Device>{}), K::Error);
}

TEST_CASE("device allocator size classes: rounding is monotone, covers the request and bounds the waste") {
  using K::cuda::allocation_size_class;
  CHECK(allocation_size_class(0) == 512);
  CHECK(allocation_size_class(1) == 512);
  CHECK(allocation_size_class(512) == 512);
  CHECK(allocation_size_class(513) == 1024);
  CHECK(allocation_size_class((1u << 20) - 1) == (1u << 20));
  CHECK(allocation_size_class(1u << 20) == (2u << 20));
  CHECK(allocation_size_class((64u << 20) + 1) == (80u << 20));
  std::size_t previous = 0;
  for (std::size_t n = 1; n < (200u << 20); n = n * 3 / 2 + 7) {
    std::size_t c = allocation_size_class(n);
    CAPTURE(n);
    CHECK(c >= n);
    CHECK(c >= previous);
    CHECK(c - n < (n < (1u << 20) ? 512u : n < (64u << 20) ? (2u << 20) : (16u << 20)));
    previous = c;
  }
}

TEST_CASE("gradient bucket planning: backward order, size limit, every variable exactly once") {
  // Three Dense layers: kernels 784x64 (196 KiB), 64x64 (16 KiB), 64x10; biases small.
  auto in = K::Input({784});
  auto h = K::layers::Dense(64, {.activation = "relu"})(in);
  h = K::layers::Dense(64, {.activation = "relu"})(h);
  K::Model m(in, K::layers::Dense(10)(h));
  std::vector<std::shared_ptr<K::Layer>> layers = m.layers();
  std::vector<K::Variable*> trainable;
  for (auto& l : layers)
    for (K::Variable* v : l->trainable_variables()) trainable.push_back(v);
  std::vector<std::shared_ptr<K::Layer>> backward(layers.rbegin(), layers.rend());

  auto one = K::detail::BucketPlan::make(backward, trainable, 25u << 20);
  REQUIRE(one.buckets.size() == 1);  // everything fits one 25 MB bucket
  CHECK(one.buckets[0].size() == trainable.size());

  auto small = K::detail::BucketPlan::make(backward, trainable, 64u << 10);  // 64 KiB
  std::vector<int> seen(trainable.size(), 0);
  for (auto& b : small.buckets)
    for (std::size_t i : b) seen.at(i)++;
  for (int s : seen) CHECK(s == 1);
  CHECK(small.buckets.size() >= 2);
  // The last layer's variables finish first in backward, so they lead the first bucket.
  std::size_t last_kernel = trainable.size() - 2;
  CHECK(std::find(small.buckets.front().begin(), small.buckets.front().end(), last_kernel) !=
        small.buckets.front().end());
}
