// weights_guard: drives tests/python/test_bad_weights_files.py (crafted, damaged .weights.h5).
//   weights_guard save <file>
//       builds a small model (Dense-BatchNormalization-Dense, Adam), trains it 3 steps on fixed
//       data and writes <file> with the optimizer state and kerascpp's training state (what
//       BackupAndRestore writes), then prints its checksums.
//   weights_guard load <file>
//       builds and trains the same model the same way (but from other initial weights, so a load
//       that did anything shows), prints "before: <checksums>", calls load_weights(<file>), prints
//       "after: <checksums>", "load_seconds: <s>" and "peak_rss_kib: <n>". Exit 0 when the load succeeded; on a
//       kerascpp::Error prints "error: <message>" on stderr and exits 1; anything else exits 2.
// Checksums: "weights=<fnv64> optimizer=<fnv64>" over every weight value, and over the
// optimizer's iteration count, learning rate and slot values.
#include <kerascpp/kerascpp.hpp>

#include <sys/resource.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "io/model_weights.hpp"

namespace K = kerascpp;

namespace {

K::Model build(std::uint64_t seed) {
  K::set_random_seed(seed);
  auto in = K::Input({4});
  auto x = K::layers::Dense(8, {.activation = "relu"})(in);
  x = K::layers::BatchNormalization()(x);
  auto out = K::layers::Dense(3, {.activation = "softmax"})(x);
  K::Model model(in, out, "guarded");
  model.compile(
      {.optimizer = K::optimizers::Adam(1e-2), .loss = "sparse_categorical_crossentropy", .metrics = {"accuracy"}});
  std::vector<float> xs(12 * 4);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 7) * 0.1f - 0.3f;
  std::vector<std::int32_t> ys(12);
  for (std::size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<std::int32_t>(i % 3);
  auto data = K::Dataset::from_tensor_slices(K::Tensor::from_vector({12, 4}, xs), K::Tensor::from_vector({12}, ys));
  model.fit(data.batch(4), {.epochs = 1, .verbose = 0});
  return model;
}

struct Fnv {
  std::uint64_t h = 1469598103934665603ull;
  void add(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
};

std::string checksums(K::Model& m) {
  Fnv w, o;
  for (const auto& t : m.get_weights()) {
    auto v = t.to_vector();
    w.add(v.data(), v.size() * sizeof(float));
  }
  auto& opt = m.optimizer();
  std::int64_t it = opt.iterations();
  double lr = opt.learning_rate();
  o.add(&it, sizeof it);
  o.add(&lr, sizeof lr);
  for (K::Tensor* s : opt.slot_tensors(0)) {
    auto v = s->to_vector();
    o.add(v.data(), v.size() * sizeof(float));
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, "weights=%016" PRIx64 " optimizer=%016" PRIx64, w.h, o.h);
  return buf;
}

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "save") != 0 && std::strcmp(argv[1], "load") != 0)) {
    std::fprintf(stderr, "usage: weights_guard save|load <file.weights.h5>\n");
    return 2;
  }
  const std::string path = argv[2];
  try {
    if (std::strcmp(argv[1], "save") == 0) {
      K::Model m = build(1);
      K::io::TrainingCheckpoint cp;
      cp.position = K::detail::training_position(m).current();
      K::io::save_model_weights(m, path, cp);
      std::printf("saved: %s\n", checksums(m).c_str());
      return 0;
    }
    K::Model m = build(2);
    std::printf("before: %s\n", checksums(m).c_str());
    std::fflush(stdout);
    int rc = 0;
    const auto start = std::chrono::steady_clock::now();
    try {
      m.load_weights(path);
    } catch (const K::Error& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      rc = 1;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("after: %s\nload_seconds: %.3f\npeak_rss_kib: %ld\n", checksums(m).c_str(), seconds, peak_rss_kib());
    return rc;
  } catch (const K::Error& e) {
    std::fprintf(stderr, "error (outside the load): %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "not a kerascpp::Error: %s\n", e.what());
    return 2;
  }
}
