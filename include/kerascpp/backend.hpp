// Backend: every numeric primitive a layer, loss, metric or optimizer needs, for one device.
// Layers call only these, so the same layer code runs on the CPU (oneDNN) and CUDA backends.
// One Backend instance serves one replica: it is used from one thread at a time and may
// cache primitives keyed by shape. All tensors are dense, row-major (NHWC for images).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kerascpp/tensor.hpp"

namespace kerascpp {

enum class ActivationKind : std::uint8_t { linear, relu, sigmoid, tanh, softmax };
// "relu", "sigmoid", "tanh", "softmax", "linear" or "" (= linear). `where` names the layer for errors.
ActivationKind activation_from_name(const std::string& name, const std::string& where);
const char* activation_name(ActivationKind act);

struct Conv2DGeometry {
  std::int64_t kernel_h = 1, kernel_w = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};

enum class PoolKind : std::uint8_t { max, average };
struct Pool2DGeometry {
  PoolKind kind = PoolKind::max;
  std::int64_t pool_h = 2, pool_w = 2;
  std::int64_t stride_h = 2, stride_w = 2;
  std::int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;  // average excludes padding
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual std::string name() const = 0;  // "cpu (oneDNN 2.6.3, 2 threads)"
  // Threads this backend may use for calls made from the calling thread.
  virtual void set_num_threads(int threads) = 0;
  virtual int num_threads() const = 0;

  // ---- dense algebra ----
  // y[N,out] = act(x[N,in] · w[in,out] + b[out]); b may be undefined (no bias).
  virtual void dense_forward(const Tensor& x, const Tensor& w, const Tensor& b, ActivationKind act, Tensor& y) = 0;
  // c[M,N] = op(a) · op(b), op = transpose when the flag is set; adds into c when accumulate.
  virtual void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
                      bool accumulate) = 0;
  // out[C] (+)= sum over all leading axes of x[..., C]  (bias gradients).
  virtual void sum_to_last_axis(const Tensor& x, Tensor& out, bool accumulate) = 0;

