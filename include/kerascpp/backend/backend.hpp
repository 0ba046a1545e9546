// Backend: every numeric primitive a layer, loss, metric or optimizer needs, for one device.
// Layers call only these, so the same layer code runs on the CPU (oneDNN) and CUDA backends.
// One Backend instance serves one replica: it is used from one thread at a time and may
// cache primitives keyed by shape. All tensors are dense, row-major (NHWC for images).
//
// Where tensors live. Every tensor argument must be float32 (labels: integer ids) on the
// backend's device(): the host for the CPU backend, the replica's GPU for the CUDA backend.
// Ops never copy between devices; a tensor elsewhere is refused with a DeviceError. Inside a
// replica step, `Tensor t(shape)` and `Tensor::zeros(shape)` already allocate on that device
// (the strategy sets the replica's default device), so a layer never names one.
//
// Who allocates outputs. Outputs are the non-const Tensor& arguments.
//  * Undefined output: the op allocates it, with the result's shape, on device().
//  * Defined output: the caller preallocated it; it must have the result's shape (a
//    ShapeError otherwise) and is written in place. Layers preallocate what they keep
//    between steps (gradients, moving statistics) and reshape views of it ([N, C] of NHWC).
//  * Exceptions, per op group below: conv2d_backward_data needs dx preallocated (strides
//    make the input size ambiguous); split needs its parts preallocated; an undefined loss
//    `grad` or batchnorm_backward dgamma/dbeta means "not wanted" and is skipped;
//    pool2d_forward's workspace is resized by the call.
//  * `accumulate` flags (matmul, sum_to_last_axis, conv2d_backward_weights) add into a
//    defined output instead of overwriting it: how a layer sums gradients over several calls.
//
// In place. In-place ops say so (add_inplace, bias_add, scale, the optimizer updates,
// moving_average_update). Elsewhere an output may alias an input only where the op says so
// (activation_backward: dx may be dy); otherwise pass distinct tensors.
//
// Writing a layer with Backend ops. A layer's forward and backward receive a ReplicaContext
// (kerascpp/distribute/context.hpp) with the replica's backend; they allocate their outputs and call ops,
// never reading tensor data. A sketch of y = s·(x·W) with a fixed scale s:
//
//   std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
//     Tensor x2 = in[0].reshape({-1, in[0].dim(-1)});            // [N, in], a view
//     Tensor y({x2.dim(0), units_});                             // on the replica's device
//     ctx.backend->matmul(x2, false, kernel_->value(ctx.replica_id), false, y, false);
//     ctx.backend->scale(y, s_);
//     return {y};
//   }
//   std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
//                                const std::vector<Tensor>&, const std::vector<Tensor>& grads, LayerState&) {
//     int r = ctx.replica_id;
//     Tensor x2 = in[0].reshape({-1, in[0].dim(-1)});
//     Tensor dz = grads[0].clone();                              // dL/d(x·W) = s·dy
//     ctx.backend->scale(dz, s_);
//     bool first = kernel_->take_first_grad(r);                  // first contribution this step?
//     ctx.backend->matmul(x2, true, dz, false, kernel_->grad(r), !first);   // dW (+)= xᵀ·dz
//     Tensor dx(in[0].shape());
//     Tensor dx2 = dx.reshape({-1, in[0].dim(-1)});
//     ctx.backend->matmul(dz, false, kernel_->value(r), true, dx2, false);  // dx = dz·Wᵀ
//     return {dx};
//   }
//
// layers/dense.cpp is the full version (activation, bias, skipping dx for the first layer).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kerascpp/backend/activations.hpp"
#include "kerascpp/backend/training_kernels.hpp"
#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp {

/// The geometry of a 2-D convolution or pooling window over NHWC images.
struct Conv2DGeometry {
  /// @{
  /// Kernel size, strides and zero padding on each side, in pixels.
  std::int64_t kernel_h = 1, kernel_w = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  /// @}
};

