// What a notebook does to a long-lived process: a re-run cell makes new objects and the
// interpreter never destroys the ones they replace. Running the data cell and the compile cell
// (a model under MirroredStrategy with 2 CPU replicas, one training step) three times, keeping
// every object alive as Cling does, must leave the thread count and the resident memory where
// the first run left them (issue 13: ±10%).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "kerascpp/kerascpp.hpp"

namespace K = kerascpp;
namespace fs = std::filesystem;

namespace {

std::size_t thread_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& task : fs::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// VmRSS of this process in KiB.
long resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> value;
      return value;
    }
    status.ignore(4096, '\n');
  }
  return -1;
}

bool fashion_mnist_available() {
  try {
    const fs::path dir = K::datasets::fashion_mnist::resolve_dir();
    return fs::exists(dir / "train-images-idx3-ubyte.gz") || fs::exists(dir / "train-images-idx3-ubyte");
  } catch (const K::Error&) { return false; }
}

// The objects one run of the two cells leaves behind; nothing of an earlier run is destroyed.
struct Cells {
  std::vector<std::unique_ptr<K::datasets::fashion_mnist::TrainTest>> data;
  std::vector<std::unique_ptr<K::Model>> models;

  void run() {
    // Data cell: `auto data = K::datasets::fashion_mnist::load();`
    data.push_back(std::make_unique<K::datasets::fashion_mnist::TrainTest>(K::datasets::fashion_mnist::load()));
    // Compile cell: a new model compiled under a new MirroredStrategy, trained one step.
    auto inputs = K::Input({28, 28, 1});
    auto x = K::layers::Flatten()(inputs);
    auto outputs = K::layers::Dense(10, {.activation = "softmax"})(x);
    models.push_back(std::make_unique<K::Model>(inputs, outputs));
    models.back()->compile({.optimizer = "adam",
                            .loss = "sparse_categorical_crossentropy",
                            .metrics = {"accuracy"},
                            .distribute = K::distribute::MirroredStrategy<>(2)});
    models.back()->fit(data.back()->train.batch(64), {.steps_per_epoch = 1, .verbose = 0});
  }
};

}  // namespace

TEST_CASE("notebook re-runs: data and compile cells run three times keep threads and memory where one run left them") {
  if (!fashion_mnist_available()) {
    MESSAGE(
        "skipped: Fashion-MNIST not found (scripts/install_deps.sh installs dataset-fashion-mnist, or set "
        "KERASCPP_DATA)");
    return;
  }
  Cells cells;
  cells.run();
  const std::size_t threads_once = thread_count();
  const long rss_once = resident_kib();
  cells.run();
  cells.run();
  const std::size_t threads_thrice = thread_count();
  const long rss_thrice = resident_kib();
  INFO("threads after one run " << threads_once << ", after three " << threads_thrice);
  INFO("VmRSS after one run " << rss_once << " KiB, after three " << rss_thrice << " KiB");
  CHECK(threads_thrice == threads_once);
  REQUIRE(rss_once > 0);
  CHECK(static_cast<double>(rss_thrice) <= 1.10 * static_cast<double>(rss_once));
  // The memoized load hands every re-run the same data, not a copy.
  CHECK(cells.data.size() == 3);
}
