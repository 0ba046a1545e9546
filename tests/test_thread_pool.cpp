// Replica worker threads come from one process-wide pool, leased per step: a notebook that re-runs
// a cell compiling under a MirroredStrategy keeps every old Model and Strategy alive (the
// interpreter never destroys them), and must not gain threads each time.
#include <doctest/doctest.h>

#include <dirent.h>

#include <atomic>
#include <thread>

#include "distribute/worker_pool.hpp"
#include "kerascpp/kerascpp.hpp"

namespace K = kerascpp;

namespace {

// The threads of this process now: the entries of /proc/self/task.
int thread_count() {
  DIR* dir = opendir("/proc/self/task");
  REQUIRE(dir != nullptr);
  int n = 0;
  while (dirent* e = readdir(dir))
    if (e->d_name[0] != '.') ++n;
  closedir(dir);
  return n;
}

// What a notebook cell does: build, compile under a fresh MirroredStrategy, fit one batch.
K::Model compile_and_fit_one_batch() {
  // Two threads per replica, so each worker also runs an OpenMP team of its own.
  K::distribute::MirroredStrategy<> strategy(2, {.threads_per_replica = 2});
  K::Sequential model({K::layers::InputLayer({4}), K::layers::Dense(8, {.activation = "relu"}), K::layers::Dense(1)});
  model.compile({.optimizer = K::optimizers::SGD(0.01), .loss = "mse", .distribute = strategy});
  K::Tensor x = K::Tensor::zeros({8, 4}), y = K::Tensor::zeros({8, 1});
  model.fit(K::Dataset::from_tensor_slices(x, y).batch(8), {.epochs = 1, .verbose = 0});
  return model;
}

}  // namespace

TEST_CASE("re-compiling under a new MirroredStrategy without destroying the old ones adds no threads") {
  std::vector<K::Model> kept;  // as an interpreter keeps every cell's objects
  kept.push_back(compile_and_fit_one_batch());
  int after_first = thread_count();
  kept.push_back(compile_and_fit_one_batch());
  kept.push_back(compile_and_fit_one_batch());
  CHECK(thread_count() == after_first);
  // The old strategies still work: their steps lease the same workers again.
  K::Tensor x = K::Tensor::zeros({8, 4}), y = K::Tensor::zeros({8, 1});
  kept.front().fit(K::Dataset::from_tensor_slices(x, y).batch(8), {.epochs = 1, .verbose = 0});
  CHECK(thread_count() == after_first);
}

TEST_CASE("the worker pool grows to the most tasks running at once and reuses its workers") {
  auto& pool = K::distribute::WorkerPool::instance();
  std::atomic<int> ran{0};
  pool.run(3, [&](int) { ++ran; });
  int size = pool.size();
  CHECK(size >= 3);
  for (int i = 0; i < 5; ++i) pool.run(3, [&](int) { ++ran; });
  CHECK(ran == 18);
  CHECK(pool.size() == size);
  // Two runs at once from two threads each lease their own workers: every task of a run is on a
  // distinct thread, and together they need at most size + 3 workers.
  std::atomic<int> concurrent{0}, most{0};
  auto job = [&](int) {
    int now = ++concurrent;
    int m = most;
    while (now > m && !most.compare_exchange_weak(m, now)) {}
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --concurrent;
  };
  std::thread other([&] { pool.run(3, job); });
  pool.run(3, job);
  other.join();
  CHECK(most >= 3);  // a run's tasks all run at the same time, never one after another
  CHECK(pool.size() <= size + 3);
}