/// Max or average pooling.
enum class PoolKind : std::uint8_t { max, average };
/// A 2-D pooling window: kind, size, strides and padding per side.
struct Pool2DGeometry {
  /// Max or average.
  PoolKind kind = PoolKind::max;
  /// @{
  /// Window size, strides and padding on each side, in pixels (average pooling excludes padding).
  std::int64_t pool_h = 2, pool_w = 2;
  std::int64_t stride_h = 2, stride_w = 2;
  std::int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  /// @}
};

/// Device work recorded once and replayed (RecordedWork: a CUDA graph on the GPU backend), made by
/// Backend::record. Replays run on the backend's stream, in order with its other work, on the
/// buffers the recorded work used: the caller refills the inputs' buffers in place before each.
class RecordedWork {
 public:
  /// Frees the recording.
  virtual ~RecordedWork() = default;
  /// False once a buffer the recording may use has been freed: it must not be replayed again.
  virtual bool valid() const = 0;
  /// Queues the recorded work again on the backend's stream.
  virtual void replay() = 0;
};

/// The tensor and NN primitives of one device (the fused training kernels it also provides are
/// TrainingKernels', kerascpp/backend/training_kernels.hpp). scripts/check_structure.sh caps the number of
/// virtual functions of each interface: a new op raises the cap in the same commit.
class Backend : public TrainingKernels {
 public:
  /// Releases the device resources (primitive caches, streams).
  ~Backend() override = default;
  /// The device every tensor argument must be on.
  virtual Device device() const = 0;
  virtual std::string name() const = 0;  ///< "cpu (oneDNN 2.6.3, 2 threads)"
  /// Threads this backend may use for calls made from the calling thread.
  virtual void set_num_threads(int threads) = 0;
  /// The thread budget set by set_num_threads.
  virtual int num_threads() const = 0;
  /// The engine names each phase of a step as it starts (training: "forward", "loss", "backward",
  /// "apply", "totals", "after" and the fit loop's own; predict: "predict", "pred forward", ...).
  /// The CUDA backend times them under KERASCPP_GPU_PHASES; others ignore it.
  virtual void mark_phase(const char* /*phase*/) {}
  /// Records the device work `body` queues instead of running it: the recording (its replay()
  /// runs that work), or nullptr where the backend records nothing (the CPU's) or `body` did
  /// something a recording cannot hold (a host wait, say). Either way none of the work has run;
  /// after nullptr the caller runs it the usual way.
  virtual std::unique_ptr<RecordedWork> record(const std::function<void()>& /*body*/) { return nullptr; }

  // ---- mixed precision (see kerascpp/core/mixed_precision.hpp) ----
  /// The dtype dense_forward, matmul, batched_matmul and the conv2d_*/depthwise_conv2d_* ops
  /// compute in: float32 (the default), or bfloat16/float16, which rounds their float32 operands
  /// to 16 bits and accumulates in float32. Outputs and every other op stay float32 unless
  /// low_precision_activations says otherwise. The graph sets it around each layer's forward and
  /// backward from the layer's dtype policy.
  void set_compute_dtype(DType dtype);
  /// The dtype set by set_compute_dtype (float32 by default).
  DType compute_dtype() const { return compute_dtype_; }
  /// How this backend computes in `dtype`: on the CPU "native (<kernel>)" or "emulated (<why>)";
  /// on the CUDA backend the cuBLAS/cuDNN path ("cuBLAS GemmEx float16 inputs, float32
  /// accumulate; cuDNN float16 convolution ...") or "float32 (<why>)"; "float32" for float32.
  virtual std::string compute_path(DType dtype) = 0;
  /// Whether layers computing in `dtype` (bfloat16/float16) may hand their outputs, and the
  /// gradients flowing back into them, to each other in `dtype` instead of float32, as Keras'
  /// mixed policies do (Layer::low_precision_io). Then dense_forward, matmul, the conv2d_* ops,
  /// pool2d_*, relu's activation_backward and sum_to_last_axis take and give tensors of `dtype`
  /// where a float32 one would go (weights, biases and their gradients stay float32). False by
  /// default (the CUDA backend today); the CPU says yes where oneDNN runs `dtype` natively.
  virtual bool low_precision_activations(DType /*dtype*/) { return false; }
  /// y = x converted to `dtype` (float32, bfloat16 and float16, either way; round to nearest even);
  /// y is allocated like any output, with `dtype`.
  virtual void cast(const Tensor& x, DType dtype, Tensor& y) = 0;

