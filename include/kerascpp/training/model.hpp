// Model: a DAG of layers built with the functional API (or Sequential), and the Keras training
// API on top of it — compile, fit, evaluate, predict — written once for every Strategy.
#pragma once
#include <functional>
#include <iostream>  // summary(std::cout), and std::cout for users of this header
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kerascpp/callbacks/callback.hpp"
#include "kerascpp/core/layer.hpp"
#include "kerascpp/data/dataset.hpp"
#include "kerascpp/distribute/strategy.hpp"
#include "kerascpp/training/logs.hpp"
#include "kerascpp/training/losses.hpp"
#include "kerascpp/training/metrics.hpp"
#include "kerascpp/training/optimizers.hpp"

namespace kerascpp {

/// Model::compile's arguments, with Keras' names and defaults.
struct CompileOptions {
  optimizers::OptimizerRef optimizer = "rmsprop";  ///< Keras' compile() default
  /// A loss name ("sparse_categorical_crossentropy", "mse", ...) or a losses::Loss object.
  losses::LossRef loss{};
  std::vector<metrics::MetricRef> metrics{};  ///< "accuracy"/"acc", "mae", or metrics::Metric objects
  /// Keras' weighted_metrics: the same kinds of metric, weighted by the sample weights (Σ w·v / Σ w;
  /// Precision/Recall/AUC count each example w times). `metrics` ignore the weights, as in Keras.
  /// A name already taken by `metrics` is logged as "weighted_<name>".
  std::vector<metrics::MetricRef> weighted_metrics{};
  std::optional<distribute::Strategy> distribute{};  ///< default: one replica on cpu:0
};

/// Model::fit's arguments, with Keras' names and defaults.
struct FitOptions {
  /// The epoch fit() stops before: epochs initial_epoch .. epochs-1 run.
  int epochs = 1;
  std::int64_t steps_per_epoch = -1;  ///< -1: until the dataset is exhausted
  /// Evaluated after every validation_freq-th epoch and logged with "val_" keys.
  std::optional<Dataset> validation_data{};
  std::int64_t validation_steps = -1;  ///< batches of validation_data per validation; -1: all of it
  /// Validate every this many epochs.
  int validation_freq = 1;
  /// The epoch to start at (resuming an earlier fit).
  int initial_epoch = 0;
  /// Called around every epoch and batch (fit() adds History and the progress bar itself).
  std::vector<callbacks::CallbackRef> callbacks{};
  /// Keras' class_weight: class id -> weight, turned into each example's sample weight from its
  /// integer label (or a one-hot row's arg-max); classes not listed weigh 1. Single-output
  /// classification models only, and not together with a dataset's own sample weights.
  std::map<int, double> class_weight{};
  /// 0 silent, 1 progress bar, 2 one line per epoch; unset: set_default_verbose()'s level
  /// (session.hpp), else 1 like Keras.
  std::optional<int> verbose{};
};

/// Model::evaluate's arguments, with Keras' names and defaults.
struct EvaluateOptions {
  /// -1 (the default) for the whole dataset; a positive count stops after that many batches,
  /// and a dataset that runs out first ends the loop with Keras' "ran out of data" warning.
  std::int64_t steps = -1;
  /// Called around the evaluation and every batch (on_test_*).
  std::vector<callbacks::CallbackRef> callbacks{};
  std::optional<int> verbose{};  ///< unset: set_default_verbose()'s level, else 1 like Keras
};

/// Model::predict's arguments, with Keras' names and defaults.
struct PredictOptions {
  /// -1 (the default) for the whole dataset, else at most that many batches (as EvaluateOptions).
  std::int64_t steps = -1;
  /// Called around the prediction and every batch (on_predict_*).
  std::vector<callbacks::CallbackRef> callbacks{};
  std::optional<int> verbose{};  ///< unset: set_default_verbose()'s level, else 0 like Keras
};

class ModelImpl;
class Model;
namespace detail {
class TrainingPosition;
// Internal (src/training/training_position.hpp): where fit() is, for BackupAndRestore.
TrainingPosition& training_position(Model& model);
}  // namespace detail

/// A DAG of layers (functional API or Sequential) with Keras' training API: compile, fit, evaluate, predict.
class Model {
 public:
  /// A functional model from one Input to one output (Keras' keras.Model(inputs, outputs)).
  Model(const KerasTensor& input, const KerasTensor& output, std::string name = "");
  /// A functional model with several Inputs or outputs.
  Model(const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs, std::string name = "");
  /// Releases the model (its layers live on where other handles hold them).
  virtual ~Model();

