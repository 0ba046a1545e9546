// Layer: the base of every layer, and KerasTensor, the symbolic value the functional API
// passes between layers. A layer declares its variables in build(), computes its outputs in
// forward() and its input gradients (and variable gradients) in backward() through the Backend.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "kerascpp/distribute/context.hpp"
#include "kerascpp/core/initializers.hpp"
#include "kerascpp/core/input_spec.hpp"
#include "kerascpp/core/mixed_precision.hpp"
#include "kerascpp/core/variable.hpp"

namespace kerascpp {

/// A layer's config: a JSON object, keys in the order written (as Keras writes them).
using Json = nlohmann::ordered_json;

class Layer;
struct Node;

/// A symbolic tensor: output `index` of a graph node. Shapes exclude the batch axis.
class KerasTensor {
 public:
  /// An undefined symbolic tensor (defined() is false).
  KerasTensor() = default;
  /// Output `index` of `node`.
  KerasTensor(std::shared_ptr<Node> node, int index) : node_(std::move(node)), index_(index) {}
  const Shape& shape() const;  ///< per-example shape, e.g. {28, 28, 1}
  /// The dtype the layer writes this output in.
  DType dtype() const;
  /// The layer call that produced it.
  const std::shared_ptr<Node>& node() const { return node_; }
  /// Which of the node's outputs it is.
  int index() const { return index_; }
  /// False for a default-constructed one.
  bool defined() const { return static_cast<bool>(node_); }

 private:
  std::shared_ptr<Node> node_;
  int index_ = 0;
};

/// One application of a layer to symbolic inputs.
struct Node {
  /// The layer called.
  std::shared_ptr<Layer> layer;
  /// The symbolic tensors it was called on.
  std::vector<KerasTensor> inputs;
  /// Per-example output shapes (no batch axis).
  std::vector<Shape> output_shapes;
  /// The dtype of every output.
  DType output_dtype = DType::float32;
};

/// Per-call scratch a layer keeps between forward and backward (masks, workspaces, statistics).
struct LayerState {
  /// Whatever forward() keeps for backward() (inputs, masks, statistics).
  std::vector<Tensor> saved;
  /// Keras masks of the inputs, one per input (uint8 of the input's leading shape, e.g. [B, T]
  /// for a [B, T, D] sequence; 1 keeps a step), undefined where an input carries none. The graph
  /// sets them before forward(); a layer that uses masks (attention, RNNs) reads them here.
  std::vector<Tensor> input_masks;
  /// False when no input leads back to a trainable variable (e.g. the first layer after Input):
  /// backward may then skip dL/d(inputs) and return undefined tensors.
  bool need_input_grads = true;
  /// The dtype forward() writes its outputs in: float32, or the 16-bit compute dtype where the
  /// graph keeps activations in 16 bits (Layer::low_precision_io). Set by the graph.
  DType output_dtype = DType::float32;
  /// A ReLU's backward moved into the max pooling after it, set by the graph where a layer that
  /// ends in a ReLU (Layer::ends_in_relu) feeds only such a pooling (Layer::absorbs_input_relu_backward):
  /// on the producer, the gradient backward() receives has already been through its ReLU, so it
  /// skips the ReLU's backward; on the pooling, backward() applies that ReLU's backward to the
  /// gradient it returns (Backend::pool2d_backward_through_relu, which can do it at the pooled
  /// resolution: a quarter of the memory traffic for 2x2 windows).
  bool output_grad_past_relu = false;
  /// On the pooling: apply the producer's ReLU backward to the gradient returned (see above).
  bool input_grad_through_relu = false;
  /// The ReLU's forward moved there too, where the pooling also takes that
  /// (Layer::absorbs_input_relu_forward): the producer writes its output before the ReLU, and the
  /// pooling applies the ReLU to its own output (Backend::pool2d_forward_relu). Max pooling
  /// commutes with ReLU, relu(max(z)) = max(relu(z)) bit for bit, so the ReLU touches a quarter of
  /// the elements for 2x2 windows, and the full-resolution pass over the producer's output is gone.
  /// Set only together with the two above.
  bool output_relu_deferred = false;
  /// On the pooling: apply the producer's ReLU to the output (see above).
  bool input_relu_deferred = false;
  /// The producer's bias gradient taken by that pooling (Backend::pool2d_backward_through_relu's
  /// dx_channel_sums: the gradient it returns, summed per channel, at the pooled resolution on the
  /// CPU): the pooling's backward may leave it in input_grad_channel_sums, and the graph hands it
  /// to the producer as output_grad_channel_sums before the producer's backward, which may use it
  /// instead of summing that gradient itself (Conv2D). Undefined where none was taken.
  Tensor input_grad_channel_sums;
  /// On the producer: the per-channel sums of its output's gradient, handed over by the pooling (see above).
  Tensor output_grad_channel_sums;
};

/// The base of every layer: variables made in build(), outputs in forward(), gradients in backward().
class Layer : public std::enable_shared_from_this<Layer> {
 public:
  /// A layer named `name`; "" gives it an automatic name ("dense_1") when first read.
  explicit Layer(std::string name = "");
  /// Destroys the layer and its variables.
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  virtual std::string class_name() const = 0;  ///< Keras class name: "Dense", "Conv2D", ...
  /// Keras' snake_case of class_name(): "dense", "conv2d", "batch_normalization".
  std::string snake_name() const;
  const std::string& name() const;  ///< the user's name, else a unique "dense_1"-style one

