// OpenMP loops for the hand-written ops. Reductions split the work into chunks whose size does
// not depend on the thread count and add the chunk partials in index order, so results are
// bit-identical run to run and for any number of threads.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace kerascpp::cpu {

// Elements per parallel block for elementwise loops: large enough that forking threads pays off.
constexpr std::int64_t kElementGrain = 1 << 14;
// Elements per reduction chunk.
constexpr std::int64_t kReduceChunk = 1 << 12;

// Calls f(begin, end) over blocks of `grain` covering [0, n), blocks spread over the threads.
template <class F>
void parallel_for(std::int64_t n, std::int64_t grain, F&& f) {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(grain, 1);
  std::int64_t blocks = (n + grain - 1) / grain;
  if (blocks == 1) {
    f(std::int64_t{0}, n);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) f(b * grain, std::min(n, (b + 1) * grain));
}

// Σ over [0, n) where chunk_sum(begin, end) sums one chunk serially.
template <class F>
double chunked_sum(std::int64_t n, std::vector<double>& partials, F&& chunk_sum) {
  if (n <= 0) return 0.0;
  std::int64_t chunks = (n + kReduceChunk - 1) / kReduceChunk;
  partials.resize(static_cast<std::size_t>(chunks));
  double* p = partials.data();
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::int64_t c = 0; c < chunks; ++c) p[c] = chunk_sum(c * kReduceChunk, std::min(n, (c + 1) * kReduceChunk));
  double total = 0.0;
  for (std::int64_t c = 0; c < chunks; ++c) total += p[c];
  return total;
}

// Per-channel sums over the rows of an [rows, channels] view: `width` accumulators per row
// block (e.g. 2·channels for sum and sum of squares). accumulate(r0, r1, acc) adds rows
// [r0, r1) into acc[width] (zeroed beforehand); the combined sums land in out[width].
template <class F>
void chunked_row_sums(std::int64_t rows, std::int64_t channels, std::int64_t width, std::vector<double>& partials,
                      double* out, F&& accumulate) {
  std::fill(out, out + width, 0.0);
  if (rows <= 0) return;
  // At least 256 rows a chunk: with wide rows (256 channels gives 16 rows) the serial sum of the
  // partials below would otherwise cost as much as the parallel part.
  std::int64_t chunk_rows = std::max<std::int64_t>(256, kReduceChunk / std::max<std::int64_t>(channels, 1));
  std::int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
  partials.assign(static_cast<std::size_t>(chunks * width), 0.0);
  double* p = partials.data();
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::int64_t c = 0; c < chunks; ++c)
    accumulate(c * chunk_rows, std::min(rows, (c + 1) * chunk_rows), p + c * width);
  for (std::int64_t c = 0; c < chunks; ++c)
    for (std::int64_t j = 0; j < width; ++j) out[j] += p[c * width + j];
}

}  // namespace kerascpp::cpu
