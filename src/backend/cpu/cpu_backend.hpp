// The oneDNN CPU backend. One instance per replica; ops are split by family over the .cpp
// files of this directory. Outputs that are undefined are allocated with the result's shape;
// defined outputs must already have it (callers preallocate to avoid per-step allocations).
// Exceptions: an undefined loss `grad` or batchnorm dgamma/dbeta means "not wanted" and is
// skipped; conv2d_backward_data needs dx preallocated (strides make the input size ambiguous).
#pragma once
#include <cstddef>
#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

#include "backend/cpu/primitive_cache.hpp"
#include "backend/softmax_axis_view.hpp"
#include "kerascpp/backend/backend.hpp"

namespace kerascpp::cpu {

// A growable, 64-byte aligned byte buffer kept between calls.
class ScratchBuffer {
 public:
  void* bytes(std::size_t n) {
    if (!buf_.defined() || buf_.nbytes() < n)
      buf_ = Tensor({static_cast<std::int64_t>(n == 0 ? 1 : n)}, DType::uint8, Device{});
    return buf_.raw();
  }
  float* floats(std::int64_t n) { return static_cast<float*>(bytes(static_cast<std::size_t>(n) * sizeof(float))); }

 private:
  Tensor buf_;
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads);

  Device device() const override { return Device{}; }
  std::string name() const override;
  void set_num_threads(int threads) override;
  int num_threads() const override { return threads_; }

