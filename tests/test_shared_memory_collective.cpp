// SharedMemoryCollective on its own (without a strategy or a model): the all-reduce between
// CPU replica threads, synchronous and in gradient buckets, both reduction kinds, abort/reset.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "distribute/abortable_barrier.hpp"
#include "distribute/collectives/shared_memory.hpp"
#include "kerascpp/error.hpp"

namespace K = kerascpp;
using K::distribute::CrossDeviceOpsKind;
using K::distribute::SharedMemoryCollective;

namespace {

// Replica r's value at element i of tensor t: distinct, with rounding in float sums.
float value(int r, std::size_t t, std::int64_t i) {
  return 0.1f * static_cast<float>(r + 1) + 1e-3f * (i + 7 * t) / 3.f;
}

std::vector<K::Tensor> replica_tensors(int r) {
  std::vector<K::Tensor> ts;
  const std::int64_t sizes[] = {5, 11, 1};
  for (std::size_t t = 0; t < 3; ++t) {
    K::Tensor x({sizes[t]});
    for (std::int64_t i = 0; i < sizes[t]; ++i) x.data<float>()[i] = value(r, t, i);
    ts.push_back(x);
  }
  return ts;
}

// The sum every replica must hold: float, from 0, in replica order.
void check_reduced(const std::vector<K::Tensor>& ts, int replicas) {
  for (std::size_t t = 0; t < ts.size(); ++t)
    for (std::int64_t i = 0; i < ts[t].numel(); ++i) {
      float expect = 0.f;
      for (int r = 0; r < replicas; ++r) expect += value(r, t, i);
      CHECK(std::memcmp(&ts[t].data<float>()[i], &expect, sizeof(float)) == 0);
    }
}

template <class Fn>
void on_replicas(int n, Fn fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { fn(r); });
  for (auto& t : threads) t.join();
}

}  // namespace

TEST_CASE("shared-memory collective: all_reduce_sum gives every replica the replica-order float sum") {
  for (auto kind : {CrossDeviceOpsKind::shared_memory, CrossDeviceOpsKind::reduction_to_one_device}) {
    CAPTURE(static_cast<int>(kind));
    const int n = 3;
    SharedMemoryCollective collective(n, kind);
    CHECK(collective.num_replicas() == n);
    std::vector<std::vector<K::Tensor>> lists(n);
    on_replicas(n, [&](int r) {
      lists[r] = replica_tensors(r);
      collective.all_reduce_sum(r, lists[r]);
    });
    for (int r = 0; r < n; ++r) check_reduced(lists[r], n);

    // Gradient buckets: handed in asynchronously, all reduced once wait_all_reduces returns.
    std::vector<std::vector<K::Tensor>> first(n), second(n);
    on_replicas(n, [&](int r) {
      auto ts = replica_tensors(r);
      first[r] = {ts[0], ts[1]};
      second[r] = {ts[2]};
      collective.begin_all_reduce_sum(r, 0, first[r]);
      collective.begin_all_reduce_sum(r, 1, second[r]);
      collective.wait_all_reduces(r);
    });
    for (int r = 0; r < n; ++r) {
      check_reduced(first[r], n);
      for (std::int64_t i = 0; i < 1; ++i) {
        float expect = 0.f;
        for (int q = 0; q < n; ++q) expect += value(q, 2, i);
        CHECK(second[r][0].data<float>()[i] == expect);
      }
    }
  }
}

TEST_CASE("shared-memory collective: different tensor lists are a ShapeError; abort releases a waiting replica") {
  SharedMemoryCollective collective(2, CrossDeviceOpsKind::shared_memory);
  int shape_errors = 0;
  std::mutex mu;
  // The lists outlive the threads: a replica that threw may still be read by the other's check.
  std::vector<std::vector<K::Tensor>> mismatched{{K::Tensor::zeros({3})}, {K::Tensor::zeros({4})}};
  on_replicas(2, [&](int r) {
    try {
      collective.all_reduce_sum(r, mismatched[r]);
    } catch (const K::ShapeError&) {
      std::lock_guard lock(mu);
      ++shape_errors;
    } catch (const K::detail::ReplicaAborted&) {}
  });
  CHECK(shape_errors == 2);  // every replica sees the mismatch, none waits forever
  collective.reset();

  // Replica 0 waits for a peer that never comes; abort() (what a failing replica calls) releases it.
  bool aborted = false;
  std::thread waiting([&] {
    std::vector<K::Tensor> ts{K::Tensor::zeros({2})};
    try {
      collective.all_reduce_sum(0, ts);
    } catch (const K::detail::ReplicaAborted&) { aborted = true; }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  collective.abort();
  waiting.join();
  CHECK(aborted);

  // After reset() the next step's collectives work again.
  collective.reset();
  std::vector<std::vector<K::Tensor>> lists(2);
  on_replicas(2, [&](int r) {
    lists[r] = replica_tensors(r);
    collective.all_reduce_sum(r, lists[r]);
  });
  check_reduced(lists[0], 2);
  check_reduced(lists[1], 2);
}
