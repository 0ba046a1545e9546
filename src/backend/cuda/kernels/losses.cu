// Losses with the CPU backend's formulas (backend/cpu/losses.cpp): one warp per class row for
// the crossentropies, one warp per chunk of an example's values for the elementwise losses;
// per-example means of several rows/chunks go through a block-per-example tree sum. All sums
// are in double with a fixed order, so losses are reproducible bit for bit.
#include "backend/cuda/kernels/common.cuh"
#include "backend/row_loss_formulas.hpp"

namespace kerascpp::cuda::kern {

namespace {

// Keras's backend.epsilon(), used to clip probabilities.
constexpr float kProbEpsilon = 1e-7f;
constexpr float kProbUpper = 1.f - kProbEpsilon;

__device__ __forceinline__ bool inside_clip(float q) { return q > kProbEpsilon && q < kProbUpper; }
// std::min(std::max(q, eps), 1 - eps), NaN passing through as it does there.
__device__ __forceinline__ float clip_prob(float q) {
  const float lo = q < kProbEpsilon ? kProbEpsilon : q;
  return kProbUpper < lo ? kProbUpper : lo;
}

// out[n] = float(Σ values[n·per .. n·per + per) / divisor), one block per example.
__global__ void segment_mean_kernel(const double* values, std::int64_t per, double divisor, float* out) {
  __shared__ double shared[kThreads];
  const std::int64_t n = blockIdx.x;
  double s = 0.0;
  for (std::int64_t k = threadIdx.x; k < per; k += kThreads) s += values[n * per + k];
  s = block_sum(s, shared);
  if (threadIdx.x == 0) out[n] = static_cast<float>(s / divisor);
}

void segment_mean(const double* values, std::int64_t examples, std::int64_t per, double divisor, float* out,
                  cudaStream_t stream) {
  if (examples <= 0) return;
  segment_mean_kernel<<<static_cast<unsigned>(examples), kThreads, 0, stream>>>(values, per, divisor, out);
}

// ------------------------------------------------------------------------------ crossentropy

__device__ __forceinline__ void store_row_loss(const CrossentropyArgs& a, std::int64_t r, double loss) {
  if (a.per_example == 1) a.loss[r] = static_cast<float>(loss);
  else a.row_loss[r] = loss;
}

// One warp per row of `classes` values.
__global__ void crossentropy_kernel(CrossentropyArgs a) {
  const int lane = threadIdx.x & 31;
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (r >= a.rows) return;  // uniform over the warp
  const std::int64_t C = a.classes;
  const float* z = a.pred + r * C;
  const float* t = a.target ? a.target + r * C : nullptr;
  float* g = a.grad ? a.grad + r * C : nullptr;
  const float gs = a.grad_scale;
  std::int64_t label = -1;
  if (!t) {
    label = load_label(a.labels, a.label_type, r);
    if (label < 0 || label >= C) {  // uniform over the warp; the host throws naming the first one
      if (lane == 0) {
        atomicMin(&a.status->bad_row, static_cast<unsigned long long>(r));
        store_row_loss(a, r, __longlong_as_double(0x7ff8000000000000LL));  // NaN
      }
      return;
    }
  }
  double loss = 0.0;
  if (a.from_logits) {
    float m = -INFINITY;
    for (std::int64_t j = lane; j < C; j += 32) m = fmaxf(m, z[j]);
    m = warp_max(m);
    double s = 0.0;
    for (std::int64_t j = lane; j < C; j += 32) s += exp(static_cast<double>(z[j]) - static_cast<double>(m));
    s = warp_sum(s);
    const double lse = static_cast<double>(m) + log(s);
    double tsum = 1.0;
    if (t) {
      double l = 0.0, ts = 0.0;
      for (std::int64_t j = lane; j < C; j += 32) {
        ts += t[j];
        l += static_cast<double>(t[j]) * (lse - static_cast<double>(z[j]));
      }
      loss = warp_sum(l);
      tsum = warp_sum(ts);
    } else {
      loss = lse - static_cast<double>(z[label]);
    }
    if (g) {
      for (std::int64_t j = lane; j < C; j += 32) {
        const double p = exp(static_cast<double>(z[j]) - lse);
        const double tj = t ? static_cast<double>(t[j]) : (j == label ? 1.0 : 0.0);
        g[j] = static_cast<float>((p * tsum - tj) * gs);
      }
    }
  } else {
    // Probabilities: q = p / Σp, clipped; d/dp_k = (−[k kept]·t_k/q_k + Σ_j [j kept]·t_j) / Σp.
    double S = 0.0;
    for (std::int64_t j = lane; j < C; j += 32) S += z[j];
    S = warp_sum(S);
    const float inv_s = static_cast<float>(1.0 / S);
    double kept_t = 0.0;
    if (t) {
      double l = 0.0, kept = 0.0;
      for (std::int64_t j = lane; j < C; j += 32) {
        const float q = __fmul_rn(z[j], inv_s);
        l -= static_cast<double>(t[j]) * log(static_cast<double>(clip_prob(q)));
        if (inside_clip(q)) kept += t[j];
      }
      loss = warp_sum(l);
      kept_t = warp_sum(kept);
    } else {
      const float q = __fmul_rn(z[label], inv_s);
      loss = -log(static_cast<double>(clip_prob(q)));
      kept_t = inside_clip(q) ? 1.0 : 0.0;
    }
    if (g) {
      for (std::int64_t j = lane; j < C; j += 32) {
        const float q = __fmul_rn(z[j], inv_s);
        const double tj = t ? static_cast<double>(t[j]) : (j == label ? 1.0 : 0.0);
        const double own = (tj != 0.0 && inside_clip(q)) ? tj / static_cast<double>(q) : 0.0;
        g[j] = static_cast<float>((kept_t - own) / S * gs);
      }
    }
  }
  if (lane == 0) store_row_loss(a, r, loss);
}

// ------------------------------------------------------------------------- elementwise losses
// Work unit: one warp over kElementChunk consecutive values of one example.

constexpr std::int64_t kElementChunk = 1024;

std::int64_t element_chunks(std::int64_t width) { return (width + kElementChunk - 1) / kElementChunk; }

__global__ void element_loss_kernel(ElementLossArgs a, std::int64_t chunks) {
  const int lane = threadIdx.x & 31;
  const std::int64_t unit = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (unit >= a.examples * chunks) return;  // uniform over the warp
  const std::int64_t n = unit / chunks;
  const std::int64_t ch = unit - n * chunks;
  const std::int64_t row = n * a.width;
  const std::int64_t begin = row + ch * kElementChunk;
  const std::int64_t end = row + ((ch + 1) * kElementChunk < a.width ? (ch + 1) * kElementChunk : a.width);
  const float gs = a.grad_scale;
  double total = 0.0;
  for (std::int64_t i = begin + lane; i < end; i += 32) {
    const float x = a.pred[i], t = a.target[i];
    if (a.kind == kBinaryCrossentropyLogits) {
      // −t·log σ(x) − (1−t)·log(1−σ(x)) = max(x,0) − x·t + log(1 + e^−|x|)
      total += static_cast<double>(fmaxf(x, 0.f)) - static_cast<double>(x) * static_cast<double>(t) +
               static_cast<double>(log1pf(expf(-fabsf(x))));
      if (a.grad) a.grad[i] = (1.f / (1.f + expf(-x)) - t) * gs;
    } else if (a.kind == kBinaryCrossentropyProbs) {
      const float p = clip_prob(x);
      total -= static_cast<double>(t) * log(static_cast<double>(p)) +
               (1.0 - static_cast<double>(t)) * log(1.0 - static_cast<double>(p));
      if (a.grad)
        a.grad[i] = inside_clip(x)
                        ? static_cast<float>((-static_cast<double>(t) / static_cast<double>(x) +
                                              (1.0 - static_cast<double>(t)) / (1.0 - static_cast<double>(x))) *
                                             gs)
                        : 0.f;
    } else if (a.kind == kHuber) {
      const float d = x - t, q = fminf(fabsf(d), a.delta);
      total += 0.5 * static_cast<double>(q) * static_cast<double>(q) +
               static_cast<double>(a.delta) * static_cast<double>(fabsf(d) - q);
      if (a.grad) a.grad[i] = fminf(fmaxf(d, -a.delta), a.delta) * gs;
    } else {
      const float d = x - t;
      total += static_cast<double>(d) * static_cast<double>(d);
      if (a.grad) a.grad[i] = d * gs;
    }
  }
  total = warp_sum(total);
  if (lane == 0) {
    if (chunks == 1) a.loss[n] = static_cast<float>(total / static_cast<double>(a.width));
    else a.partials[unit] = total;
  }
}

// ------------------------------------------------------------------------------- row losses
// One thread per row: the formulas walk a row several times (norms, maxima, moments), and these
// losses' rows are short class or feature vectors, where a warp per row would idle.
__global__ void row_loss_kernel(RowLossArgs a) {
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= a.rows) return;
  const std::int64_t at = r * a.width;
  std::int64_t label = -1;
  if (a.labels) {
    label = load_label(a.labels, a.label_type, r);
    if (label < 0 || label >= a.width) {  // the host throws naming the first one
      atomicMin(&a.status->bad_row, static_cast<unsigned long long>(r));
      if (a.per_example == 1) a.loss[r] = __int_as_float(0x7fc00000);  // NaN
      else a.row_loss[r] = __longlong_as_double(0x7ff8000000000000LL);
      return;
    }
  }
  const double v = row_losses::row_loss_value(a.kind, a.params, a.pred + at, a.target ? a.target + at : nullptr, label,
                                              a.width, a.grad ? a.grad + at : nullptr, a.grad_scale);
  if (a.per_example == 1) a.loss[r] = static_cast<float>(v);
  else a.row_loss[r] = v;
}

}  // namespace