  // ---- convolution, NHWC activations, HWIO kernels ----
  virtual void conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                              ActivationKind act, Tensor& y) = 0;
  // dx must be preallocated: with stride > 1 several input sizes give the same output size.
  virtual void conv2d_backward_data(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g, Tensor& dx) = 0;
  // dw (+)= ..., db (+)= ... (db may be undefined); accumulate adds instead of overwriting.
  virtual void conv2d_backward_weights(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw,
                                       Tensor& db, bool accumulate) = 0;

  // ---- pooling, NHWC ----
  // workspace: backend-defined state for backward (max pooling argmax); may be resized by the call.
  virtual void pool2d_forward(const Tensor& x, const Pool2DGeometry& g, Tensor& y, Tensor& workspace) = 0;
  virtual void pool2d_backward(const Tensor& dy, const Tensor& x, const Pool2DGeometry& g,
                               const Tensor& workspace, Tensor& dx) = 0;

  // ---- elementwise ----
  virtual void activation_forward(ActivationKind act, const Tensor& x, Tensor& y) = 0;  // softmax: last axis
  // dx = dy * act'(.) computed from the forward output y (x and dx may alias dy).
  virtual void activation_backward(ActivationKind act, const Tensor& y, const Tensor& dy, Tensor& dx) = 0;
  virtual void add(const std::vector<Tensor>& xs, Tensor& y) = 0;        // y = sum of xs, same shapes
  virtual void add_inplace(Tensor& y, const Tensor& x) = 0;              // y += x
  virtual void scale(Tensor& x, float factor) = 0;                       // x *= factor
  virtual void copy(const Tensor& src, Tensor& dst) = 0;                  // same numel, any shapes
  // Concatenate along `axis` (last axes allowed, negative counts from the end) and its inverse.
  virtual void concat(const std::vector<Tensor>& xs, int axis, Tensor& y) = 0;
  virtual void split(const Tensor& y, int axis, std::vector<Tensor>& xs) = 0;  // xs preallocated
  // Inverted dropout: mask = bernoulli(1-rate)/(1-rate) drawn from `seed`; y = x * mask.
  virtual void dropout_forward(const Tensor& x, float rate, std::uint64_t seed, Tensor& y, Tensor& mask) = 0;
  virtual void multiply(const Tensor& a, const Tensor& b, Tensor& y) = 0;  // elementwise, same shapes

  // ---- batch normalization over the last axis (x viewed as [M, C]) ----
  // Fused path (per-replica statistics): batch mean and biased variance out, y normalised.
  virtual void batchnorm_forward_training(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                                          Tensor& y, Tensor& mean, Tensor& var) = 0;
  // Given statistics (inference with moving stats, or synchronized stats).
  virtual void batchnorm_forward_inference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                           const Tensor& mean, const Tensor& var, float eps, Tensor& y) = 0;
  virtual void batchnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                  const Tensor& var, float eps, Tensor& dx, Tensor& dgamma, Tensor& dbeta) = 0;
  // Decomposed path for synchronized BN: local sums are all-reduced between the two calls.
  virtual void batchnorm_sums(const Tensor& x, Tensor& sum, Tensor& sum_squares) = 0;
  // sum_dy[C] = Σ dy, sum_dy_xmu[C] = Σ dy·(x - mean)
  virtual void batchnorm_backward_sums(const Tensor& dy, const Tensor& x, const Tensor& mean, Tensor& sum_dy,
                                       Tensor& sum_dy_xmu) = 0;
  // dx = γ·inv·(dy − sum_dy/count − (x−mean)·inv²·sum_dy_xmu/count), inv = 1/sqrt(var+eps)
  virtual void batchnorm_backward_apply(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                        const Tensor& mean, const Tensor& var, float eps, const Tensor& sum_dy,
                                        const Tensor& sum_dy_xmu, double count, Tensor& dx) = 0;

  // ---- losses: per-example loss out[N]; grad = d(loss_n)/d(pred) * grad_scale ----
  // An undefined `grad` computes the loss only (evaluation).
  // labels: integer class ids [N] or [N,1] (int32/int64/uint8), checked against the class count.
  virtual void sparse_categorical_crossentropy(const Tensor& pred, const Tensor& labels, bool from_logits,
                                               Tensor& loss, Tensor& grad, float grad_scale) = 0;
  virtual void categorical_crossentropy(const Tensor& pred, const Tensor& target, bool from_logits, Tensor& loss,
                                        Tensor& grad, float grad_scale) = 0;
  virtual void binary_crossentropy(const Tensor& pred, const Tensor& target, bool from_logits, Tensor& loss,
                                   Tensor& grad, float grad_scale) = 0;
  virtual void mean_squared_error(const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                                  float grad_scale) = 0;

  // ---- metric helpers: return sums over the batch (the caller divides) ----
  virtual double sparse_categorical_accuracy_sum(const Tensor& pred, const Tensor& labels) = 0;
  virtual double categorical_accuracy_sum(const Tensor& pred, const Tensor& target) = 0;
  virtual double binary_accuracy_sum(const Tensor& pred, const Tensor& target, float threshold) = 0;  // matches over all elements
  virtual double absolute_error_sum(const Tensor& pred, const Tensor& target) = 0;  // Σ|p−t| over all elements
  virtual double sum(const Tensor& x) = 0;

  // ---- optimizer updates (Keras 3 formulas), in place on w and slots ----
  // velocity = momentum·velocity − lr·g; w += velocity (nesterov: w += momentum·velocity − lr·g).
  // momentum == 0: w −= lr·g, velocity unused.
  virtual void sgd_update(Tensor& w, const Tensor& g, Tensor& velocity, float lr, float momentum,
                          bool nesterov) = 0;
  // m = β1 m + (1−β1) g; v = β2 v + (1−β2) g²; w −= lr_t · m / (sqrt(v) + eps)
  virtual void adam_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v, float lr_t, float beta_1,
                           float beta_2, float eps) = 0;
  // v = ρ v + (1−ρ) g²; w −= lr · g / sqrt(v + eps)   (no momentum, not centered)
  virtual void rmsprop_update(Tensor& w, const Tensor& g, Tensor& v, float lr, float rho, float eps) = 0;
};

// A oneDNN-backed CPU backend using `threads` OpenMP threads for calls from the calling thread.
std::unique_ptr<Backend> make_cpu_backend(int threads);

}  // namespace kerascpp
