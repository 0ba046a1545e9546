// Which sgemm is fastest here, on the GEMMs kerascpp's training steps run: oneDNN's (the one
// kerascpp uses) against any CBLAS library named on the command line, loaded with dlopen so that
// their identical cblas_sgemm symbols never meet. Shapes: the large MLP (784-2048-2048-10 at
// batch 4096) and the Fashion-MNIST MLP (784-512-256-10 at batch 1024), each layer's forward
// (X·W), weight gradient (Xᵀ·dY) and input gradient (dY·Wᵀ), sizes between them, and the square
// 2048³/4096³ peaks.
// The "matmul" column is oneDNN's matmul primitive on the same operands (a transposed one read
// through swapped strides, scratchpad owned by the caller): what kerascpp's Dense layers call;
// it and oneDNN's sgemm are timed in turn, call for call.
// The median of --reps timed calls after two warm-ups; threads as the libraries' own variables
// set them (OMP_NUM_THREADS for oneDNN, OpenBLAS and BLIS with OpenMP, MKL_NUM_THREADS for MKL).
//
//   blas_compare [--reps N] [name=path/to/libcblas.so ...]
//   e.g. blas_compare blis=/usr/lib/x86_64-linux-gnu/libblis.so.4 mkl=/opt/mkl/lib/libmkl_rt.so.3
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

// cblas_sgemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) with CBLAS'
// enum values (RowMajor 101, NoTrans 111, Trans 112), the same in every implementation.
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                            int);
// A oneDNN library (another version than the one linked) offers dnnl_sgemm instead: row-major,
// transposes as 'N'/'T', 64-bit sizes.
using DnnlSgemm = int (*)(char, char, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                          const float*, std::int64_t, float, float*, std::int64_t);

struct Lib {
  std::string name;
  CblasSgemm cblas = nullptr;
  DnnlSgemm dnnl = nullptr;
};

struct Gemm {
  std::string what;
  bool ta, tb;
  int m, n, k;
};

std::vector<Gemm> shapes() {
  std::vector<Gemm> g;
  auto layer = [&](const std::string& name, int batch, int in, int out) {
    g.push_back({name + " fwd", false, false, batch, out, in});
    g.push_back({name + " dW", true, false, in, out, batch});
    g.push_back({name + " dX", false, true, batch, in, out});
  };
  layer("large 784>2048", 4096, 784, 2048);
  layer("large 2048>2048", 4096, 2048, 2048);
  layer("mlp 784>512", 1024, 784, 512);
  layer("mlp 512>256", 1024, 512, 256);
  // The official MNIST CNN's Dense(1024) on its 7x7x64 features at batch 256 (0.82 GMACs).
  layer("official cnn 3136>1024", 256, 3136, 1024);
  // Sizes between the two MLPs' GEMMs (0.4 and 6.6-17 GMACs): 1.1 and 4.3 GMACs, for where
  // oneDNN's sgemm starts to beat its matmul primitive.
  g.push_back({"square 1024", false, false, 1024, 1024, 1024});
  g.push_back({"2048x2048x1024", false, false, 2048, 2048, 1024});
  g.push_back({"square 2048", false, false, 2048, 2048, 2048});
  g.push_back({"square 4096", false, false, 4096, 4096, 4096});
  // Either side of oneDNN 2.6's AVX2 thread-split switch (bench/README "Which GEMM": from m >= 1000
  // and n >= 4000 its two threads share one packed A panel): on a Zen 3, 4096^3 ran at 108 GFLOP/s
  // against 176 at 2048^3, and these two rows say whether the switch is why.
  g.push_back({"4096x3996x4096", false, false, 4096, 3996, 4096});
  g.push_back({"4096x4008x4096", false, false, 4096, 4008, 4096});
  return g;
}

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double median_seconds(int reps, const auto& call) {
  call();
  call();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    call();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(std::move(t));
}

// C = op(A)·op(B) through a matmul primitive, built once; call() runs it.
struct MatmulPrimitive {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::matmul prim;
  std::unordered_map<int, dnnl::memory> args;