  /// The given name, else an automatic one ("functional", "sequential_1").
  const std::string& name() const;
  void summary() const;  ///< to kerascpp::output() (session.hpp), std::cout by default
  /// Keras' layer table (layer, output shape, parameters) written to `out`.
  void summary(std::ostream& out) const;
  std::string to_json() const;  ///< Keras-style model config
  /// The layers in graph order; as in Keras a functional model lists its InputLayers, a Sequential not.
  std::vector<std::shared_ptr<Layer>> layers() const;
  /// @{
  /// Keras' get_layer: the layer called `name`, or the index-th of layers(); ValueError naming the
  /// model and the layers it has when there is none.
  std::shared_ptr<Layer> get_layer(const std::string& name) const;
  std::shared_ptr<Layer> get_layer(int index) const;
  /// @}
  std::vector<Variable*> variables() const;  ///< per layer: trainable then non-trainable
  /// The variables the optimizer updates (none of frozen layers).
  std::vector<Variable*> trainable_variables() const;
  /// The number of scalars in all variables, as summary() totals them.
  std::int64_t count_params() const;
  /// Keras' sum(model.losses): the weight regularizers' penalty of the current weights (0 with
  /// none). fit() and evaluate() add it to the loss they report.
  double regularization_loss() const;

  /// Sets the optimizer, loss, metrics and strategy; call again after freezing layers.
  void compile(CompileOptions options);
  /// Whether compile() has been called.
  bool compiled() const;
  /// Keras' metrics_names: "loss", then each compiled metric's name as given to compile() — the
  /// keys of evaluate()'s logs (fit adds "val_" versions). Empty before compile().
  std::vector<std::string> metrics_names() const;
  /// Trains on `data` (elements (x, y) or (x, y, sample_weight)); returns the per-epoch logs.
  callbacks::History fit(const Dataset& data, FitOptions options = {});
  /// The loss and metrics over `data`, keyed as metrics_names().
  Logs evaluate(const Dataset& data, EvaluateOptions options = {});
  /// predict and predict_on_batch work before compile() too, like Keras: on one replica on cpu:0
  /// (compile() later binds the model to its own strategy).
  Tensor predict(const Dataset& data, PredictOptions options = {});
  /// @{
  /// One training step on one batch; returns its loss and metrics. A model with several Inputs
  /// takes one tensor per Input, in the model's input order (Keras' model.train_on_batch([a, b],
  /// y)); its Dataset elements are (input_1, ..., input_n, y). sample_weight: one weight per
  /// example ([N] or [N, 1] float32), or undefined for none.
  Logs train_on_batch(const Tensor& x, const Tensor& y, const Tensor& sample_weight = Tensor());
  Logs train_on_batch(const std::vector<Tensor>& xs, const Tensor& y, const Tensor& sample_weight = Tensor());
  /// @}
  /// @{
  /// The loss and metrics of one batch, without training (inputs as train_on_batch).
  Logs test_on_batch(const Tensor& x, const Tensor& y, const Tensor& sample_weight = Tensor());
  Logs test_on_batch(const std::vector<Tensor>& xs, const Tensor& y, const Tensor& sample_weight = Tensor());
  /// @}
  /// @{
  /// The model's output for one batch (inputs as train_on_batch).
  Tensor predict_on_batch(const Tensor& x);
  Tensor predict_on_batch(const std::vector<Tensor>& xs);
  /// @}

  /// Asks the fit/evaluate/predict running now to stop cleanly after its current batch. Safe from
  /// any thread and from a signal handler (it sets an atomic flag). Ctrl-C (SIGINT) during those
  /// calls does the same: they install a SIGINT handler for their duration and restore the
  /// previous one after; a second Ctrl-C before the batch ends goes to the previous handler
  /// (by default, it ends the process). On a stop, with a note on std::cerr:
  ///   fit      ends the current epoch early (no validation for it), runs on_epoch_end and
  ///            on_train_end, and returns the History so far; the weights are the ones trained;
  ///            BackupAndRestore keeps a backup of where it stopped, so fit() again resumes there;
  ///   evaluate returns the logs of the batches it ran;
  ///   predict  returns the predictions of the batches it ran (fewer rows).
  /// At least one batch always runs; a request made while nothing runs is forgotten when the next
  /// call starts.
  void request_stop();
  bool stop_requested() const;  ///< a request or a Ctrl-C is pending for the call running now

