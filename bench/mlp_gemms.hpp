// The GEMMs of an MLP's training step, timed alone through oneDNN's dnnl_sgemm: the physical
// limit of the MLP workloads (bench/README.md). Shared by sgemm_bench (the bound in a process of
// its own) and kerascpp_bench --paired-gemm-bound (the bound timed between training windows).
#pragma once
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace mlp_gemms {

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

// Forward (x W) and backward-weights (x^T dy) for every layer, backward-data (dy W^T) for all but
// the first: what the training step of an MLP with layer widths `dims` multiplies.
inline std::vector<Gemm> step_gemms(long batch, const std::vector<long>& dims) {
  std::vector<Gemm> gs;
  gs.reserve(3 * dims.size());
  for (std::size_t i = 0; i + 1 < dims.size(); ++i) {
    long in = dims[i], out = dims[i + 1];
    gs.emplace_back("fwd", 'N', 'N', batch, out, in);
    if (i > 0) gs.emplace_back("bwd_data", 'N', 'T', batch, in, out);
    gs.emplace_back("bwd_weights", 'T', 'N', in, out, batch);
  }
  return gs;
}

// The flops of step_gemms(batch, dims), without allocating them: 2 per multiply-add.
inline double step_flops(long batch, const std::vector<long>& dims) {
  double f = 0;
  for (std::size_t i = 0; i + 1 < dims.size(); ++i)
    f += 2.0 * static_cast<double>(batch) * static_cast<double>(dims[i] * dims[i + 1]) * (i == 0 ? 2 : 3);
  return f;
}

inline double flops(const std::vector<Gemm>& gs) {
  double f = 0;
  for (auto& g : gs) f += g.flops();
  return f;
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Seconds per pass over all gemms: `warmup` untimed passes, then `windows` windows of `reps`
// passes each; the median window.
inline double time_pass(std::span<Gemm> gs, int windows, int reps, int warmup = 3) {
  for (int w = 0; w < warmup; ++w)
    for (auto& g : gs) g.run();
  std::vector<double> t;
  for (int w = 0; w < windows; ++w) {
    auto s = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r)
      for (auto& g : gs) g.run();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count() / reps);
  }
  return median(t);
}

// The sgemm peak's shapes: a few large square-ish ones and the large MLP's own (4096x2048x784).
// Built once by a caller that times them repeatedly (~370 MB of operands).
inline std::vector<Gemm> peak_gemms() {
  std::vector<Gemm> gs;
  gs.reserve(4);
  for (auto [m, n, k] : {std::array<long, 3>{2048, 2048, 2048}, std::array<long, 3>{4096, 2048, 2048},
                         std::array<long, 3>{4096, 4096, 4096}, std::array<long, 3>{4096, 2048, 784}})
    gs.emplace_back("peak", 'N', 'N', m, n, k);
  return gs;
}

// The sgemm peak: the best GFLOP/s over peak_gemms(), each timed as the median of `windows`
// single calls after `warmup` untimed ones. per_shape, when given, receives each shape's GFLOP/s
// as a JSON object.
inline double peak_gflops(std::vector<Gemm>& shapes, int windows, int warmup, std::string* per_shape = nullptr) {
  double best = 0;
  if (per_shape) *per_shape = "{";
  for (Gemm& g : shapes) {
    const double gflops = g.flops() / time_pass({&g, 1}, windows, 1, warmup) / 1e9;
    best = std::max(best, gflops);
    if (per_shape) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s\"%ldx%ldx%ld\": %.5g", per_shape->size() > 1 ? ", " : "", g.m, g.n, g.k,
                    gflops);
      *per_shape += buf;
    }
  }
  if (per_shape) *per_shape += "}";
  return best;
}

}  // namespace mlp_gemms
