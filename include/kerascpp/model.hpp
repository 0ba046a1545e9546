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
#include "kerascpp/dataset.hpp"
#include "kerascpp/distribute.hpp"
#include "kerascpp/layer.hpp"
#include "kerascpp/logs.hpp"
#include "kerascpp/losses.hpp"
#include "kerascpp/metrics.hpp"
#include "kerascpp/optimizers.hpp"

namespace kerascpp {

struct CompileOptions {
  optimizers::OptimizerRef optimizer = "rmsprop";  // Keras' compile() default
  losses::LossRef loss{};
  std::vector<metrics::MetricRef> metrics{};  // "accuracy"/"acc", "mae", or metrics::Metric objects
  // Keras' weighted_metrics: the same kinds of metric, weighted by the sample weights (Σ w·v / Σ w;
  // Precision/Recall/AUC count each example w times). `metrics` ignore the weights, as in Keras.
  // A name already taken by `metrics` is logged as "weighted_<name>".
  std::vector<metrics::MetricRef> weighted_metrics{};
  std::optional<distribute::Strategy> distribute{};  // default: one replica on cpu:0
};

struct FitOptions {
  int epochs = 1;
  std::int64_t steps_per_epoch = -1;  // -1: until the dataset is exhausted
  std::optional<Dataset> validation_data{};
  std::int64_t validation_steps = -1;  // batches of validation_data per validation; -1: all of it
  int validation_freq = 1;
  int initial_epoch = 0;
  std::vector<callbacks::CallbackRef> callbacks{};
  // Keras' class_weight: class id -> weight, turned into each example's sample weight from its
  // integer label (or a one-hot row's arg-max); classes not listed weigh 1. Single-output
  // classification models only, and not together with a dataset's own sample weights.
  std::map<int, double> class_weight{};
  // 0 silent, 1 progress bar, 2 one line per epoch; unset: set_default_verbose()'s level
  // (session.hpp), else 1 like Keras.
  std::optional<int> verbose{};
};

// steps: -1 (the default) for the whole dataset; a positive count stops after that many batches,
// and a dataset that runs out first ends the loop with Keras' "ran out of data" warning.
struct EvaluateOptions {
  std::int64_t steps = -1;
  std::vector<callbacks::CallbackRef> callbacks{};
  std::optional<int> verbose{};  // unset: set_default_verbose()'s level, else 1 like Keras
};

struct PredictOptions {
  std::int64_t steps = -1;
  std::vector<callbacks::CallbackRef> callbacks{};
  std::optional<int> verbose{};  // unset: set_default_verbose()'s level, else 0 like Keras
};

class ModelImpl;
class Model;
namespace detail {
class TrainingPosition;
// Internal (src/training/training_position.hpp): where fit() is, for BackupAndRestore.
TrainingPosition& training_position(Model& model);
}  // namespace detail

class Model {
 public:
  Model(const KerasTensor& input, const KerasTensor& output, std::string name = "");
  Model(const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs, std::string name = "");
  virtual ~Model();

  const std::string& name() const;
  void summary() const;  // to kerascpp::output() (session.hpp), std::cout by default
  void summary(std::ostream& out) const;
  std::string to_json() const;  // Keras-style model config
  std::vector<std::shared_ptr<Layer>> layers() const;
  // Keras' get_layer: the layer called `name`, or the index-th of layers(); ValueError naming the
  // model and the layers it has when there is none.
  std::shared_ptr<Layer> get_layer(const std::string& name) const;
  std::shared_ptr<Layer> get_layer(int index) const;
  std::vector<Variable*> variables() const;  // per layer: trainable then non-trainable
  std::vector<Variable*> trainable_variables() const;
  std::int64_t count_params() const;
  // Keras' sum(model.losses): the weight regularizers' penalty of the current weights (0 with
  // none). fit() and evaluate() add it to the loss they report.
  double regularization_loss() const;