  // ---- dense algebra ----
  /// y[N,out] = act(x[N,in] · w[in,out] + b[out]); b may be undefined (no bias).
  virtual void dense_forward(const Tensor& x, const Tensor& w, const Tensor& b, const ActivationFn& act, Tensor& y) = 0;
  /// c[M,N] = op(a) · op(b), op = transpose when the flag is set; adds into c when accumulate.
  virtual void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
                      bool accumulate) = 0;
  /// Batched: c[B,M,N] = op(a[B,..]) · op(b[B,..]) for each of the B leading slices (rank 3 each);
  /// adds into c when accumulate. An undefined c is allocated (then "accumulate" overwrites).
  virtual void batched_matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
                              bool accumulate) = 0;
  /// y = x with its axes permuted: y.shape[i] = x.shape[perm[i]] (rank <= 6; allocated like any output).
  virtual void transpose(const Tensor& x, const std::vector<int>& perm, Tensor& y) = 0;
  /// Attention masking, in place: x viewed as [B, G, L] and mask (uint8, B rows of L) as [B, L];
  /// x[b, g, l] = value wherever mask[b, l] == 0 (scores [B, heads, T, S] with a mask [B, T, S]).
  virtual void masked_fill(Tensor& x, const Tensor& mask, float value) = 0;
  /// Keras masks combined: out = a AND b (uint8, same shape; out allocated like any output).
  virtual void mask_and(const Tensor& a, const Tensor& b, Tensor& out) = 0;
  /// Keras' attention mask, out[b, t, s] (uint8, preallocated [B, T, S]) = the AND of those given:
  /// query_mask[b, t] ([B, T]), value_mask[b, s] ([B, S]), explicit_mask[b, t, s] ([B, T, S]) and,
  /// when causal, s <= t. Undefined tensors are left out; with none and no causal, all ones.
  virtual void attention_mask(const Tensor& query_mask, const Tensor& value_mask, const Tensor& explicit_mask,
                              bool causal, Tensor& out) = 0;
  /// out[C] (+)= sum over all leading axes of x[..., C]  (bias gradients).
  virtual void sum_to_last_axis(const Tensor& x, Tensor& out, bool accumulate) = 0;

  // ---- convolution, NHWC activations, HWIO kernels ----
  /// y = act(conv(x, w) + b) for NHWC x and HWIO w; b may be undefined (no bias).
  virtual void conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                              const ActivationFn& act, Tensor& y) = 0;
  /// dx must be preallocated: with stride > 1 several input sizes give the same output size.
  virtual void conv2d_backward_data(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g, Tensor& dx) = 0;
  /// dw (+)= ..., db (+)= ... (db may be undefined); accumulate adds instead of overwriting.
  virtual void conv2d_backward_weights(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw,
                                       Tensor& db, bool accumulate) = 0;
  /// Conv2D's whole backward pass from its output y and output gradient dy: dz = act'(y)·dy, then
  /// conv2d_backward_weights(x, dz, ...) and, when dx is defined (the input's shape),
  /// conv2d_backward_data(dz, w, g, dx). This default runs those ops one by one; the CPU backend
  /// overrides it to fuse the ReLU backward with rounding dz to 16 bits under a 16-bit compute
  /// dtype (one pass over dz instead of three, bit-identical results).
  virtual void conv2d_backward(const ActivationFn& act, const Tensor& x, const Tensor& y, const Tensor& dy,
                               const Tensor& w, const Conv2DGeometry& g, Tensor& dw, Tensor& db, bool accumulate,
                               Tensor& dx);

  // ---- depthwise convolution (DepthwiseConv2D), NHWC activations, kernels [kh, kw, C, M] ----
  /// Each input channel c is convolved with its own M filters w[:, :, c, :] (a grouped
  /// convolution with C groups): y has C·M channels, channel c·M + m from filter (c, m), as in
  /// Keras. b is [C·M] or undefined. The same output, preallocation and accumulate rules as the
  /// conv2d_* ops above (dx preallocated; dw (+)= and db (+)=, db may be undefined).
  /// @{
  virtual void depthwise_conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                                        const ActivationFn& act, Tensor& y) = 0;
  virtual void depthwise_conv2d_backward_data(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g,
                                              Tensor& dx) = 0;
  virtual void depthwise_conv2d_backward_weights(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw,
                                                 Tensor& db, bool accumulate) = 0;
  /// @}
  /// y[..., C] += b[C] in place: a bias after an op that has none (Conv2DTranspose, whose
  /// forward is conv2d_backward_data).
  virtual void bias_add(Tensor& y, const Tensor& b) = 0;

  // ---- pooling, NHWC ----
  /// workspace: backend-defined state for backward (max pooling argmax); may be resized by the call.
  virtual void pool2d_forward(const Tensor& x, const Pool2DGeometry& g, Tensor& y, Tensor& workspace) = 0;
  /// dx from dy and pool2d_forward's workspace (max: each window's gradient to its argmax).
  virtual void pool2d_backward(const Tensor& dy, const Tensor& x, const Pool2DGeometry& g, const Tensor& workspace,
                               Tensor& dx) = 0;
  /// A max pooling of relu(x), computed as relu(max pooling of x), with the ReLU on the pooled
  /// elements only: max commutes with the ReLU (on the CPU bit for bit, NaN and -0 included; a
  /// backend whose ReLU keeps -0 may differ in a zero's sign). The workspace is pool2d_forward's
  /// for x. The default runs pool2d_forward and relu's activation_forward on y; the CPU applies
  /// the ReLU inside the pooling's loop.
  virtual void pool2d_forward_relu(const Tensor& x, const Pool2DGeometry& g, Tensor& y, Tensor& workspace);
  /// pool2d_forward (relu: pool2d_forward_relu) when no backward pass will follow (predict,
  /// evaluate): y's bits are the same, but nothing is kept for a backward, so a backend may take
  /// a cheaper kernel (the CPU's max pooling skips its argmax). The default calls the training op
  /// with a workspace it drops.
  virtual void pool2d_forward_inference(const Tensor& x, const Pool2DGeometry& g, Tensor& y, bool relu = false);
  /// pool2d_backward followed by relu's activation_backward on its result, for a max pooling
  /// whose input x is the output of a ReLU (y is the pooling's output): dx = relu'(x) * dpool.
  /// Each window sends its gradient to its argmax, whose x equals the window's y, so the ReLU can
  /// mask dy by y > 0 before the pooling's backward instead, on 1/(pool_h*pool_w) of the elements:
  /// the same bits while y holds no NaN (a NaN window's argmax may be a number) and windows do not
  /// overlap (stride >= pool; two finite gradients summed at one input may overflow to Inf, which
  /// the ReLU's backward makes NaN and the early mask 0). This default runs the two ops as stated;
  /// the CPU masks first where that holds. x may also be the ReLU's input, y then from
  /// pool2d_forward_relu: x > 0 is the same mask, and a window whose y is not positive sends its
  /// masked gradient (+0, or NaN for a NaN or Inf dy) to x's argmax rather than to relu(x)'s, the
  /// same bits but for where such a NaN lands.
  /// dx_channel_sums, when not null: the backend may also set it to dx summed over every row, per
  /// channel (float32 [C]; the ReLU's producer's bias gradient), where it can take those sums
  /// cheaper than a pass over dx (the CPU: at the pooled resolution), and leaves it undefined
  /// otherwise; the caller then sums dx itself. This default leaves it undefined.
  virtual void pool2d_backward_through_relu(const Tensor& dy, const Tensor& x, const Tensor& y, const Pool2DGeometry& g,
                                            const Tensor& workspace, Tensor& dx, Tensor* dx_channel_sums = nullptr);

  // ---- elementwise ----
  /// Any activation (activations.hpp): y has x's shape (glu: its axis halved); softmax-like kinds
  /// work along act.axis. The CPU also takes relu and linear on 16-bit activations.
  virtual void activation_forward(const ActivationFn& act, const Tensor& x, Tensor& y) = 0;
  /// dx = dy * act'(x). Needs the forward output y where act.gradient_from_output() (x may then be
  /// undefined), the input x otherwise (y may then be undefined). dx may alias dy.
  virtual void activation_backward(const ActivationFn& act, const Tensor& x, const Tensor& y, const Tensor& dy,
                                   Tensor& dx) = 0;
  /// The same from y alone, for activations with act.gradient_from_output().
  void activation_backward(const ActivationFn& act, const Tensor& y, const Tensor& dy, Tensor& dx) {
    activation_backward(act, Tensor(), y, dy, dx);
  }
  virtual void add(const std::vector<Tensor>& xs, Tensor& y) = 0;  ///< y = sum of xs, same shapes
  virtual void add_inplace(Tensor& y, const Tensor& x) = 0;        ///< y += x
  virtual void scale(Tensor& x, float factor) = 0;                 ///< x *= factor
  virtual void copy(const Tensor& src, Tensor& dst) = 0;           ///< same numel, any shapes
  /// Concatenate along `axis` (last axes allowed, negative counts from the end) and its inverse.
  virtual void concat(const std::vector<Tensor>& xs, int axis, Tensor& y) = 0;
  virtual void split(const Tensor& y, int axis, std::vector<Tensor>& xs) = 0;  ///< xs preallocated
  /// Keras 3's bilinear resize along one axis by an integer factor (UpSampling2D(bilinear)): half
  /// pixel centres, edges clamped. y: x's shape with dim(axis) * times (allocated if undefined);
  /// the backward writes (overwrites) dx of x's shape from dy.
  virtual void upsample_linear(const Tensor& x, int axis, std::int64_t times, Tensor& y) = 0;
  /// upsample_linear's backward: dx (x's shape, overwritten) from dy.
  virtual void upsample_linear_backward(const Tensor& dy, int axis, std::int64_t times, Tensor& dx) = 0;
  /// Inverted dropout: mask = bernoulli(1-rate)/(1-rate) drawn from `seed`; y = x * mask.
  virtual void dropout_forward(const Tensor& x, float rate, std::uint64_t seed, Tensor& y, Tensor& mask) = 0;
  virtual void multiply(const Tensor& a, const Tensor& b, Tensor& y) = 0;  ///< elementwise, same shapes
  /// Per-example weights, in place: x viewed as [N, numel/N] with N = w.numel() (w float32 [N]);
  /// row n is multiplied by w[n] (Keras' sample_weight applied to per-example losses and their
  /// gradients). N must divide x.numel().
  virtual void scale_rows(Tensor& x, const Tensor& w) = 0;
  /// Rows scaled to unit L2 norm (Dot(normalize=True); Keras' ops.normalize(order=2)): x [R, K],
  /// y[r] = x[r]·inv[r] with inv[r] = min(1/√Σ_k x[r,k]², 1/ε), ε = 1e-7, so a zero row stays zero.
  /// y [R, K] and inv [R] are outputs (inv is kept for the backward).
  virtual void l2_normalize_rows(const Tensor& x, Tensor& y, Tensor& inv) = 0;
  /// dx = inv·(dy − y·Σ_k dy·y) per row, from the forward's y and inv; inv·dy where the factor was
  /// clamped to 1/ε (a constant there).
  virtual void l2_normalize_rows_backward(const Tensor& y, const Tensor& dy, const Tensor& inv, Tensor& dx) = 0;

  // ---- batch normalization over the last axis (x viewed as [M, C]) ----
  /// Fused path (per-replica statistics): batch mean and biased variance out, y normalised.
  virtual void batchnorm_forward_training(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                                          Tensor& y, Tensor& mean, Tensor& var) = 0;
  /// Given statistics (inference with moving stats, or synchronized stats).
  virtual void batchnorm_forward_inference(const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                                           const Tensor& var, float eps, Tensor& y) = 0;
  /// dx and the parameter gradients dgamma, dbeta (undefined: not wanted) from per-replica statistics.
  virtual void batchnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                  const Tensor& var, float eps, Tensor& dx, Tensor& dgamma, Tensor& dbeta) = 0;
  /// moving = moving·momentum + value·(1 − momentum), in place (Keras' assign_moving_average).
  virtual void moving_average_update(Tensor& moving, const Tensor& value, float momentum) = 0;

  // ---- moments: Keras ops.moments over every axis but the last (x viewed as [M, C]) ----
  /// mean[C] and biased variance var[C] of each channel; M > 0.
  virtual void moments(const Tensor& x, Tensor& mean, Tensor& var) = 0;
  /// The synchronized form (Keras ops.moments(..., synchronized=True)) is three calls on every
  /// replica: pack_moments, CrossReplica::all_reduce_sum of `packed`, synchronized_moments.
  /// `packed` holds num_replicas slots of (count, mean[C], var[C]) (moments_packed_size floats);
  /// pack_moments writes this replica's moments of `count` rows into slot `replica` and zeros
  /// elsewhere, so the all-reduced sum holds every replica's slot unchanged (adding zeros is
  /// exact): an all-gather. A replica with no rows contributes an all-zero packed tensor.
  virtual void pack_moments(const Tensor& mean, const Tensor& var, std::int64_t count, int replica, int num_replicas,
                            Tensor& packed) = 0;
  /// The union's mean and biased variance from the all-reduced `packed`, combined in double in
  /// replica order as Σnᵣ(vᵣ + (μᵣ − μ)²)/N, not from Σx and Σx² (which cancel when |mean| >> std).
  /// The same bits on every replica. No rows on any replica: zeros.
  virtual void synchronized_moments(const Tensor& packed, int num_replicas, Tensor& mean, Tensor& var) = 0;
  /// The example-weighted average of the replicas' means and of their variances (Σnᵣμᵣ/N,
  /// Σnᵣvᵣ/N, in float, replica order): what unsynchronized BN's moving statistics follow.
  virtual void average_moments(const Tensor& packed, int num_replicas, Tensor& mean, Tensor& var) = 0;

  // ---- synchronized batch norm backward: local sums, all-reduce, apply ----
  /// sums[batchnorm_grad_sums_size(C)] = (Σdy [C], Σdy·(x − mean) [C], M) for one all-reduce,
  /// and this replica's parameter gradients dgamma = Σdy·(x − mean)/√(var + eps), dbeta = Σdy
  /// (the strategy all-reduces those with every other gradient). dgamma/dbeta may be undefined
  /// (not wanted). A replica with no rows contributes an all-zero `sums`.
  virtual void batchnorm_backward_reduce(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& var,
                                         float eps, Tensor& sums, Tensor& dgamma, Tensor& dbeta) = 0;
  /// dx = γ·inv·(dy − Σdy/N − (x−mean)·inv²·Σdy(x−mean)/N), inv = 1/√(var+eps), with the
  /// all-reduced `sums` (N, their last element, the global row count: > 0).
  virtual void batchnorm_backward_apply(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                        const Tensor& var, float eps, const Tensor& sums, Tensor& dx) = 0;
  // ---- layer normalization (LayerNormalization): each row of x [M, C] over its own C ----
  /// y = (x − mean)·rstd·gamma + beta with the row's mean[M] and rstd[M] = 1/√(biased var + eps)
  /// (outputs, kept for the backward). gamma/beta [C] may be undefined: scale 1, shift 0
  /// (Keras' scale=False / center=False). Row statistics are summed in double.
  virtual void layer_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                  Tensor& mean, Tensor& rstd) = 0;
  /// dx from dy with the forward's mean/rstd; dgamma = Σ_rows dy·x̂ and dbeta = Σ_rows dy [C].
  /// gamma undefined: scale 1. An undefined dgamma/dbeta means "not wanted" and is skipped.
  virtual void layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                   const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) = 0;

  // ---- softmax over any one axis (the Softmax layer); the last axis is activation_forward's ----
  /// y = exp(x − max) / Σ exp(x − max) along `axis` (negative counts from the end), y allocated
  /// like any output. Backward from y: dx = y ⊙ (dy − Σ_axis dy ⊙ y).
  virtual void softmax_axis_forward(const Tensor& x, int axis, Tensor& y) = 0;
  /// softmax_axis_forward's backward from its output y: dx = y ⊙ (dy − Σ_axis dy ⊙ y).
  virtual void softmax_axis_backward(const Tensor& y, const Tensor& dy, int axis, Tensor& dx) = 0;

  // ---- embedding lookup (Embedding): rows of a float32 table [V, D] picked by integer ids ----
  /// ids of any shape: int32, int64, uint8, or float32 holding integers (rounded to nearest).
  /// out [ids..., D] = table[ids] (allocated like any output). An id outside [0, V) is a
  /// ValueError naming the id, its position and V. mask: undefined = not wanted; otherwise it
  /// becomes uint8 [ids...] = (id != 0), Keras' mask_zero.
  virtual void gather_rows(const Tensor& table, const Tensor& ids, Tensor& out, Tensor& mask) = 0;
  /// dtable [V, D] (defined, preallocated) = Σ over positions p of dy[p, :] added into row ids[p]
  /// (+= the old values when `accumulate`); positions in index order, so the sums are
  /// deterministic. dy is [ids..., D]. Ids are checked as in gather_rows.
  virtual void scatter_add_rows(const Tensor& ids, const Tensor& dy, Tensor& dtable, bool accumulate) = 0;
  /// The row gradient of a [rows, D] table without the table (TensorFlow's IndexedSlices, deduplicated):
  /// unique_ids int64 [u] = the distinct ids, ascending; sums [u, D] = Σ dy[p] over the positions p
  /// holding that id, in position order (the same bits scatter_add_rows gives that row from zero).
  /// Both outputs are (re)allocated. ids and dy as in scatter_add_rows, ids checked against `rows`.
  virtual void unique_row_sums(const Tensor& ids, const Tensor& dy, std::int64_t rows, Tensor& unique_ids,
                               Tensor& sums) = 0;

  // ---- Masking's mask and the noise layers' draws ----
  /// Keras' Masking mask: mask (uint8 of x's shape without its last axis; allocated like any
  /// output) = 1 where any element of x's last axis differs from `value` (NaN differs), else 0.
  virtual void mask_not_equal(const Tensor& x, float value, Tensor& mask) = 0;
  /// y (defined: the caller allocates it with the shape wanted) = mean + stddev·z, z standard
  /// normal draws from `seed` (element i's depends only on seed and i: GaussianNoise, GaussianDropout).
  virtual void random_normal(std::uint64_t seed, float mean, float stddev, Tensor& y) = 0;

 protected:
  /// The dtype set by set_compute_dtype.
  DType compute_dtype_ = DType::float32;
};

/// Floats in pack_moments' packed tensor: num_replicas slots of (count, mean[C], var[C]).
inline std::int64_t moments_packed_size(std::int64_t channels, int num_replicas) {
  return static_cast<std::int64_t>(num_replicas) * (2 * channels + 1);
}
/// Floats in batchnorm_backward_reduce's sums: Σdy[C], Σdy·(x − mean)[C], row count.
inline std::int64_t batchnorm_grad_sums_size(std::int64_t channels) { return 2 * channels + 1; }

/// A oneDNN-backed CPU backend using `threads` OpenMP threads for calls from the calling thread.
std::unique_ptr<Backend> make_cpu_backend(int threads);

}  // namespace kerascpp
