// The physical limit of the MLP workloads: the same GEMMs the MLP's training step needs (forward,
// backward-data, backward-weights), timed alone through oneDNN's dnnl_sgemm at the benchmark's
// thread count. Prints JSON lines (bench/README.md).
//
//   sgemm_bench mlp  --batch B --dims 784,512,256,10 [--threads 2] [--windows 7] [--reps R]
//   sgemm_bench peak [--threads 2] [--windows 7]
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Gemm {  // row-major C[M,N] = op(A) op(B)
  const char* what;
  char ta, tb;
  long m, n, k;
  std::vector<float> a, b, c;
  Gemm(const char* w, char ta_, char tb_, long m_, long n_, long k_)
      : what(w), ta(ta_), tb(tb_), m(m_), n(n_), k(k_), a(m_ * k_), b(k_ * n_), c(m_ * n_) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& v : a) v = u(rng);
    for (auto& v : b) v = u(rng);
  }
  void run() {
    long lda = ta == 'N' ? k : m, ldb = tb == 'N' ? n : k;
    if (dnnl_sgemm(ta, tb, m, n, k, 1.f, a.data(), lda, b.data(), ldb, 0.f, c.data(), n) != dnnl_success) {
      std::fprintf(stderr, "dnnl_sgemm failed\n");
      std::exit(1);
    }
  }
  double flops() const { return 2.0 * m * n * k; }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median over windows of the time of one pass over all gemms (each window: reps passes).
double time_pass(std::vector<Gemm>& gs, int windows, int reps, std::vector<double>* per_window = nullptr) {
  for (int w = 0; w < 3; ++w)
    for (auto& g : gs) g.run();  // warm-up
  std::vector<double> t;
  for (int w = 0; w < windows; ++w) {
    auto s = Clock::now();
    for (int r = 0; r < reps; ++r)
      for (auto& g : gs) g.run();
    t.push_back(std::chrono::duration<double>(Clock::now() - s).count() / reps);
  }
  if (per_window) *per_window = t;
  return median(t);
}

std::map<std::string, std::string> parse(int argc, char** argv) {
  std::map<std::string, std::string> kv;
  for (int i = 2; i + 1 < argc; i += 2) kv[std::string(argv[i]).substr(2)] = argv[i + 1];
  return kv;
}

std::string get(const std::map<std::string, std::string>& kv, const std::string& k, const std::string& d) {
  auto it = kv.find(k);
  return it == kv.end() ? d : it->second;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || (std::strcmp(argv[1], "mlp") != 0 && std::strcmp(argv[1], "peak") != 0)) {
    std::fprintf(stderr, "usage: %s mlp|peak [--name value ...]\n", argv[0]);
    return 2;
  }
  auto kv = parse(argc, argv);
  int threads = std::stoi(get(kv, "threads", "2")), windows = std::stoi(get(kv, "windows", "7"));
  omp_set_num_threads(threads);

  if (std::strcmp(argv[1], "mlp") == 0) {
    long batch = std::stol(get(kv, "batch", "128"));
    std::vector<long> dims;
    std::stringstream ss(get(kv, "dims", "784,512,256,10"));
    for (std::string t; std::getline(ss, t, ',');) dims.push_back(std::stol(t));
    std::vector<Gemm> gs;
    gs.reserve(3 * dims.size());
    for (std::size_t i = 0; i + 1 < dims.size(); ++i) {
      long in = dims[i], out = dims[i + 1];
      gs.emplace_back("fwd", 'N', 'N', batch, out, in);                  // y = x W
      if (i > 0) gs.emplace_back("bwd_data", 'N', 'T', batch, in, out);  // dx = dy W^T (not for the input)
      gs.emplace_back("bwd_weights", 'T', 'N', in, out, batch);          // dW = x^T dy
    }
    double flops = 0;
    for (auto& g : gs) flops += g.flops();
    int reps = std::stoi(get(kv, "reps", std::to_string(std::max(1L, 40000000000L / static_cast<long>(flops)))));
    std::vector<double> pw;
    double t = time_pass(gs, windows, reps, &pw);
    std::string per_gemm = "{";
    for (std::size_t i = 0; i < gs.size(); ++i) {
      std::vector<Gemm> one;
      Gemm& g = gs[i];
      one.emplace_back(g.what, g.ta, g.tb, g.m, g.n, g.k);
      double ti = time_pass(one, 3, reps);
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s\"%s %c%c %ldx%ldx%ld\": %.4g", i ? ", " : "", g.what, g.ta, g.tb, g.m, g.n,
                    g.k, ti * 1e6);
      per_gemm += buf;
    }
    per_gemm += "}";
    std::printf(
        "{\"framework\": \"sgemm\", \"workload\": \"gemm_bound\", \"batch\": %ld, \"dims\": \"%s\", \"threads\": %d, "
        "\"step_gemm_s\": %.6g, \"bound_samples_per_s\": %.6g, \"gflops\": %.6g, \"per_gemm_us\": %s}\n",
        batch, get(kv, "dims", "784,512,256,10").c_str(), threads, t, batch / t, flops / t / 1e9, per_gemm.c_str());
  } else {
    // Peak: the best of a few large shapes, including the large MLP's own.
    long shapes[][3] = {{2048, 2048, 2048}, {4096, 2048, 2048}, {4096, 4096, 4096}, {4096, 2048, 784}};
    double best = 0;
    std::string all = "{";
    for (auto& s : shapes) {
      std::vector<Gemm> one;
      one.emplace_back("peak", 'N', 'N', s[0], s[1], s[2]);
      double t = time_pass(one, windows, 1);
      double g = one[0].flops() / t / 1e9;
      best = std::max(best, g);
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s\"%ldx%ldx%ld\": %.5g", all.size() > 1 ? ", " : "", s[0], s[1], s[2], g);
      all += buf;
    }
    all += "}";
    std::printf(
        "{\"framework\": \"sgemm\", \"workload\": \"sgemm_peak\", \"threads\": %d, \"peak_gflops\": %.6g, "
        "\"per_shape_gflops\": %s}\n",
        threads, best, all.c_str());
  }
  return 0;
}