  MatmulPrimitive(const Gemm& g, float* a, float* b, float* c) {
    using md = dnnl::memory::desc;
    const auto f32 = dnnl::memory::data_type::f32;
    const dnnl::memory::dim m = g.m, n = g.n, k = g.k;
    const md src = g.ta ? md({m, k}, f32, {1, m}) : md({m, k}, f32, {k, 1});
    const md wei = g.tb ? md({k, n}, f32, {1, k}) : md({k, n}, f32, {n, 1});
    const md dst({m, n}, f32, {n, 1});
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, dst), attr, engine);
    prim = dnnl::matmul(pd);
    args = {{DNNL_ARG_SRC, dnnl::memory(src, engine, a)},
            {DNNL_ARG_WEIGHTS, dnnl::memory(wei, engine, b)},
            {DNNL_ARG_DST, dnnl::memory(dst, engine, c)},
            {DNNL_ARG_SCRATCHPAD, dnnl::memory(pd.scratchpad_desc(), engine)}};
  }
  void call() {
    prim.execute(stream, args);
    stream.wait();
  }
};

// The medians of two calls timed in turn, so that the machine's drift between them (this VM's
// speed moves by tens of percent within minutes) falls on both alike.
std::pair<double, double> paired_median_seconds(int reps, const auto& first, const auto& second) {
  for (int i = 0; i < 2; ++i) {
    first();
    second();
  }
  std::vector<double> a, b;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    first();
    auto t1 = std::chrono::steady_clock::now();
    second();
    auto t2 = std::chrono::steady_clock::now();
    a.push_back(std::chrono::duration<double>(t1 - t0).count());
    b.push_back(std::chrono::duration<double>(t2 - t1).count());
  }
  return {median(std::move(a)), median(std::move(b))};
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7;
  std::vector<Lib> libs;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
      continue;
    }
    const char* eq = std::strchr(argv[i], '=');
    if (!eq) {
      std::fprintf(stderr, "blas_compare: expected name=library.so, got %s\n", argv[i]);
      return 2;
    }
    void* h = dlopen(eq + 1, RTLD_NOW | RTLD_LOCAL);
    Lib lib{std::string(argv[i], static_cast<std::size_t>(eq - argv[i]))};
    if (h) {
      lib.cblas = reinterpret_cast<CblasSgemm>(dlsym(h, "cblas_sgemm"));
      if (!lib.cblas) lib.dnnl = reinterpret_cast<DnnlSgemm>(dlsym(h, "dnnl_sgemm"));
    }
    if (!lib.cblas && !lib.dnnl) {
      std::fprintf(stderr, "blas_compare: %s: %s\n", eq + 1, h ? "neither cblas_sgemm nor dnnl_sgemm" : dlerror());
      return 2;
    }
    libs.push_back(lib);
  }
  std::printf("%-22s %6s %6s %6s | %9s %9s", "GEMM (GFLOP/s)", "M", "N", "K", "oneDNN", "matmul");
  for (const Lib& lib : libs) std::printf(" %9s", lib.name.c_str());
  std::printf("\n");
  for (const Gemm& g : shapes()) {
    std::vector<float> a(static_cast<std::size_t>(g.m) * g.k), b(static_cast<std::size_t>(g.k) * g.n),
        c(static_cast<std::size_t>(g.m) * g.n);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7919) % 1000) / 1000.f - 0.5f;
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 104729) % 1000) / 1000.f - 0.5f;
    const int lda = g.ta ? g.m : g.k, ldb = g.tb ? g.k : g.n;
    const double flop = 2.0 * g.m * g.n * g.k;
    std::printf("%-22s %6d %6d %6d |", g.what.c_str(), g.m, g.n, g.k);
    MatmulPrimitive mm(g, a.data(), b.data(), c.data());
    const auto [onednn, matmul] = paired_median_seconds(
        reps,
        [&] {
          dnnl_sgemm(g.ta ? 'T' : 'N', g.tb ? 'T' : 'N', g.m, g.n, g.k, 1.f, a.data(), lda, b.data(), ldb, 0.f,
                     c.data(), g.n);
        },
        [&] { mm.call(); });
    std::printf(" %9.1f %9.1f", flop / onednn / 1e9, flop / matmul / 1e9);
    for (const Lib& lib : libs) {
      const double s = median_seconds(reps, [&] {
        if (lib.cblas)
          lib.cblas(101, g.ta ? 112 : 111, g.tb ? 112 : 111, g.m, g.n, g.k, 1.f, a.data(), lda, b.data(), ldb, 0.f,
                    c.data(), g.n);
        else
          lib.dnnl(g.ta ? 'T' : 'N', g.tb ? 'T' : 'N', g.m, g.n, g.k, 1.f, a.data(), lda, b.data(), ldb, 0.f, c.data(),
                   g.n);
      });
      std::printf(" %9.1f", flop / s / 1e9);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
