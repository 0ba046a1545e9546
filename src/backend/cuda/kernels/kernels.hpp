// Hand-written CUDA kernels of the CUDA backend and their host launchers. Launchers only queue
// work on the given stream (no synchronisation, no error checks: the caller checks
// cudaGetLastError() after them) and take raw device pointers, so this header needs nothing but
// the CUDA runtime; argument checking lives in kernel_ops_*.cpp.
//
// Reductions are deterministic: their block/grid shapes depend only on the problem size, partial
// sums are combined in a fixed order in double, and the only atomics are on integers (exact).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "backend/cuda/kernels/im2col_index.hpp"
#include "kerascpp/backend/optimizer_update.hpp"
#include "kerascpp/backend/row_loss.hpp"

namespace kerascpp::cuda::kern {

// ---------------------------------------------------------------------------------- status
// Results that come back to the host: one small block in device memory with a pinned mirror.
struct Status {
  unsigned long long count;    // integer tallies (accuracy hits), added with integer atomics
  unsigned long long bad_row;  // smallest label index out of range, kNoBadRow when none
  double value;                // result of reduce_to_double
  double reserved;
};
constexpr unsigned long long kNoBadRow = ~0ull;

// count = 0, bad_row = kNoBadRow, value = 0.
void reset_status(Status* status, cudaStream_t stream);

// Integer label element types (the labels' dtype).
enum LabelType : int { kLabelInt32 = 0, kLabelInt64 = 1, kLabelUint8 = 2 };

// ------------------------------------------------------------------------------ casts
enum FloatType : int { kFloat32 = 0, kBfloat16 = 1, kFloat16 = 2 };
// y[i] = x[i] converted from `from` to `to` (round to nearest even).
void cast(const void* x, FloatType from, void* y, FloatType to, std::int64_t n, cudaStream_t stream);

// ------------------------------------------------------------------------------ activations
// activations.cu: the activations cuDNN lacks, by backend/activation_formulas.hpp. `kind` is an
// ActivationKind, a/b/c its ActivationFn's alpha/beta/gamma. y may alias x, dx may alias dy.
void activation_forward(int kind, float a, float b, float c, const float* x, float* y, std::int64_t n,
                        cudaStream_t stream);
// dx = dy * f'(v), v the output y where from_output (ActivationFn::gradient_from_output), else x.
void activation_backward(int kind, float a, float b, float c, bool from_output, const float* v, const float* dy,
                         float* dx, std::int64_t n, cudaStream_t stream);
// Over the fibres of an [outer, classes, inner] view: glu (y has classes / 2) and Keras 3's
// sparsemax (y may alias x; dx may alias dy).
void glu_forward(const float* x, float* y, std::int64_t outer, std::int64_t classes, std::int64_t inner,
                 cudaStream_t stream);
void glu_backward(const float* x, const float* dy, float* dx, std::int64_t outer, std::int64_t classes,
                  std::int64_t inner, cudaStream_t stream);
void sparsemax_forward(const float* x, float* y, std::int64_t outer, std::int64_t classes, std::int64_t inner,
                       cudaStream_t stream);
void sparsemax_backward(const float* x, const float* dy, float* dx, std::int64_t outer, std::int64_t classes,
                        std::int64_t inner, cudaStream_t stream);

// ------------------------------------------------------------------------------ elementwise
constexpr int kMaxAddInputs = 8;
// y = xs[0] + ... + xs[count-1]; xs is a host array of `count` (1..kMaxAddInputs) device
// pointers. y may alias any input.
void add_n(const float* const* xs, int count, float* y, std::int64_t n, cudaStream_t stream);
void fill(float* x, float value, std::int64_t n, cudaStream_t stream);
void scale(float* x, float factor, std::int64_t n, cudaStream_t stream);
void multiply(const float* a, const float* b, float* y, std::int64_t n, cudaStream_t stream);
// x[n·cols + c] *= w[n] for n < rows (x viewed as [rows, cols]).
void scale_rows(float* x, const float* w, std::int64_t rows, std::int64_t cols, cudaStream_t stream);
// ReLU's gradient from its output, TensorFlow's ReluGrad dy * (y > 0): dy where y > 0, else +0
// for a finite dy and NaN for a NaN/Inf one (cuDNN's gives 0, dropping a NaN gradient). dx may
// alias dy. The CPU backend computes the same (backend/cpu/nan_propagation.hpp).
void relu_backward(const float* y, const float* dy, float* dx, std::int64_t n, cudaStream_t stream);
// Inverted dropout with the CPU backend's counter-based SplitMix64 draws: element i keeps its
// value (times keep_scale) when mix64(base + i·golden) >> 40 >= threshold.
// y[i] = mean + stddev·(standard normal draw i of `seed`), backend/normal_draws.hpp.
void random_normal(float* y, std::int64_t n, std::uint64_t seed, float mean, float stddev, cudaStream_t stream);
void dropout(const float* x, float* y, float* mask, std::int64_t n, std::uint64_t base, std::uint64_t threshold,
             float keep_scale, cudaStream_t stream);

// --------------------------------------------------------------------------- concat / split
// The whole tensor viewed as [outer, whole_row]; part k as [outer, rows[k]] at column offset
// offsets[k] of each whole row. to_whole: concat (parts -> whole), otherwise split.
constexpr int kMaxConcatParts = 8;
struct ConcatParts {
  float* data[kMaxConcatParts];
  std::int64_t row[kMaxConcatParts];
  std::int64_t offset[kMaxConcatParts];
  int count;
};
void concat_rows(const ConcatParts& parts, float* whole, std::int64_t outer, std::int64_t whole_row, bool to_whole,
                 cudaStream_t stream);

// ------------------------------------------------------------------------------- reductions
// Per-column sums over a [rows, cols] matrix, accumulated in double.
enum ColumnSumKind : int {
  kColumnSum = 0,       // out0 = Σ a                          (out1 unused)
  kColumnSumDyXmu = 2,  // out0 = Σ a,   out1 = Σ a·(b − mean)  (a = dy, b = x)
  kColumnShifted = 3,   // partials of Σ(a − k) and Σ(a − k)², k = a's first row (column_moments only)
};
// Doubles of scratch column_sums needs.
std::size_t column_sums_scratch(std::int64_t rows, std::int64_t cols, int kind);
// accumulate: out0 = float(out0 + Σ) instead of float(Σ) (kColumnSum only). rows may be 0.
void column_sums(int kind, const float* a, const float* b, const float* mean, std::int64_t rows, std::int64_t cols,
                 double* scratch, float* out0, float* out1, bool accumulate, cudaStream_t stream);

// Per-column mean and biased variance of x [rows >= 1, cols], as the CPU backend computes them
// (backend/cpu/batchnorm_stats.cpp): shifted by the first row, summed in double in a fixed
// order, var = max(0, Σ(x−k)²/n − (Σ(x−k)/n)²). scratch: column_sums_scratch(rows, cols,
// kColumnShifted) doubles.
void column_moments(const float* x, std::int64_t rows, std::int64_t cols, double* scratch, float* mean, float* var,
                    cudaStream_t stream);

// Σ over n elements into status->value, in double.
enum ReduceKind : int {
  kReduceSum = 0,         // Σ a
  kReduceAbsDiff = 1,     // Σ |a − b|
  kReduceSumSquares = 2,  // Σ a²
  kReduceSumAbs = 3,      // Σ |a|
};
std::size_t reduce_scratch(std::int64_t n);  // doubles
// status->count += the number of Inf and NaN among x's n elements (finite.cu; integer atomics,
// exact): LossScaleOptimizer's overflow check, one launch per gradient, one fetch for all.
void count_non_finite(const float* x, std::int64_t n, Status* status, cudaStream_t stream);
void reduce_to_double(int kind, const float* a, const float* b, std::int64_t n, double* scratch, Status* status,
                      cudaStream_t stream);

// Batch-norm backward apply over [rows, cols]: per-channel coefficients (in double, like the
// CPU backend) into coef[3·cols] floats, then dx = a·dy + b·(x − mean) + d. sums holds Σdy
// [cols], Σdy·(x − mean) [cols] and the row count (batchnorm_backward_reduce's layout).
void batchnorm_backward_apply(const float* dy, const float* x, const float* gamma, const float* mean, const float* var,
                              float eps, const float* sums, std::int64_t rows, std::int64_t cols, float* coef,
                              float* dx, cudaStream_t stream);

// Batch-norm forward with given statistics over [rows, cols]: coef[2·cols] floats get
// a = γ/√(var + eps) and β per channel, then y = a·(x − mean) + β (y may alias x). gamma or
// beta may be null (1 and 0).
void batchnorm_forward_apply(const float* x, const float* gamma, const float* beta, const float* mean, const float* var,
                             float eps, std::int64_t rows, std::int64_t cols, float* coef, float* y,
                             cudaStream_t stream);

// ------------------------------------------------------------------------------- moments.cu
// packed[replicas·(2·cols + 1)]: zeros but for slot `replica` = (count, mean, var).
void pack_moments(const float* mean, const float* var, float count, std::int64_t cols, int replica, int replicas,
                  float* packed, cudaStream_t stream);
// The union's mean and biased variance from the all-reduced slots (in double, replica order).
void synchronized_moments(const float* packed, std::int64_t cols, int replicas, float* mean, float* var,
                          cudaStream_t stream);
// Σnᵣμᵣ/N and Σnᵣvᵣ/N in float, replica order.
void average_moments(const float* packed, std::int64_t cols, int replicas, float* mean, float* var,
                     cudaStream_t stream);
// moving = moving·momentum + value·(1 − momentum) over n elements.
void moving_average(float* moving, const float* value, float momentum, std::int64_t n, cudaStream_t stream);
// After the column sums filled sums[0, 2·cols): sums[2·cols] = count, dbeta = Σdy and
// dgamma = Σdy·(x − mean)/√(var + eps) in float (either may be null).
void grad_sums_finish(float* sums, float count, const float* var, float eps, std::int64_t cols, float* dgamma,
                      float* dbeta, cudaStream_t stream);

// ----------------------------------------------------------------------------------- losses
// Crossentropy over rows of `classes` values; rows of one example (per_example of them,
// consecutive) are averaged into loss[example]. Exactly one of target (dense) and labels
// (class ids of label_type, one per row) is set. grad (may be null) gets
// d(row loss)/d(pred) · grad_scale. Rows whose label is outside [0, classes) lower
// status->bad_row to their index. row_loss: `rows` doubles of scratch when per_example != 1.
struct CrossentropyArgs {
  const float* pred;
  const float* target;
  const void* labels;
  int label_type;
  bool from_logits;
  std::int64_t rows, classes, examples, per_example;
  float* loss;
  float* grad;
  float grad_scale;
  double* row_loss;
  Status* status;
};
void crossentropy(const CrossentropyArgs& args, cudaStream_t stream);

// Elementwise losses over [examples, width]: loss[n] = mean over the example's values.
enum ElementLossKind : int {
  kBinaryCrossentropyLogits = 0,
  kBinaryCrossentropyProbs = 1,
  kMeanSquaredError = 2,
  kHuber = 3
};
struct ElementLossArgs {
  int kind;
  const float* pred;
  const float* target;
  std::int64_t examples, width;
  float* loss;
  float* grad;       // may be null
  float grad_scale;  // already divided by width (and doubled for MSE)
  double* partials;  // element_loss_scratch(examples, width) doubles (may be null when 0)
  float delta;       // kHuber's
};
std::size_t element_loss_scratch(std::int64_t examples, std::int64_t width);  // doubles
void element_loss(const ElementLossArgs& args, cudaStream_t stream);

// TrainingKernels::row_loss: one thread per row of `width` values (the formulas of
// backend/row_loss_formulas.hpp, shared with the CPU). Exactly one of target (width values per
// row) and labels (one class id of label_type per row; outside [0, width) lowers
// status->bad_row) is set. row_loss: `rows` doubles of scratch when per_example != 1.
struct RowLossArgs {
  RowLoss kind;
  RowLossParams params;
  const float* pred;
  const float* target;
  const void* labels;
  int label_type;
  std::int64_t rows, width, examples, per_example;
  float* loss;
  float* grad;        // may be null
  double grad_scale;  // already divided by per_example
  double* row_loss;
  Status* status;
};
void row_loss(const RowLossArgs& args, cudaStream_t stream);

// ---------------------------------------------------------------------------------- metrics
// status->count += rows whose argmax(pred) (first maximum, like numpy) equals the label
// (labels != null) or argmax(target). Out-of-range labels lower status->bad_row.
void class_accuracy_hits(const float* pred, const float* target, const void* labels, int label_type, std::int64_t rows,
                         std::int64_t classes, Status* status, cudaStream_t stream);
// status->count += rows whose label's score has fewer than k strictly larger scores (not NaN).
void top_k_hits(const float* pred, const void* labels, int label_type, std::int64_t rows, std::int64_t classes, int k,
                Status* status, cudaStream_t stream);
// status->count += elements where (pred > threshold ? 1 : 0) == target.
void binary_accuracy_hits(const float* pred, const float* target, std::int64_t n, float threshold, Status* status,
                          cudaStream_t stream);

// hist[0..T] and hist[T+1..2T+1] (positives, negatives: target != 0 or not) are zeroed, then
// count each visited element pred[offset + k·stride] (k < count) by its bucket: the number of
// the ascending device `thresholds` below pred (NaN: 0), or with `even` (thresholds unused)
// Keras' evenly spaced bucket of backend/confusion.hpp's even_bucket. Integer atomics: exact.
void confusion_histogram(const float* pred, const float* target, std::int64_t count, std::int64_t stride,
                         std::int64_t offset, const float* thresholds, int num_thresholds, bool even,
                         unsigned long long* hist, cudaStream_t stream);

// ------------------------------------------------------------------------------- optimizers
// Keras 3 update formulas, in the CPU backend's operation order without FMA contraction, so the
// results equal the CPU backend's bit for bit.
void sgd_update(float* w, const float* g, float* velocity, std::int64_t n, float lr, float momentum, bool nesterov,
                cudaStream_t stream);
void adam_update(float* w, const float* g, float* m, float* v, std::int64_t n, float lr_t, float beta_1, float beta_2,
                 float eps, cudaStream_t stream);
void rmsprop_update(float* w, const float* g, float* v, std::int64_t n, float lr, float rho, float eps,
                    cudaStream_t stream);
void weight_decay_update(float* w, std::int64_t n, float lr, float weight_decay, cudaStream_t stream);
// Attention (attention.cu). y[i] = x[Σ coord_a(i)·in_strides[a]] over the output's row-major index.
struct Permutation {
  int rank;
  std::int64_t out_dims[6];
  std::int64_t in_strides[6];
};
void transpose(const float* x, float* y, std::int64_t n, const Permutation& p, cudaStream_t stream);
// x [B, G, L]: x[b, g, l] = value where mask[b, l] == 0.
// out[b, t, s] = AND of the given (non-null) q[b, t], v[b, s], e[b, t, s] and, when causal, s <= t.
void attention_mask(const std::uint8_t* q, const std::uint8_t* v, const std::uint8_t* e, bool causal, std::uint8_t* out,
                    std::int64_t B, std::int64_t T, std::int64_t S, cudaStream_t stream);
void mask_and(const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out, std::int64_t n, cudaStream_t stream);
// mask[r] = 1 where any x[r, k] (x [rows, K]) differs from value (NaN differs), else 0.
void mask_not_equal(const float* x, float value, std::uint8_t* mask, std::int64_t rows, std::int64_t K,
                    cudaStream_t stream);
// Bilinear resize along the middle axis of x [outer, n, inner] by `times` (backend/linear_resize_taps.hpp),
// and its adjoint (dx [outer, n, inner] overwritten from dy [outer, n * times, inner]).
void upsample_linear(const float* x, float* y, std::int64_t outer, std::int64_t n, std::int64_t inner,
                     std::int64_t times, cudaStream_t stream);
void upsample_linear_backward(const float* dy, float* dx, std::int64_t outer, std::int64_t n, std::int64_t inner,
                              std::int64_t times, cudaStream_t stream);
void masked_fill(float* x, const std::uint8_t* mask, std::int64_t B, std::int64_t G, std::int64_t L, float value,
                 cudaStream_t stream);
// A convolution as a matrix product (im2col.cu, im2col_index.hpp): col [n·oh·ow, kh·kw·c] of x
// (zeros in the padding); col2im overwrites dx [n, h, w, c] with the sum of the col entries each
// element feeds (the adjoint).
void im2col(const float* x, const ConvGeometry& g, float* col, cudaStream_t stream);
void col2im(const float* col, const ConvGeometry& g, float* dx, cudaStream_t stream);

// Regularizers and constraints (weight_penalties.cu).
// grad += grad_scale·(l1·sign(w) + 2·l2·w)
void weight_penalty_grad(const float* w, float* grad, std::int64_t n, float l1, float l2, float grad_scale,
                         cudaStream_t stream);
// Each column of w [rows, cols] scaled by clip(‖col‖, 0, max_value) / (1e-7 + ‖col‖).
void max_norm(float* w, std::int64_t rows, std::int64_t cols, float max_value, cudaStream_t stream);
void adagrad_update(float* w, const float* g, float* accumulator, std::int64_t n, float lr, float eps,
                    cudaStream_t stream);
void nadam_update(float* w, const float* g, float* m, float* v, std::int64_t n, float lr, float beta_1, float beta_2,
                  float eps, float u, float u_next, float u_product, float beta_2_power, cudaStream_t stream);
// One elementwise optimizer rule (backend/optimizer_rules.hpp) over n elements; unused slots null.
void optimizer_update(const UpdateParams& params, float* w, const float* g, float* s0, float* s1, float* s2,
                      std::int64_t n, cudaStream_t stream);

// -------------------------------------------------------------------------- l2_normalize.cu
// Backend::l2_normalize_rows and its backward on x, y, dy [rows, cols] and inv [rows].
void l2_normalize_rows(const float* x, std::int64_t rows, std::int64_t cols, float* y, float* inv, cudaStream_t stream);
void l2_normalize_rows_backward(const float* y, const float* dy, const float* inv, std::int64_t rows, std::int64_t cols,
                                float* dx, cudaStream_t stream);

// ---------------------------------------------------------------------------- layer_norm.cu
// Layer normalization over [rows, cols]: each row normalised over its cols; gamma/beta may be
// null (scale 1, shift 0). mean/rstd [rows] out of the forward, into the backward; dgamma/dbeta
// [cols] may be null (not wanted).
void layer_norm_forward(const float* x, const float* gamma, const float* beta, float eps, std::int64_t rows,
                        std::int64_t cols, float* y, float* mean, float* rstd, cudaStream_t stream);
void layer_norm_backward(const float* dy, const float* x, const float* gamma, const float* mean, const float* rstd,
                         std::int64_t rows, std::int64_t cols, float* dx, float* dgamma, float* dbeta,
                         cudaStream_t stream);

// ----------------------------------------------------------------------------- embedding.cu
// Id element types: the LabelType values plus float32 holding integers (rounded to nearest).
constexpr int kIdFloat32 = 3;
// out[n, width] = table[ids[i]]; mask (may be null) [n] = id != 0. An id outside [0, rows)
// lowers status->bad_row to its position (its row comes out zero).
void gather_rows(const float* table, const void* ids, int id_type, std::int64_t n, std::int64_t rows,
                 std::int64_t width, float* out, std::uint8_t* mask, Status* status, cudaStream_t stream);
// dtable[ids[i]] += dy[i] over positions i in index order (deterministic), bad ids as above.
void scatter_add_rows(const void* ids, int id_type, std::int64_t n, std::int64_t rows, std::int64_t width,
                      const float* dy, float* dtable, Status* status, cudaStream_t stream);
// sums[g, c] = Σ dy[positions[p], c] over p in [offsets[g], offsets[g + 1]), in p order
// (unique_row_sums' rows; the grouping is computed on the host).
void grouped_row_sums(const float* dy, const std::int64_t* offsets, const std::int64_t* positions, std::int64_t groups,
                      std::int64_t width, float* sums, cudaStream_t stream);

}  // namespace kerascpp::cuda::kern