  // ---- custom training loops, called on every replica inside strategy.run() ----
  // (what the official models did with model_fn + replicate_model_fn + TowerOptimizer):
  //   strategy.run([&](ReplicaContext& ctx) {
  //     Tensor x = strategy.shard(ctx, global_x), y = strategy.shard(ctx, global_y);
  //     Tensor pred = model.forward(ctx, x);
  //     Tensor per_example({x.dim(0)}), grad(pred.shape());
  //     float scale = model.optimizer().loss_scale();   // 1 but for a LossScaleOptimizer
  //     loss.compute(*ctx.backend, pred, y, per_example, grad, scale / global_x.dim(0));
  //     model.backward(ctx, grad);          // gradients all-reduced over replicas (+ regularizers')
  //     model.apply_gradients(ctx);         // same update on every mirrored copy (or a skipped step)
  //   });
  //   model.optimizer().finish_step();
  // The context must belong to the strategy the model was compiled under.
  /// @{
  /// The model's output on this replica's batch, keeping what backward() needs (several Inputs:
  /// one tensor per Input). Inside strategy.run(), for custom training loops (see above).
  Tensor forward(ReplicaContext& ctx, const Tensor& x, bool training = true);
  Tensor forward(ReplicaContext& ctx, const std::vector<Tensor>& xs, bool training = true);
  /// @}
  /// Back-propagates `output_grad` from the last forward(), all-reducing the variables' gradients
  /// over the replicas. Also adds the weight regularizers' gradients (kernel_regularizer & co., times the optimizer's
  /// loss_scale()) and returns their penalty, Keras' sum(model.losses), unscaled, for the loop to
  /// add to the loss it reports.
  double backward(ReplicaContext& ctx, const Tensor& output_grad);
  /// The optimizer's update of every trainable variable from its gradient, on this replica's copies.
  void apply_gradients(ReplicaContext& ctx);

  /// The compiled optimizer (a LossScaleOptimizer around it under mixed_float16); StateError before compile().
  optimizers::Optimizer& optimizer() const;
  /// The strategy the model runs under (one replica on cpu:0 unless compile() named one).
  const distribute::Strategy& distribute_strategy() const;
  /// Keras' model.stop_training: a callback sets it to end fit() after the current epoch.
  bool stop_training = false;

  /// Keras 3 `.weights.h5` files: Python Keras loads what this writes into the equivalent model and
  /// vice versa. Writing is atomic; loading is all-or-nothing and restores every replica copy.
  void save_weights(const std::string& path) const;
  /// Keras' model.save: the whole model as a Keras 3 `.keras` archive (config.json, metadata.json,
  /// model.weights.h5), written atomically; load it with kerascpp::load_model (kerascpp/io/saving.hpp)
  /// or Python Keras 3's keras.models.load_model. The path must end in ".keras".
  void save(const std::string& path) const;
  /// Reads a `.weights.h5` file (see save_weights); the layers must match.
  void load_weights(const std::string& path);

  /// Weight values (copy 0) in variables() order.
  std::vector<Tensor> get_weights() const;
  /// Assigns weights in variables() order to every replica copy; shapes must match.
  void set_weights(const std::vector<Tensor>& weights);

 protected:
  Model();  ///< Sequential builds its graph later
  /// The graph and training state; copies of a Model share it (they are the same model).
  std::shared_ptr<ModelImpl> impl_;

 private:
  friend detail::TrainingPosition& detail::training_position(Model& model);
};

/// A linear stack of layers. Give the input shape with layers::InputLayer(shape) as the first
/// element, or let the first batch of data build the model.
class Sequential : public Model {
 public:
  /// A stack of `layers`, in order.
  Sequential(std::initializer_list<LayerRef> layers, std::string name = "");
  /// A stack of `layers` (none: add them with add()).
  explicit Sequential(std::vector<LayerRef> layers = {}, std::string name = "");
  /// Appends `layer` to the stack (before compile()).
  void add(LayerRef layer);
};

}  // namespace kerascpp
