// The physical limit of the MLP workloads: the same GEMMs the MLP's training step needs (forward,
// backward-data, backward-weights), timed alone through oneDNN's dnnl_sgemm at the benchmark's
// thread count. Prints JSON lines (bench/README.md).
//
//   sgemm_bench mlp  --batch B --dims 784,512,256,10 [--threads 2] [--windows 7] [--reps R]
//   sgemm_bench peak [--threads 2] [--windows 7]
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "mlp_gemms.hpp"

namespace {

using mlp_gemms::Gemm;
using mlp_gemms::time_pass;

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
    std::vector<Gemm> gs = mlp_gemms::step_gemms(batch, dims);
    const double flops = mlp_gemms::flops(gs);
    int reps = std::stoi(get(kv, "reps", std::to_string(std::max(1L, 40000000000L / static_cast<long>(flops)))));
    double t = time_pass(gs, windows, reps);
    std::string per_gemm = "{";
    for (std::size_t i = 0; i < gs.size(); ++i) {
      Gemm& g = gs[i];
      double ti = time_pass({&g, 1}, 3, reps);
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
    std::string all;
    std::vector<Gemm> shapes = mlp_gemms::peak_gemms();
    const double best = mlp_gemms::peak_gflops(shapes, windows, 3, &all);
    std::printf(
        "{\"framework\": \"sgemm\", \"workload\": \"sgemm_peak\", \"threads\": %d, \"peak_gflops\": %.6g, "
        "\"per_shape_gflops\": %s}\n",
        threads, best, all.c_str());
  }
  return 0;
}