  void dense_forward(const Tensor& x, const Tensor& w, const Tensor& b, const ActivationFn& act, Tensor& y) override;
  void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
              bool accumulate) override;
  void batched_matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
                      bool accumulate) override;
  void transpose(const Tensor& x, const std::vector<int>& perm, Tensor& y) override;
  void masked_fill(Tensor& x, const Tensor& mask, float value) override;
  void mask_and(const Tensor& a, const Tensor& b, Tensor& out) override;
  void mask_not_equal(const Tensor& x, float value, Tensor& mask) override;
  void upsample_linear(const Tensor& x, int axis, std::int64_t times, Tensor& y) override;
  void upsample_linear_backward(const Tensor& dy, int axis, std::int64_t times, Tensor& dx) override;
  void attention_mask(const Tensor& query_mask, const Tensor& value_mask, const Tensor& explicit_mask, bool causal,
                      Tensor& out) override;
  void sum_to_last_axis(const Tensor& x, Tensor& out, bool accumulate) override;

  void conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                      const ActivationFn& act, Tensor& y) override;
  void conv2d_backward_data(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g, Tensor& dx) override;
  void conv2d_backward_weights(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw, Tensor& db,
                               bool accumulate) override;
  void conv2d_backward(const ActivationFn& act, const Tensor& x, const Tensor& y, const Tensor& dy, const Tensor& w,
                       const Conv2DGeometry& g, Tensor& dw, Tensor& db, bool accumulate, Tensor& dx) override;
  void depthwise_conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                                const ActivationFn& act, Tensor& y) override;
  void depthwise_conv2d_backward_data(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g, Tensor& dx) override;
  void depthwise_conv2d_backward_weights(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw,
                                         Tensor& db, bool accumulate) override;
  void bias_add(Tensor& y, const Tensor& b) override;

  void pool2d_forward(const Tensor& x, const Pool2DGeometry& g, Tensor& y, Tensor& workspace) override;
  void pool2d_forward_relu(const Tensor& x, const Pool2DGeometry& g, Tensor& y, Tensor& workspace) override;
  void pool2d_forward_inference(const Tensor& x, const Pool2DGeometry& g, Tensor& y, bool relu) override;
  void pool2d_backward(const Tensor& dy, const Tensor& x, const Pool2DGeometry& g, const Tensor& workspace,
                       Tensor& dx) override;
  void pool2d_backward_through_relu(const Tensor& dy, const Tensor& x, const Tensor& y, const Pool2DGeometry& g,
                                    const Tensor& workspace, Tensor& dx, Tensor* dx_channel_sums) override;

  void activation_forward(const ActivationFn& act, const Tensor& x, Tensor& y) override;
  void activation_backward(const ActivationFn& act, const Tensor& x, const Tensor& y, const Tensor& dy,
                           Tensor& dx) override;
  using Backend::activation_backward;
  void add(const std::vector<Tensor>& xs, Tensor& y) override;
  void add_inplace(Tensor& y, const Tensor& x) override;
  void scale(Tensor& x, float factor) override;
  void copy(const Tensor& src, Tensor& dst) override;
  void concat(const std::vector<Tensor>& xs, int axis, Tensor& y) override;
  void split(const Tensor& y, int axis, std::vector<Tensor>& xs) override;
  void dropout_forward(const Tensor& x, float rate, std::uint64_t seed, Tensor& y, Tensor& mask) override;
  void random_normal(std::uint64_t seed, float mean, float stddev, Tensor& y) override;
  void multiply(const Tensor& a, const Tensor& b, Tensor& y) override;
  void scale_rows(Tensor& x, const Tensor& w) override;
  void l2_normalize_rows(const Tensor& x, Tensor& y, Tensor& inv) override;
  void l2_normalize_rows_backward(const Tensor& y, const Tensor& dy, const Tensor& inv, Tensor& dx) override;

  void batchnorm_forward_training(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                  Tensor& mean, Tensor& var) override;
  void batchnorm_forward_inference(const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                                   const Tensor& var, float eps, Tensor& y) override;
  void batchnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean, const Tensor& var,
                          float eps, Tensor& dx, Tensor& dgamma, Tensor& dbeta) override;
  void moving_average_update(Tensor& moving, const Tensor& value, float momentum) override;
  void moments(const Tensor& x, Tensor& mean, Tensor& var) override;
  void pack_moments(const Tensor& mean, const Tensor& var, std::int64_t count, int replica, int num_replicas,
                    Tensor& packed) override;
  void synchronized_moments(const Tensor& packed, int num_replicas, Tensor& mean, Tensor& var) override;
  void average_moments(const Tensor& packed, int num_replicas, Tensor& mean, Tensor& var) override;
  void batchnorm_backward_reduce(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& var, float eps,
                                 Tensor& sums, Tensor& dgamma, Tensor& dbeta) override;
  void batchnorm_backward_apply(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                const Tensor& var, float eps, const Tensor& sums, Tensor& dx) override;

  void sparse_categorical_crossentropy(const Tensor& pred, const Tensor& labels, bool from_logits, Tensor& loss,
                                       Tensor& grad, float grad_scale) override;
  void categorical_crossentropy(const Tensor& pred, const Tensor& target, bool from_logits, Tensor& loss, Tensor& grad,
                                float grad_scale) override;
  void binary_crossentropy(const Tensor& pred, const Tensor& target, bool from_logits, Tensor& loss, Tensor& grad,
                           float grad_scale) override;
  void row_loss(RowLoss kind, const RowLossParams& params, const Tensor& pred, const Tensor& target, Tensor& loss,
                Tensor& grad, float grad_scale) override;
  void huber(const Tensor& pred, const Tensor& target, float delta, Tensor& loss, Tensor& grad,
             float grad_scale) override;
  void mean_squared_error(const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                          float grad_scale) override;

  double sparse_categorical_accuracy_sum(const Tensor& pred, const Tensor& labels) override;
  double sparse_top_k_accuracy_sum(const Tensor& pred, const Tensor& labels, int k) override;
  double categorical_accuracy_sum(const Tensor& pred, const Tensor& target) override;
  double binary_accuracy_sum(const Tensor& pred, const Tensor& target, float threshold) override;
  double absolute_error_sum(const Tensor& pred, const Tensor& target) override;
  double sum(const Tensor& x) override;
  std::vector<double> confusion_counts(const Tensor& pred, const Tensor& target, const std::vector<float>& thresholds,
                                       std::int64_t stride, std::int64_t offset) override;
  std::vector<double> even_confusion_counts(const Tensor& pred, const Tensor& target, int num_thresholds) override;

  void sgd_update(Tensor& w, const Tensor& g, Tensor& velocity, float lr, float momentum, bool nesterov) override;
  void adam_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v, float lr_t, float beta_1, float beta_2,
                   float eps) override;
  void rmsprop_update(Tensor& w, const Tensor& g, Tensor& v, float lr, float rho, float eps) override;
  void weight_decay_update(Tensor& w, float lr, float weight_decay) override;
  void optimizer_update(const UpdateParams& params, Tensor& w, const Tensor& g,
                        const std::vector<Tensor*>& slots) override;
  void adagrad_update(Tensor& w, const Tensor& g, Tensor& accumulator, float lr, float eps) override;
  void nadam_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v, float lr, float beta_1, float beta_2, float eps,
                    float u, float u_next, float u_product, float beta_2_power) override;
  double sum_squares(const Tensor& x) override;
  bool all_finite(const std::vector<Tensor>& xs) override;
  double weight_penalty(const Tensor& w, float l1, float l2, Tensor& grad, float grad_scale) override;
  void max_norm(Tensor& w, std::int64_t rows, float max_value) override;

  void layer_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y, Tensor& mean,
                          Tensor& rstd) override;
  void layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                           const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) override;

  void softmax_axis_forward(const Tensor& x, int axis, Tensor& y) override;
  void softmax_axis_backward(const Tensor& y, const Tensor& dy, int axis, Tensor& dx) override;

  void gather_rows(const Tensor& table, const Tensor& ids, Tensor& out, Tensor& mask) override;
  void scatter_add_rows(const Tensor& ids, const Tensor& dy, Tensor& dtable, bool accumulate) override;
  void unique_row_sums(const Tensor& ids, const Tensor& dy, std::int64_t rows, Tensor& unique_ids,
                       Tensor& sums) override;

  std::string compute_path(DType dtype) override;
  bool low_precision_activations(DType dtype) override;
  void cast(const Tensor& x, DType dtype, Tensor& y) override;

  std::size_t cached_primitives() const { return cache_.size(); }  // for tests
  // Float32 matmuls (dense_forward, matmul) of at least kSgemmMacs multiply-adds (1024³) run on
  // oneDNN's sgemm rather than its matmul primitive. Timed call for call on the Intel VM
  // (bench/blas_compare, columns "oneDNN" and "matmul"): sgemm 3-9% ahead at 1024³, up to 12% on
  // the large MLP's 2048-wide layers, level on the Fashion-MNIST MLP's GEMMs (0.4 GMACs), which
  // keep the primitive and its fused bias. Tests lower the threshold to reach that path.
  static constexpr std::int64_t kSgemmMacs = std::int64_t{1} << 30;
  void set_sgemm_threshold(std::int64_t macs) { sgemm_macs_ = macs; }

 private:
  // Every op starts here: OpenMP's thread count is per calling thread, so each replica's
  // thread gets this backend's budget for both oneDNN and the hand-written loops.
  void enter() const;
  // Narrows the op's OpenMP threads to one when its work is below the serial threshold (MACs
  // for matmuls, elements for memory-bound ops): forking and joining the team then costs more
  // than it saves, and far more when another process holds the other core (the Transformer's
  // small per-head matmuls ran 2x faster single-threaded beside a busy neighbour). Called after
  // the shapes are checked and before a primitive is made, so a shape always gets the same
  // thread count: results stay bit-identical run to run.
  void fit_threads(std::int64_t work, std::int64_t serial_below) const;
  static constexpr std::int64_t kSerialMacs = std::int64_t{1} << 20;
  static constexpr std::int64_t kSerialElements = std::int64_t{1} << 16;
  // A primitive with the arguments `args` (descriptors queried from pd) plus the scratchpad.
  CachedPrimitive make_primitive(const dnnl::primitive_desc_base& pd, std::initializer_list<int> args) const;
  dnnl::primitive_attr base_attr() const;  // user-managed scratchpad
  void run(CachedPrimitive& p);
  // Softmax over the last axis of a contiguous [rows, classes] array (y may alias x); a row
  // holding NaN or +Inf gives NaN, as in Keras.
  void softmax_rows(const float* x, float* y, std::int64_t rows, std::int64_t classes);
  // pool2d_forward, and pool2d_forward_relu (relu: y = relu(pool(x)); max_pool_disjoint's loop
  // applies it a row at a time in cache, oneDNN's path in a pass over y). workspace null: for
  // inference (max_pool_disjoint without its argmax, oneDNN's forward_inference kernels).
  void pool2d_forward(const Tensor& x, const Pool2DGeometry& g, Tensor& y, Tensor* workspace, bool relu,
                      const char* op);
  // pool2d_backward, and pool2d_backward_through_relu where max_pool_disjoint takes the pooling:
  // relu_y (that ReLU's output, pooled; only where max_pool_disjoint_applies) folds the ReLU's
  // backward into the pooling's loop, and channel_sums (float32) then takes dx's per-channel sums
  // at the pooled resolution (max_pool_disjoint_backward).
  void pool2d_backward(const Tensor& dy, const Tensor& x, const Pool2DGeometry& g, const Tensor& workspace, Tensor& dx,
                       const Tensor* relu_y, const char* op, Tensor* channel_sums = nullptr);
  // The part of `act` that Dense and Conv2D do not fuse into their primitive, in place on
  // y[rows, cols]: relu (oneDNN's post-op turns NaN into 0), the axis-wise ones (over cols) and
  // those oneDNN has no eltwise algorithm for.
  void unfused_activation(const ActivationFn& act, float* y, std::int64_t rows, std::int64_t cols);
  // The same on a float32 or 16-bit y[rows, cols] (16 bits: relu, or nothing for linear and the
  // fused activations; softmax has no 16-bit output).
  void unfused_activation(const ActivationFn& act, Tensor& y, std::int64_t rows, std::int64_t cols, const char* op);
  // Elementwise activations by activation_formulas.hpp (y may alias x; dx may alias dy; v is y
  // where act.gradient_from_output(), x otherwise).
  void eltwise_by_formula(const ActivationFn& act, const float* x, float* y, std::int64_t n);
  void eltwise_backward_by_formula(const ActivationFn& act, const float* v, const float* dy, float* dx, std::int64_t n);
  // softmax, log_softmax, glu and sparsemax along act.axis (activation_axis.cpp).
  void activation_along_axis(const ActivationFn& act, const Tensor& x, Tensor& y);
  void activation_backward_along_axis(const ActivationFn& act, const Tensor& x, const Tensor& y, const Tensor& dy,
                                      Tensor& dx);
  // Over the fibres of an [outer, classes, inner] view (y may alias x).
  void log_softmax_fibres(const float* x, float* y, const op_shapes::SoftmaxAxisView& v);
  void sparsemax_fibres(const float* x, float* y, const op_shapes::SoftmaxAxisView& v);
  // The operands of a matmul or convolution as compute_dtype() wants them (low_precision.cpp):
  // float32: the tensors themselves; bfloat16/float16 with native kernels: 16-bit copies (dt
  // says which), else float32 copies rounded to 16 bits, computed with the float32 kernels.
  // Each of the two operands has its own buffer, valid until the next call.
  struct ComputeOperands {
    const void* a;
    const void* b;
    dnnl::memory::data_type dt;
  };
  ComputeOperands compute_operands(const Tensor& a, const Tensor& b);
  // One operand as compute_operands makes it, into `buffer`, and the data type both have.
  const void* compute_operand(const Tensor& t, ScratchBuffer& buffer);
  dnnl::memory::data_type compute_data_type();
  // Whether oneDNN has a real (not reference) kernel for `dtype` on this processor; probed once.
  bool native_compute(DType dtype);
  // An activation (input, output or their gradient) of an op that low_precision_activations
  // covers: float32, or the compute dtype when activations may travel in it.
  void require_activation(const Tensor& t, const char* op, const char* arg);
  // Such an activation as an output: allocated as `dtype` `shape` when undefined.
  void prepare_activation(Tensor& t, const Shape& shape, DType dtype, const char* op, const char* arg);
  // The conv2d_* ops and, with `depthwise`, the depthwise_conv2d_* ops (C groups).
  void conv_forward_impl(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                         const ActivationFn& act, Tensor& y, bool depthwise);
  // `dy_low`: dy already in the (native) 16-bit compute dtype (conv2d_backward's fused pass);
  // dy is then read for its shape only.
  void conv_backward_data_impl(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g, Tensor& dx, bool depthwise,
                               const std::uint16_t* dy_low = nullptr);
  // out[c] (+)= Σ_r x[r, c] over x[rows, C] (float32 or 16 bits, summed in double), in the fixed
  // order of chunked_row_sums: sum_to_last_axis, and the float32 convolutions' bias gradient.
  void row_sums(const void* x, DType dtype, std::int64_t rows, std::int64_t C, float* out, bool accumulate);
  void conv_backward_weights_impl(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw, Tensor* db,
                                  bool accumulate, bool depthwise, const std::uint16_t* dy_low = nullptr);
  // conv_backward_weights_impl over the minibatch in chunks of `images`, added in double.
  void conv_backward_weights_chunked(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw, Tensor* db,
                                     bool accumulate, std::int64_t images);

  int threads_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  PrimitiveCache cache_;
  ScratchBuffer scratchpad_;  // oneDNN's user scratchpad, shared by all primitives
  ScratchBuffer channel_a_;   // per-channel temporaries (bias diffs, unit scale/shift, ...)
  ScratchBuffer channel_b_;
  ScratchBuffer operand_a_;  // compute_operands' copies
  ScratchBuffer operand_b_;
  ScratchBuffer fused_dz_;                  // conv2d_backward's 16-bit dz, read by both of its convolutions
  int native_bf16_ = -1, native_f16_ = -1;  // native_compute's probes: -1 not yet, 0 no, 1 yes
  int native_bf16_activations_ = -1, native_f16_activations_ = -1;  // low_precision_activations' probes
  std::string native_bf16_kernel_, native_f16_kernel_;
  std::int64_t sgemm_macs_ = kSgemmMacs;
  std::vector<double> partials_;  // chunk partials of fixed-order reductions
  std::vector<double> sums_;
  std::vector<std::int64_t> nan_rows_;  // softmax rows that must come out NaN
};

}  // namespace kerascpp::cpu