  /// The output shapes for inputs of these per-example shapes (no batch axis). call_multi has
  /// already checked the declared input specs, so this checks only what a spec cannot express (a
  /// kernel larger than the image) and throws a kerascpp::Error naming the layer and the shapes.
  virtual std::vector<Shape> compute_output_shapes(const std::vector<Shape>& input_shapes) = 0;
  /// The same with the inputs' dtypes, for a layer whose output depends on them (one that embeds
  /// integer ids but projects float features, say); the default ignores them. call_multi calls
  /// this one.
  virtual std::vector<Shape> compute_output_shapes_for(const std::vector<Shape>& input_shapes,
                                                       const std::vector<DType>& /*input_dtypes*/) {
    return compute_output_shapes(input_shapes);
  }
  /// Creates the variables. Called once, on the first call, after compute_output_shapes.
  virtual void build(const std::vector<Shape>& /*input_shapes*/) {}
  /// Whether build() has run.
  bool built() const { return built_; }

  /// Computes the outputs of a batch through ctx.backend; `state` carries what backward() needs.
  virtual std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& inputs, LayerState& state) = 0;
  /// Given dL/d(outputs), returns dL/d(inputs) and writes the variables' gradients for ctx's replica
  /// (first contribution overwrites, see Variable::take_first_grad).
  virtual std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& inputs,
                                       const std::vector<Tensor>& outputs, const std::vector<Tensor>& output_grads,
                                       LayerState& state) = 0;
  /// Keras' supports_masking: a layer that keeps the step axes as they are (Dense over the last
  /// axis, Dropout, LayerNormalization, ...) passes its input's mask on to its output. Others drop it.
  virtual bool supports_masking() const { return false; }
  /// Keras' compute_mask, called after forward() with the same state: one mask per output
  /// (undefined for none). The default gives every output the first input's mask when
  /// supports_masking(), else none; Embedding(mask_zero) makes one, merge layers combine theirs.
  virtual std::vector<Tensor> compute_output_masks(ReplicaContext& ctx, const std::vector<Tensor>& inputs,
                                                   const std::vector<Tensor>& outputs, const LayerState& state);
  /// Whether this layer makes masks of its own (Embedding(mask_zero)), so that a model's output may
  /// carry one: the engine then weights the loss by the output's mask as Keras does.
  virtual bool creates_masks() const { return false; }
  /// @{
  /// A replica with no examples in this step still takes part in collectives (synchronized BN).
  virtual void forward_empty(ReplicaContext& /*ctx*/) {}
  virtual void backward_empty(ReplicaContext& /*ctx*/) {}
  /// @}

  /// Keras' get_config: the constructor arguments as a JSON object with Keras' keys, e.g.
  /// {"name": "d", "units": 10, "activation": "relu"}; the factory the layer registers
  /// (kerascpp/core/layer_config.hpp) rebuilds it from this. The default is {"name": name()}.
  virtual Json get_config() const;
  /// How one call is written in a functional model's config (Keras' inbound node args/kwargs):
  /// input i is positional where keywords[i] is "", else passed as that keyword; several
  /// positional inputs form one list (merge layers: layer([a, b])) unless inputs_as_list is
  /// false (attention: layer(query, value, key=k)); extra_kwargs_json adds non-tensor arguments.
  struct CallArguments {
    /// Per input: "" for positional, else the keyword it is passed as.
    std::vector<std::string> keywords;
    /// Whether several positional inputs form one list.
    bool inputs_as_list = true;
    /// Non-tensor keyword arguments, as a JSON object.
    std::string extra_kwargs_json = "{}";
  };
  /// How a call on `num_inputs` inputs is written; the default passes them positionally, as one list.
  virtual CallArguments call_arguments(std::size_t num_inputs) const {
    return {std::vector<std::string>(num_inputs), true, "{}"};
  }
  /// Whether backward must deliver dL/d(output) to this layer even when nothing upstream trains:
  /// true for layers with trainable variables; a custom layer that inspects its gradient (a
  /// saliency probe, say) overrides it to return true.
  virtual bool needs_gradient() { return !trainable_variables().empty(); }
  /// The ReLU-into-max-pooling fusion (LayerState::output_grad_past_relu): whether forward()'s
  /// single output is exactly a ReLU's output, whose backward this layer skips when asked (Conv2D
  /// with activation "relu"); and whether backward() applies its input's ReLU backward when
  /// LayerState::input_grad_through_relu says so (MaxPooling2D). A layer saying yes to the second
  /// must honour the flag, or the ReLU's backward is lost. Likewise for the forward
  /// (LayerState::output_relu_deferred / input_relu_deferred): a layer ending in a ReLU skips it
  /// when asked, and one saying yes to absorbs_input_relu_forward() (MaxPooling2D) applies it to its
  /// output then; the forward moves only where the backward does. A producer that ignores
  /// output_relu_deferred stays correct, only slower: the ReLU applied twice is the ReLU.
  virtual bool ends_in_relu() const { return false; }
  /// Whether backward() honours LayerState::input_grad_through_relu (see ends_in_relu).
  virtual bool absorbs_input_relu_backward() const { return false; }
  /// Whether forward() honours LayerState::input_relu_deferred (see ends_in_relu).
  virtual bool absorbs_input_relu_forward() const { return false; }
  /// What each input must look like (Keras' layer.input_spec). With input_spec_for_each(), any
  /// number of inputs each satisfying input_spec()[0]; otherwise exactly input_spec().size() inputs.
  /// A layer that declares nothing takes any number of float32 inputs.
  const std::vector<InputSpec>& input_spec() const { return input_spec_; }
  /// Whether input_spec()[0] applies to each of any number of inputs.
  bool input_spec_for_each() const { return input_spec_for_each_; }

  /// Variables in Keras order: trainable first, then non-trainable.
  std::vector<Variable*> variables();
  /// Where .weights.h5 keeps the variables, relative to the layer's own group: path "" is the
  /// layer's group itself (the default, every variable); a layer built from Keras sublayers
  /// (MultiHeadAttention's query_dense, ...) gives one group per sublayer, as Keras writes them.
  struct WeightGroup {
    /// The sublayer's group below the layer's ("" for the layer's own).
    std::string path;
    /// The variables stored there, in order.
    std::vector<Variable*> vars;
  };
  /// The variables by .weights.h5 group (see WeightGroup); by default one group with all.
  virtual std::vector<WeightGroup> weight_groups() { return {{"", variables()}}; }
  /// None while the layer is frozen (set_trainable(false)).
  std::vector<Variable*> trainable_variables();
  /// Keras' layer.trainable: a frozen layer's variables are not updated (fine-tuning), its
  /// weight gradients are not computed, and BatchNormalization runs in inference mode (its moving
  /// statistics stay as they are), as in Keras. Like Keras, call compile() after changing it.
  void set_trainable(bool trainable) { trainable_ = trainable; }
  /// Keras' layer.trainable (see set_trainable).
  bool trainable() const { return trainable_; }
  /// The number of scalars in all variables, as summary() shows.
  std::int64_t count_params() const;
  /// Keras' layer.dtype_policy: the global policy when the layer was made, or the one set here
  /// (options .dtype on Dense and Conv2D). Under a mixed policy the layer's matmuls and
  /// convolutions compute in compute_dtype(); its variables stay float32 (mixed_precision.hpp).
  const mixed_precision::DTypePolicy& dtype_policy() const { return dtype_policy_; }
  /// The dtype matmuls and convolutions compute in (dtype_policy().compute_dtype()).
  DType compute_dtype() const { return dtype_policy_.compute_dtype(); }
  /// Sets the policy by name ("float32", "mixed_bfloat16", "mixed_float16"); ValueError otherwise.
  void set_dtype_policy(const std::string& name);
  /// Mixed precision's 16-bit activations: Keras' mixed policies hand layer outputs on in the
  /// compute dtype; kerascpp does so between layers that say here they can, on backends that can
  /// (Backend::low_precision_activations), and keeps model outputs float32.
  ///  none:           the layer sees float32 only (the graph casts 16-bit inputs to float32).
  ///  same_as_output: inputs arrive in LayerState::output_dtype (the graph casts them) and the
  ///                  outputs are written in it (pooling, reshaping).
  ///  any:            float32 or compute-dtype inputs arrive as they are; the outputs are written
  ///                  in LayerState::output_dtype (Dense, Conv2D: their products read either).
  /// backward() gets each output's gradient in that output's dtype and returns each input's
  /// gradient in the dtype of the input forward() was given.
  enum class LowPrecisionIO { none, same_as_output, any };
  /// Which 16-bit inputs and outputs the layer takes (see LowPrecisionIO); none by default.
  virtual LowPrecisionIO low_precision_io() const { return LowPrecisionIO::none; }

  /// @{
  /// Applies the layer symbolically (functional API); builds it on first use.
  KerasTensor operator()(const KerasTensor& x);
  KerasTensor operator()(const std::vector<KerasTensor>& xs);
  /// @}
  /// The same for a layer with several outputs: one symbolic tensor per output.
  std::vector<KerasTensor> call_multi(const std::vector<KerasTensor>& xs);

 protected:
  /// Makes a variable of the layer (in build()), initialised from `seed`;
  /// regularizer/constraint: Keras' kernel_regularizer, kernel_constraint, ... for this weight.
  Variable& add_weight(const std::string& name, const Shape& shape, const initializers::Initializer& initializer,
                       bool trainable, std::uint64_t seed, regularizers::Regularizer regularizer = {},
                       constraints::Constraint constraint = {});
  /// "Layer 'dense_1' (Dense)" for error messages.
  std::string where() const;
  /// @{
  /// Declares the inputs the layer takes: one satisfying `spec`; one per entry of `specs`; or any
  /// number each satisfying `spec` (merge layers). build() may tighten the spec, e.g. fix the
  /// feature axis to the size the variables were made for ({-1: input_dim}).
  void set_input_spec(InputSpec spec);
  void set_input_specs(std::vector<InputSpec> specs);
  void set_input_spec_for_each(InputSpec spec);
  /// @}

 private:
  // Throws ShapeError (ValueError for a wrong number of inputs) naming the layer, the spec and
  // the shape of the first input that does not satisfy the declared spec.
  void check_input_spec(const std::vector<KerasTensor>& inputs) const;
  mutable std::string name_;
  bool built_ = false;
  bool trainable_ = true;
  mixed_precision::DTypePolicy dtype_policy_ = mixed_precision::global_policy();
  std::vector<InputSpec> input_spec_{InputSpec{}};
  bool input_spec_for_each_ = true;
  std::vector<std::unique_ptr<Variable>> variables_;
};