  void compile(CompileOptions options);
  bool compiled() const;
  // Keras' metrics_names: "loss", then each compiled metric's name as given to compile() — the
  // keys of evaluate()'s logs (fit adds "val_" versions). Empty before compile().
  std::vector<std::string> metrics_names() const;
  callbacks::History fit(const Dataset& data, FitOptions options = {});
  Logs evaluate(const Dataset& data, EvaluateOptions options = {});
  // predict and predict_on_batch work before compile() too, like Keras: on one replica on cpu:0
  // (compile() later binds the model to its own strategy).
  Tensor predict(const Dataset& data, PredictOptions options = {});
  // A model with several Inputs takes one tensor per Input, in the model's input order (Keras'
  // model.train_on_batch([a, b], y)); its Dataset elements are (input_1, ..., input_n, y).
  // sample_weight: one weight per example ([N] or [N, 1] float32), or undefined for none.
  Logs train_on_batch(const Tensor& x, const Tensor& y, const Tensor& sample_weight = Tensor());
  Logs train_on_batch(const std::vector<Tensor>& xs, const Tensor& y, const Tensor& sample_weight = Tensor());
  Logs test_on_batch(const Tensor& x, const Tensor& y, const Tensor& sample_weight = Tensor());
  Logs test_on_batch(const std::vector<Tensor>& xs, const Tensor& y, const Tensor& sample_weight = Tensor());
  Tensor predict_on_batch(const Tensor& x);
  Tensor predict_on_batch(const std::vector<Tensor>& xs);

  // Asks the fit/evaluate/predict running now to stop cleanly after its current batch. Safe from
  // any thread and from a signal handler (it sets an atomic flag). Ctrl-C (SIGINT) during those
  // calls does the same: they install a SIGINT handler for their duration and restore the
  // previous one after; a second Ctrl-C before the batch ends goes to the previous handler
  // (by default, it ends the process). On a stop, with a note on std::cerr:
  //   fit      ends the current epoch early (no validation for it), runs on_epoch_end and
  //            on_train_end, and returns the History so far; the weights are the ones trained;
  //            BackupAndRestore keeps a backup of where it stopped, so fit() again resumes there;
  //   evaluate returns the logs of the batches it ran;
  //   predict  returns the predictions of the batches it ran (fewer rows).
  // At least one batch always runs; a request made while nothing runs is forgotten when the next
  // call starts.
  void request_stop();
  bool stop_requested() const;  // a request or a Ctrl-C is pending for the call running now

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
  Tensor forward(ReplicaContext& ctx, const Tensor& x, bool training = true);
  Tensor forward(ReplicaContext& ctx, const std::vector<Tensor>& xs, bool training = true);  // several Inputs
  // Also adds the weight regularizers' gradients (kernel_regularizer & co., times the optimizer's
  // loss_scale()) and returns their penalty, Keras' sum(model.losses), unscaled, for the loop to
  // add to the loss it reports.
  double backward(ReplicaContext& ctx, const Tensor& output_grad);
  void apply_gradients(ReplicaContext& ctx);

  optimizers::Optimizer& optimizer() const;
  const distribute::Strategy& distribute_strategy() const;
  bool stop_training = false;

  // Keras 3 `.weights.h5` files: Python Keras loads what this writes into the equivalent model and
  // vice versa. Writing is atomic; loading is all-or-nothing and restores every replica copy.
  void save_weights(const std::string& path) const;
  // Keras' model.save: the whole model as a Keras 3 `.keras` archive (config.json, metadata.json,
  // model.weights.h5), written atomically; load it with kerascpp::load_model (kerascpp/saving.hpp)
  // or Python Keras 3's keras.models.load_model. The path must end in ".keras".
  void save(const std::string& path) const;
  void load_weights(const std::string& path);

  // Weight values (copy 0) in variables() order, and assignment to every replica copy.
  std::vector<Tensor> get_weights() const;
  void set_weights(const std::vector<Tensor>& weights);

 protected:
  Model();  // Sequential builds its graph later
  std::shared_ptr<ModelImpl> impl_;

 private:
  friend detail::TrainingPosition& detail::training_position(Model& model);
};

// A linear stack of layers. Give the input shape with layers::InputLayer(shape) as the first
// element, or let the first batch of data build the model.
class Sequential : public Model {
 public:
  Sequential(std::initializer_list<LayerRef> layers, std::string name = "");
  explicit Sequential(std::vector<LayerRef> layers = {}, std::string name = "");
  void add(LayerRef layer);
};

}  // namespace kerascpp
