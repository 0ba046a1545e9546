// A user's own layer, loss and metric, written only against kerascpp's public headers: nothing
// here is part of the library. Used by examples/custom_layer.cpp and checked by
// tests/test_extension_points.cpp.
#pragma once
#include <kerascpp/kerascpp.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace custom {

namespace K = kerascpp;

// Swish with a trainable beta (Ramachandran et al. 2017): y = x · sigmoid(beta · x).
//
// A layer declares its variables in build(), computes its outputs in forward() and its input
// gradients in backward(), all with Backend ops on the replica's backend (ctx.backend), so the
// same code runs on every replica of a MirroredStrategy and on the CPU or a GPU. Outputs are
// allocated by the layer (Tensor(shape) lands on the replica's device); whatever backward needs
// from forward is kept in the per-call LayerState, never in the layer (one layer object serves
// every replica at once).
class Swish : public K::Layer {
 public:
  explicit Swish(std::string name = "") : K::Layer(std::move(name)) {
    // One float32 input with a batch axis: the library checks this declared spec whenever the
    // layer is called and names the layer in the ShapeError/ValueError, so the shape code below
    // may assume it.
    set_input_spec(K::InputSpec{.min_ndim = 2, .layout = "(batch, ...)"});
  }
  std::string class_name() const override { return "Swish"; }

  std::vector<K::Shape> compute_output_shapes(const std::vector<K::Shape>& input_shapes) override {
    return {input_shapes[0]};
  }

  void build(const std::vector<K::Shape>& /*input_shapes*/) override {
    beta_ = &add_weight("beta", {1}, "ones", /*trainable=*/true, /*seed=*/0);
  }

  std::vector<K::Tensor> forward(K::ReplicaContext& ctx, const std::vector<K::Tensor>& inputs,
                                 K::LayerState& state) override {
    K::Backend& b = *ctx.backend;
    const K::Tensor& x = inputs[0];
    K::Tensor z(x.shape());
    b.copy(x, z);
    b.scale(z, beta(ctx));
    K::Tensor s(x.shape());  // sigmoid(beta · x), kept for backward
    b.activation_forward(K::ActivationKind::sigmoid, z, s);
    K::Tensor y(x.shape());
    b.multiply(x, s, y);
    state.saved = {s};
    return {y};
  }

  // dy/dx = s + beta · x · s(1 − s),  dy/dbeta = x² · s(1 − s),  s = sigmoid(beta · x).
  std::vector<K::Tensor> backward(K::ReplicaContext& ctx, const std::vector<K::Tensor>& inputs,
                                  const std::vector<K::Tensor>& /*outputs*/, const std::vector<K::Tensor>& output_grads,
                                  K::LayerState& state) override {
    K::Backend& b = *ctx.backend;
    const K::Tensor& x = inputs[0];
    const K::Tensor& dy = output_grads[0];
    const K::Tensor& s = state.saved.at(0);
    K::Tensor t(x.shape());  // x · dy · s(1 − s)
    b.multiply(x, dy, t);
    b.activation_backward(K::ActivationKind::sigmoid, s, t, t);
    // dL/dbeta = Σ t · x, written into this replica's gradient: the first contribution of a step
    // overwrites, a second call of the same layer in the step adds (Variable::take_first_grad).
    K::Tensor tx(x.shape());
    b.multiply(t, x, tx);
    const int r = ctx.replica_id;
    bool first = beta_->take_first_grad(r);
    b.sum_to_last_axis(tx.reshape({-1, 1}), beta_->grad(r), !first);
    if (!state.need_input_grads) return {K::Tensor()};  // nothing upstream trains
    K::Tensor dx(x.shape());
    b.multiply(dy, s, dx);
    b.scale(t, beta(ctx));
    b.add_inplace(dx, t);
    return {dx};
  }

 protected:
  // The scalar beta of this replica's copy (to_vector() reads it from any device).
  float beta(const K::ReplicaContext& ctx) const { return beta_->value(ctx.replica_id).to_vector()[0]; }
  K::Variable* beta_ = nullptr;
};

// Keras' log_cosh loss: loss_n = mean_i log(cosh(pred_i − target_i)) over the example's values,
// gradient tanh(pred − target) / D. Written with host loops, so it needs host tensors (CPU
// replicas); a loss for every device would use Backend ops instead.
class LogCosh : public K::losses::Loss {
 public:
  std::string name() const override { return "log_cosh"; }
  void compute(K::Backend& /*backend*/, const K::Tensor& pred, const K::Tensor& target, K::Tensor& loss,
               K::Tensor& grad, float grad_scale) const override {
    if (!pred.on_host() || !target.on_host())
      throw K::DeviceError("log_cosh: this example loss runs on CPU replicas only");
    if (target.shape() != pred.shape() || target.dtype() != K::DType::float32)
      throw K::ShapeError("log_cosh: targets must be float32 of the predictions' shape " + K::shape_str(pred.shape()) +
                          ", got " + K::shape_str(target.shape()));
    const std::int64_t n = pred.dim(0);
    const std::int64_t d = n ? pred.numel() / n : 0;
    const float* p = pred.data<float>();
    const float* t = target.data<float>();
    float* l = loss.data<float>();                             // [N], allocated by the caller
    float* g = grad.defined() ? grad.data<float>() : nullptr;  // undefined when evaluating
    for (std::int64_t row = 0; row < n; ++row) {
      double total = 0.0;
      for (std::int64_t i = row * d; i < (row + 1) * d; ++i) {
        const double e = static_cast<double>(p[i]) - t[i];
        // log(cosh(e)) = |e| + log1p(exp(−2|e|)) − log 2, without overflow for large |e|.
        total += std::fabs(e) + std::log1p(std::exp(-2.0 * std::fabs(e))) - std::log(2.0);
        if (g) g[i] = static_cast<float>(std::tanh(e) / static_cast<double>(d) * grad_scale);
      }
      l[row] = static_cast<float>(total / static_cast<double>(d));
    }
  }
};

// The fraction of predicted values within `tolerance` of their target, over every element of
// the batch: a shard contributes (values within tolerance, values), so the epoch's figure is
// exact whatever the number of replicas.
class WithinTolerance : public K::metrics::Metric {
 public:
  explicit WithinTolerance(float tolerance) : tolerance_(tolerance) {}
  std::string name() const override { return "within_tolerance"; }
  K::metrics::MetricSums shard_sums(K::Backend& /*backend*/, const K::Tensor& pred,
                                    const K::Tensor& target) const override {
    // to_vector() copies to the host from any device: simple, fine for a small output.
    std::vector<float> p = pred.to_vector(), t = target.to_vector();
    double close = 0;
    for (std::size_t i = 0; i < p.size(); ++i) close += std::fabs(p[i] - t[i]) <= tolerance_ ? 1 : 0;
    return {close, static_cast<double>(p.size())};
  }

 private:
  float tolerance_;
};

}  // namespace custom