/// Shared handle to a layer, callable like a Keras layer: `LayerRef d = layers::Dense(10); y = d(x);`
class LayerRef {
 public:
  /// A null handle.
  LayerRef() = default;
  /// Reading the name here gives an unnamed layer its automatic name ("dense", "dense_1", ...) when
  /// it is made, as Keras does, not when the name is first read: `a = Dense(3); b = Dense(3);`
  /// names a "dense" even if b's name is read first.
  template <class L>
  LayerRef(std::shared_ptr<L> layer) : layer_(std::move(layer)) {  // NOLINT: implicit by design
    if (layer_) (void)layer_->name();
  }
  /// @{
  /// Calls the layer symbolically (Layer::operator()).
  KerasTensor operator()(const KerasTensor& x) const { return (*layer_)(x); }
  KerasTensor operator()(const std::vector<KerasTensor>& xs) const { return (*layer_)(xs); }
  /// @}
  /// The layer's members.
  Layer* operator->() const { return layer_.get(); }
  /// The layer.
  Layer& operator*() const { return *layer_; }
  /// The shared pointer held.
  const std::shared_ptr<Layer>& get() const { return layer_; }

 private:
  std::shared_ptr<Layer> layer_;
};

/// Builds the name a layer gets when the user gives none: "dense", "dense_1", ... (process-wide, like Keras).
std::string unique_layer_name(const std::string& snake_class_name);
/// Keras' snake case of a class name: "Conv2D" -> "conv2d", "BatchNormalization" -> "batch_normalization".
std::string to_snake_case(const std::string& class_name);

}  // namespace kerascpp
