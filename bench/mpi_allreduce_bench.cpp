// The all-reduce microbenchmark behind docs/scaling.md: MPI_Allreduce and MPI_Iallreduce + wait
// (sum of float, in place, as MultiWorkerMirroredStrategy reduces gradient buckets) from 4 B to
// 64 MiB and at the strategy's default bucket size (25 MiB); median and spread of the repetitions
// per size, and the latency (alpha) and inverse bandwidth (beta) of t = alpha + beta * bytes
// fitted by least squares. Rank 0 prints a table and one JSON line.
//   mpirun -np 2 build-bench/bench/mpi_allreduce_bench [max_mib]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Point {
  double bytes, blocking_s, nonblocking_s, min_s, max_s;
};

// Times `reps` reductions of `count` floats (after 2 warm-up ones); every rank takes the slowest
// rank's time for each repetition, so the figure is the collective's, not one rank's.
std::vector<double> time_reductions(std::vector<float>& buf, int count, int reps, bool nonblocking) {
  std::vector<double> out;
  for (int r = -2; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (nonblocking) {
      MPI_Request req;
      MPI_Iallreduce(MPI_IN_PLACE, buf.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      MPI_Allreduce(MPI_IN_PLACE, buf.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    double t = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r >= 0) out.push_back(slowest);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double max_mib = argc > 1 ? std::atof(argv[1]) : 64.0;
  std::vector<double> sizes;
  for (double b = 4; b <= max_mib * (1 << 20); b *= 4) sizes.push_back(b);
  sizes.push_back(25.0 * (1 << 20));  // StrategyOptions::bucket_bytes' default
  std::vector<Point> points;
  for (double bytes : sizes) {
    int count = static_cast<int>(bytes / 4);
    std::vector<float> buf(static_cast<std::size_t>(count), 1.0f / static_cast<float>(size));
    // About 0.2 s of repetitions per size, 5 to 200 of them.
    int reps = bytes >= (4 << 20) ? 5 : bytes >= (64 << 10) ? 20 : 200;
    auto blocking = time_reductions(buf, count, reps, false);
    auto nonblocking = time_reductions(buf, count, reps, true);
    points.push_back({bytes, median(blocking), median(nonblocking), *std::min_element(blocking.begin(), blocking.end()),
                      *std::max_element(blocking.begin(), blocking.end())});
  }
  if (rank == 0) {
    // Least squares of t = alpha + beta * bytes over the power-of-4 sizes (blocking medians),
    // each point weighted by 1/t^2: relative errors count, so the microsecond sizes pin alpha
    // instead of being swamped by the millisecond ones.
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t i = 0; i + 1 < points.size(); ++i) {
      double w = 1.0 / (points[i].blocking_s * points[i].blocking_s), x = points[i].bytes, y = points[i].blocking_s;
      n += w;
      sx += w * x;
      sy += w * y;
      sxx += w * x * x;
      sxy += w * x * y;
    }
    double beta = (n * sxy - sx * sy) / (n * sxx - sx * sx), alpha = (sy - beta * sx) / n;
    // The small sizes alone pin the latency better than the intercept of a fit dominated by MiBs.
    double alpha_small = points.front().blocking_s;
    std::printf("%d workers; sum of float, in place\n%12s %14s %14s %12s %12s %10s\n", size, "bytes", "Allreduce us",
                "Iallreduce us", "min us", "max us", "GB/s");
    for (auto& p : points)
      std::printf("%12.0f %14.2f %14.2f %12.2f %12.2f %10.3f\n", p.bytes, p.blocking_s * 1e6, p.nonblocking_s * 1e6,
                  p.min_s * 1e6, p.max_s * 1e6, p.bytes / p.blocking_s / 1e9);
    std::printf("fit t = alpha + beta * bytes: alpha %.2f us (4-byte median %.2f us), beta %.4f ns/B (%.2f GB/s)\n",
                alpha * 1e6, alpha_small * 1e6, beta * 1e9, 1.0 / beta / 1e9);
    std::string pts;
    char item[96];
    for (auto& p : points) {
      std::snprintf(item, sizeof item, "%s[%.0f, %.6g, %.6g]", pts.empty() ? "" : ", ", p.bytes, p.blocking_s,
                    p.nonblocking_s);
      pts += item;
    }
    std::printf(
        "{\"workers\": %d, \"alpha_s\": %.6g, \"alpha_4byte_s\": %.6g, \"beta_s_per_byte\": %.6g, "
        "\"points_bytes_blocking_nonblocking_s\": [%s]}\n",
        size, alpha, alpha_small, beta, pts.c_str());
  }
  MPI_Finalize();
  return 0;
}