void crossentropy(const CrossentropyArgs& args, cudaStream_t stream) {
  if (args.rows > 0) {
    const std::int64_t blocks = (args.rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
    crossentropy_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(args);
  }
  if (args.per_example != 1)
    segment_mean(args.row_loss, args.examples, args.per_example, static_cast<double>(args.per_example), args.loss,
                 stream);
}

std::size_t element_loss_scratch(std::int64_t examples, std::int64_t width) {
  const std::int64_t chunks = element_chunks(width);
  return chunks > 1 ? static_cast<std::size_t>(examples * chunks) : 0;
}

void element_loss(const ElementLossArgs& args, cudaStream_t stream) {
  if (args.examples <= 0) return;
  if (args.width <= 0) {  // no values: the loss is 0, as on the CPU
    cudaMemsetAsync(args.loss, 0, static_cast<std::size_t>(args.examples) * sizeof(float), stream);
    return;
  }
  const std::int64_t chunks = element_chunks(args.width);
  const std::int64_t units = args.examples * chunks;
  const std::int64_t blocks = (units + kWarpsPerBlock - 1) / kWarpsPerBlock;
  element_loss_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(args, chunks);
  if (chunks > 1)
    segment_mean(args.partials, args.examples, chunks, static_cast<double>(args.width), args.loss, stream);
}

void row_loss(const RowLossArgs& args, cudaStream_t stream) {
  if (args.rows > 0) {
    const std::int64_t blocks = (args.rows + kThreads - 1) / kThreads;
    row_loss_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(args);
  }
  if (args.per_example != 1)
    segment_mean(args.row_loss, args.examples, args.per_example, static_cast<double>(args.per_example), args.loss,
                 stream);
}

}  // namespace kerascpp::cuda::kern
