// Deterministic reductions: per-column sums of [rows, cols] (bias gradients, batch-norm sums)
// and the total of a vector into a double, plus the batch-norm backward apply and the status
// block reset. Every shape below depends only on the problem size; partials are combined in a
// fixed order in double, so a result is the same bits run to run.
#include "backend/cuda/kernels/common.cuh"

namespace kerascpp::cuda::kern {

namespace {

// ----------------------------------------------------------------------------- status reset

__global__ void reset_status_kernel(Status* status) {
  status->count = 0;
  status->bad_row = kNoBadRow;
  status->value = 0.0;
  status->reserved = 0.0;
}

// ---------------------------------------------------------------------------- column sums
// Pass 1: blocks of (tx columns) x (ty row lanes), tx·ty = kThreads; block (tile, chunk) sums
// rows [chunk·chunk_rows, +chunk_rows) of its columns into partials[chunk][width][cols].
// Pass 2: the chunk partials of each column added in a fixed order (serially by one thread for
// a few chunks, else by one block per column in a tree).

constexpr std::int64_t kMaxColumnChunks = 512;
constexpr std::int64_t kMaxPartialsPerOutput = std::int64_t{1} << 20;  // doubles: 8 MiB

struct ColumnLayout {
  int tx = 1, ty = kThreads;
  std::int64_t tiles = 1, chunks = 1, chunk_rows = 1;
};

ColumnLayout column_layout(std::int64_t rows, std::int64_t cols) {
  ColumnLayout l;
  l.tx = 1;
  while (l.tx < 32 && l.tx < cols) l.tx *= 2;
  l.ty = kThreads / l.tx;
  l.tiles = (cols + l.tx - 1) / l.tx;
  // At least ~8 rows per thread, at most kMaxColumnChunks chunks and a bounded scratch.
  const std::int64_t min_rows = static_cast<std::int64_t>(l.ty) * 8;
  std::int64_t chunks = (rows + min_rows - 1) / min_rows;
  if (chunks > kMaxColumnChunks) chunks = kMaxColumnChunks;
  const std::int64_t by_scratch = kMaxPartialsPerOutput / (cols > 0 ? cols : 1);
  if (chunks > by_scratch) chunks = by_scratch;
  if (chunks < 1) chunks = 1;
  l.chunks = chunks;
  l.chunk_rows = rows > 0 ? (rows + chunks - 1) / chunks : 1;
  return l;
}

int column_width(int kind) { return kind == kColumnSum ? 1 : 2; }

__global__ void column_partials_kernel(int kind, const float* a, const float* b, const float* mean, std::int64_t rows,
                                       std::int64_t cols, std::int64_t chunk_rows, double* partials) {
  __shared__ double sh0[kThreads];
  __shared__ double sh1[kThreads];
  const int tx = threadIdx.x, ty = threadIdx.y, TX = blockDim.x, TY = blockDim.y;
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * TX + tx;
  const std::int64_t chunk = blockIdx.y;
  const std::int64_t r0 = chunk * chunk_rows;
  const std::int64_t r1 = r0 + chunk_rows < rows ? r0 + chunk_rows : rows;
  double s0 = 0.0, s1 = 0.0;
  if (c < cols) {
    if (kind == kColumnSum) {
      for (std::int64_t r = r0 + ty; r < r1; r += TY) s0 += a[r * cols + c];
    } else if (kind == kColumnShifted) {
      // Shifted by the column's first value (the CPU backend's moments): Σ(a − k), Σ(a − k)².
      const double k = a[c];
      for (std::int64_t r = r0 + ty; r < r1; r += TY) {
        const double d = static_cast<double>(a[r * cols + c]) - k;
        s0 += d;
        s1 += d * d;
      }
    } else {
      const float mu = mean[c];
      for (std::int64_t r = r0 + ty; r < r1; r += TY) {
        const float g = a[r * cols + c];
        s0 += g;
        s1 += static_cast<double>(g) * static_cast<double>(b[r * cols + c] - mu);
      }
    }
  }
  const int idx = ty * TX + tx;
  sh0[idx] = s0;
  sh1[idx] = s1;
  __syncthreads();
  for (int stride = TY / 2; stride > 0; stride >>= 1) {
    if (ty < stride) {
      sh0[idx] += sh0[idx + stride * TX];
      sh1[idx] += sh1[idx + stride * TX];
    }
    __syncthreads();
  }
  if (ty == 0 && c < cols) {
    const int width = kind == kColumnSum ? 1 : 2;
    partials[(chunk * width) * cols + c] = sh0[tx];
    if (width == 2) partials[(chunk * width + 1) * cols + c] = sh1[tx];
  }
}

__global__ void column_finish_kernel(int width, const double* partials, std::int64_t chunks, std::int64_t cols,
                                     float* out0, float* out1, bool accumulate) {
  __shared__ double shared[kThreads];
  const std::int64_t c = blockIdx.x;
  double s0 = 0.0, s1 = 0.0;
  for (std::int64_t k = threadIdx.x; k < chunks; k += kThreads) {
    s0 += partials[(k * width) * cols + c];
    if (width == 2) s1 += partials[(k * width + 1) * cols + c];
  }
  s0 = block_sum(s0, shared);
  if (width == 2) s1 = block_sum(s1, shared);
  if (threadIdx.x == 0) {
    out0[c] = accumulate ? static_cast<float>(out0[c] + s0) : static_cast<float>(s0);
    if (width == 2) out1[c] = static_cast<float>(s1);
  }
}

// Few chunks (the usual bias gradient of a batch): one thread per column, chunks in order.
constexpr std::int64_t kSerialFinishChunks = 32;

__global__ void column_finish_serial_kernel(int width, const double* partials, std::int64_t chunks, std::int64_t cols,
                                            float* out0, float* out1, bool accumulate) {
  const std::int64_t c = global_thread();
  if (c >= cols) return;
  double s0 = 0.0, s1 = 0.0;
  for (std::int64_t k = 0; k < chunks; ++k) {
    s0 += partials[(k * width) * cols + c];
    if (width == 2) s1 += partials[(k * width + 1) * cols + c];
  }
  out0[c] = accumulate ? static_cast<float>(out0[c] + s0) : static_cast<float>(s0);
  if (width == 2) out1[c] = static_cast<float>(s1);
}

// Moments from the shifted partials: one block per column adds its chunks in a fixed tree order
// (one thread per column looping over up to 512 chunks took 69 µs a call on the H200).
__global__ void column_moments_finish_kernel(const float* x, const double* partials, std::int64_t chunks,
                                             std::int64_t rows, std::int64_t cols, float* mean, float* var) {
  __shared__ double shared[kThreads];
  const std::int64_t c = blockIdx.x;
  double s0 = 0.0, s1 = 0.0;
  for (std::int64_t k = threadIdx.x; k < chunks; k += kThreads) {
    s0 += partials[(k * 2) * cols + c];
    s1 += partials[(k * 2 + 1) * cols + c];
  }
  s0 = block_sum(s0, shared);
  s1 = block_sum(s1, shared);
  if (threadIdx.x == 0) {
    const double n = static_cast<double>(rows), m = s0 / n;
    mean[c] = static_cast<float>(static_cast<double>(x[c]) + m);
    var[c] = static_cast<float>(fmax(0.0, s1 / n - m * m));
  }
}

// ------------------------------------------------------------------------------ total sum

std::int64_t reduce_blocks(std::int64_t n) {
  const std::int64_t per_block = static_cast<std::int64_t>(kThreads) * 8;
  std::int64_t blocks = (n + per_block - 1) / per_block;
  if (blocks > 1024) blocks = 1024;
  return blocks;
}

__global__ void reduce_partials_kernel(int kind, const float* a, const float* b, std::int64_t n, double* partials) {
  __shared__ double shared[kThreads];
  double s = 0.0;
  if (kind == kReduceSum) {
    for (std::int64_t i = global_thread(); i < n; i += grid_threads()) s += a[i];
  } else if (kind == kReduceSumSquares) {
    for (std::int64_t i = global_thread(); i < n; i += grid_threads())
      s += static_cast<double>(a[i]) * static_cast<double>(a[i]);
  } else if (kind == kReduceSumAbs) {
    for (std::int64_t i = global_thread(); i < n; i += grid_threads()) s += fabs(static_cast<double>(a[i]));
  } else {
    for (std::int64_t i = global_thread(); i < n; i += grid_threads())
      s += fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
  }
  s = block_sum(s, shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

__global__ void reduce_finish_kernel(const double* partials, std::int64_t count, Status* status) {
  __shared__ double shared[kThreads];
  double s = 0.0;
  for (std::int64_t k = threadIdx.x; k < count; k += kThreads) s += partials[k];
  s = block_sum(s, shared);
  if (threadIdx.x == 0) status->value = s;
}

// ------------------------------------------------------------------- batch-norm forward apply

__global__ void bn_forward_coef_kernel(const float* gamma, const float* beta, const float* var, float eps,
                                       std::int64_t cols, float* coef) {
  const std::int64_t c = global_thread();
  if (c >= cols) return;
  const double inv = 1.0 / sqrt(static_cast<double>(var[c]) + static_cast<double>(eps));
  coef[c] = static_cast<float>((gamma ? static_cast<double>(gamma[c]) : 1.0) * inv);
  coef[cols + c] = beta ? beta[c] : 0.f;
}

// Element i's channel in a row-major [rows, cols] tensor of n elements: a 32-bit modulo where n
// allows, several times cheaper than a 64-bit one.
__device__ __forceinline__ std::int64_t channel_of(std::int64_t i, std::int64_t cols, bool narrow) {
  return narrow ? static_cast<std::int64_t>(static_cast<std::uint32_t>(i) % static_cast<std::uint32_t>(cols))
                : i % cols;
}

__global__ void bn_forward_apply_kernel(const float* x, const float* mean, const float* coef, std::int64_t cols,
                                        std::int64_t n, float* y) {
  const bool narrow = n <= 0xffffffffLL;
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const std::int64_t c = channel_of(i, cols, narrow);
    y[i] = __fadd_rn(__fmul_rn(coef[c], __fsub_rn(x[i], mean[c])), coef[cols + c]);
  }
}

// ------------------------------------------------------------------- batch-norm backward apply

__global__ void bn_coef_kernel(const float* gamma, const float* var, float eps, const float* sums, std::int64_t cols,
                               float* coef) {
  const std::int64_t c = global_thread();
  if (c >= cols) return;
  const float* sum_dy = sums;
  const float* sum_dy_xmu = sums + cols;
  const double count = sums[2 * cols];
  // As backend/cpu/batchnorm_stats.cpp's grad_apply: a = γ·inv, b = −a·inv²·Σdy(x−μ)/count, d = −a·Σdy/count.
  const double inv = 1.0 / sqrt(static_cast<double>(var[c]) + static_cast<double>(eps));
  const double a = (gamma ? static_cast<double>(gamma[c]) : 1.0) * inv;
  coef[c] = static_cast<float>(a);
  coef[cols + c] = static_cast<float>(-a * inv * inv * static_cast<double>(sum_dy_xmu[c]) / count);
  coef[2 * cols + c] = static_cast<float>(-a * static_cast<double>(sum_dy[c]) / count);
}

__global__ void bn_apply_kernel(const float* dy, const float* x, const float* mean, const float* coef,
                                std::int64_t cols, std::int64_t n, float* dx) {
  const bool narrow = n <= 0xffffffffLL;
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const std::int64_t c = channel_of(i, cols, narrow);
    // No FMA contraction: the CPU backend's float expression, rounded the same way.
    const float t0 = __fmul_rn(coef[c], dy[i]);
    const float t1 = __fmul_rn(coef[cols + c], __fsub_rn(x[i], mean[c]));
    dx[i] = __fadd_rn(__fadd_rn(t0, t1), coef[2 * cols + c]);
  }
}

}  // namespace

void reset_status(Status* status, cudaStream_t stream) { reset_status_kernel<<<1, 1, 0, stream>>>(status); }

std::size_t column_sums_scratch(std::int64_t rows, std::int64_t cols, int kind) {
  if (cols <= 0) return 0;
  const ColumnLayout l = column_layout(rows, cols);
  return static_cast<std::size_t>(l.chunks * column_width(kind) * cols);
}

void column_sums(int kind, const float* a, const float* b, const float* mean, std::int64_t rows, std::int64_t cols,
                 double* scratch, float* out0, float* out1, bool accumulate, cudaStream_t stream) {
  if (cols <= 0) return;
  if (rows < 0) rows = 0;
  const ColumnLayout l = column_layout(rows, cols);
  dim3 block(static_cast<unsigned>(l.tx), static_cast<unsigned>(l.ty));
  dim3 grid(static_cast<unsigned>(l.tiles), static_cast<unsigned>(l.chunks));
  column_partials_kernel<<<grid, block, 0, stream>>>(kind, a, b, mean, rows, cols, l.chunk_rows, scratch);
  if (l.chunks <= kSerialFinishChunks)
    column_finish_serial_kernel<<<static_cast<unsigned>((cols + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        column_width(kind), scratch, l.chunks, cols, out0, out1, accumulate);
  else
    column_finish_kernel<<<static_cast<unsigned>(cols), kThreads, 0, stream>>>(column_width(kind), scratch, l.chunks,
                                                                               cols, out0, out1, accumulate);
}

void column_moments(const float* x, std::int64_t rows, std::int64_t cols, double* scratch, float* mean, float* var,
                    cudaStream_t stream) {
  if (cols <= 0 || rows <= 0) return;
  const ColumnLayout l = column_layout(rows, cols);
  dim3 block(static_cast<unsigned>(l.tx), static_cast<unsigned>(l.ty));
  dim3 grid(static_cast<unsigned>(l.tiles), static_cast<unsigned>(l.chunks));
  column_partials_kernel<<<grid, block, 0, stream>>>(kColumnShifted, x, nullptr, nullptr, rows, cols, l.chunk_rows,
                                                     scratch);
  column_moments_finish_kernel<<<static_cast<unsigned>(cols), kThreads, 0, stream>>>(x, scratch, l.chunks, rows, cols,
                                                                                     mean, var);
}

void batchnorm_forward_apply(const float* x, const float* gamma, const float* beta, const float* mean, const float* var,
                             float eps, std::int64_t rows, std::int64_t cols, float* coef, float* y,
                             cudaStream_t stream) {
  if (cols <= 0) return;
  bn_forward_coef_kernel<<<static_cast<unsigned>((cols + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      gamma, beta, var, eps, cols, coef);
  const std::int64_t n = rows * cols;
  if (n <= 0) return;
  bn_forward_apply_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(x, mean, coef, cols, n, y);
}

std::size_t reduce_scratch(std::int64_t n) { return static_cast<std::size_t>(n > 0 ? reduce_blocks(n) : 1); }

void reduce_to_double(int kind, const float* a, const float* b, std::int64_t n, double* scratch, Status* status,
                      cudaStream_t stream) {
  std::int64_t blocks = 0;
  if (n > 0) {
    blocks = reduce_blocks(n);
    reduce_partials_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(kind, a, b, n, scratch);
  }
  reduce_finish_kernel<<<1, kThreads, 0, stream>>>(scratch, blocks, status);
}

void batchnorm_backward_apply(const float* dy, const float* x, const float* gamma, const float* mean, const float* var,
                              float eps, const float* sums, std::int64_t rows, std::int64_t cols, float* coef,
                              float* dx, cudaStream_t stream) {
  if (cols <= 0) return;
  bn_coef_kernel<<<static_cast<unsigned>((cols + kThreads - 1) / kThreads), kThreads, 0, stream>>>(gamma, var, eps,
                                                                                                   sums, cols, coef);
  const std::int64_t n = rows * cols;
  if (n <= 0) return;
  bn_apply_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(dy, x, mean, coef, cols, n, dx);
}

}  // namespace kerascpp::cuda::kern
