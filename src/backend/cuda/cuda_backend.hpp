// The CUDA backend: one instance per GPU replica, all work queued on the replica's own stream.
// One file per op family, named as in src/backend/cpu/ (dense.cpp, conv.cpp, pooling.cpp, ...):
// the cuBLAS/cuBLASLt and cuDNN ops keep their state in dnn_state.hpp; the hand-written kernels
// (elementwise, losses, metrics, optimizer updates) live in kernels/*.cu, called from the op
// files (state in kernel_state.hpp).
// Same contract as the CPU backend: undefined outputs are allocated on this GPU with the
// result's shape, defined ones must have it; inputs must be float32 tensors on this GPU.
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/cuda/conv_algo_key.hpp"
#include "kerascpp/backend/backend.hpp"

namespace kerascpp::op_shapes {
struct ConvShape;
}

namespace kerascpp::cuda {

struct DnnState;  // cuBLAS/cuDNN handles, descriptor and algorithm caches, workspace
class PhaseTimeline;
struct KernelState;  // scratch for reductions, pinned result buffer, error flags

// How many recordings CudaBackend::record has made in this process (for tests).
std::size_t recordings_made();
// How many convolution passes KERASCPP_GPU_CONV=timed has timed on `device` in this process.
std::size_t timed_conv_choices(int device);

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device);
  ~CudaBackend() override;

  Device device() const override { return Device{Device::Kind::gpu, device_}; }
  std::string name() const override;
  void mark_phase(const char* phase) override;
  std::unique_ptr<RecordedWork> record(const std::function<void()>& body) override;  // recorded_work.cpp
  std::string compute_path(DType dtype) override;
  void cast(const Tensor& x, DType dtype, Tensor& y) override;
  void set_num_threads(int) override {}  // GPU work is not split over host threads
  int num_threads() const override { return 1; }
  cudaStream_t stream() const { return stream_; }
  int device_index() const { return device_; }
  void synchronize() const;  // waits for all work queued on this backend's stream

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
  void depthwise_conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                                const ActivationFn& act, Tensor& y) override;
  void depthwise_conv2d_backward_data(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g, Tensor& dx) override;
  void depthwise_conv2d_backward_weights(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw,
                                         Tensor& db, bool accumulate) override;
  void bias_add(Tensor& y, const Tensor& b) override;

  void pool2d_forward(const Tensor& x, const Pool2DGeometry& g, Tensor& y, Tensor& workspace) override;
  void pool2d_backward(const Tensor& dy, const Tensor& x, const Pool2DGeometry& g, const Tensor& workspace,
                       Tensor& dx) override;

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
  std::function<double()> weight_penalties(const std::vector<PenaltyTerm>& terms, float grad_scale) override;
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

 private:
  // Batch norm's normalisation with given statistics on kerascpp's kernel (batchnorm_cudnn.cpp).
  void normalize(const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& mean, const Tensor& var,
                 float eps, Tensor& y);
  // The route a convolution pass takes (conv_route.cpp): the engine KERASCPP_GPU_CONV picks, or
  // under `timed` the fastest route measured for the pass.
  ConvRoute conv_route(const op_shapes::ConvShape& s, const Conv2DGeometry& g, bool depthwise, ConvDirection dir) const;
  // KERASCPP_GPU_CONV=timed: whether this pass's shape has not been timed on its routes yet, and
  // the timing, which runs `pass` (the op into scratch outputs) on each (conv_route.cpp).
  bool conv_needs_timing(const op_shapes::ConvShape& s, const Conv2DGeometry& g, bool depthwise,
                         ConvDirection dir) const;
  void time_conv_engines(const op_shapes::ConvShape& s, const Conv2DGeometry& g, ConvDirection dir,
                         const std::function<void()>& pass);
  // Convolutions as matrix products on cuBLAS (conv_gemm.cpp): whether the patch matrix fits
  // (int rows, the workspace limit), and the three passes (arguments checked by the conv2d_* op).
  bool gemm_conv_fits(const op_shapes::ConvShape& s, const Conv2DGeometry& g) const;
  void gemm_conv_forward(const Tensor& x, const Tensor& w, const Tensor& b, const op_shapes::ConvShape& s,
                         const Conv2DGeometry& g, const ActivationFn& act, Tensor& y);
  void gemm_conv_backward_data(const Tensor& dy, const Tensor& w, const op_shapes::ConvShape& s,
                               const Conv2DGeometry& g, Tensor& dx);
  void gemm_conv_backward_weights(const Tensor& x, const Tensor& dy, const op_shapes::ConvShape& s,
                                  const Conv2DGeometry& g, Tensor& dw, bool accumulate);
  // Convolutions on cuDNN over NCHW copies (conv_nchw.cpp): whether the route takes the pass
  // (float32 compute, symmetric padding), and the three passes.
  bool nchw_conv_fits(const op_shapes::ConvShape& s, const Conv2DGeometry& g) const;
  void nchw_conv_forward(const Tensor& x, const Tensor& w, const Tensor& b, const op_shapes::ConvShape& s,
                         const Conv2DGeometry& g, const ActivationFn& act, Tensor& y);
  void nchw_conv_backward_data(const Tensor& dy, const Tensor& w, const op_shapes::ConvShape& s,
                               const Conv2DGeometry& g, Tensor& dx);
  void nchw_conv_backward_weights(const Tensor& x, const Tensor& dy, const op_shapes::ConvShape& s,
                                  const Conv2DGeometry& g, Tensor& dw, bool accumulate);
  // The conv2d_* ops and, with `depthwise`, the depthwise_conv2d_* ops (C groups); conv.cpp.
  void conv_forward_impl(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                         const ActivationFn& act, Tensor& y, bool depthwise);
  void conv_backward_data_impl(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g, Tensor& dx, bool depthwise);
  void conv_backward_weights_impl(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw, Tensor& db,
                                  bool accumulate, bool depthwise);

  int device_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<DnnState> dnn_;
  std::unique_ptr<KernelState> kernels_;
  PhaseTimeline* phases_ = nullptr;  // KERASCPP_GPU_PHASES=1 only
  // While time_conv_engines runs a pass: the route it times.
  std::optional<ConvRoute> timing_route_;
};

}  // namespace kerascpp::cuda
