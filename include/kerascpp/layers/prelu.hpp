// PReLU: Keras' layers.PReLU, a leaky ReLU whose slope is learned: y = x for x > 0, alpha * x
// below, alpha a weight of the input's per-example shape with size 1 along `shared_axes` (Keras'
// axis numbers, 1 = the first axis after the batch), e.g. {1, 2} for one slope per channel of
// an image.
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// PReLU's settings, with Keras' names and defaults.
struct PReLUOptions {
  /// The slopes' initial values.
  initializers::Initializer alpha_initializer = "zeros";
  /// A penalty on the slopes added to the loss; none by default.
  regularizers::Regularizer alpha_regularizer{};
  /// A projection applied to the slopes after each update; none by default.
  constraints::Constraint alpha_constraint{};
  /// Axes (1 = the first after the batch) sharing one slope; empty is Keras' None.
  std::vector<int> shared_axes{};  // Keras' None: empty
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' PReLU layer (make it with PReLU()).
class PReLULayer : public Layer {
 public:
  /// A PReLU whose slope weight is made by build().
  explicit PReLULayer(PReLUOptions options);
  std::string class_name() const override { return "PReLU"; }
  bool supports_masking() const override { return true; }
  void build(const std::vector<Shape>& in) override;
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  PReLUOptions options_;
  Variable* alpha_ = nullptr;
};

/// PReLU(), PReLU({.shared_axes = {1, 2}}).
LayerRef PReLU(PReLUOptions options = {});

}  // namespace kerascpp::layers
