// SidecarEvaluator (tf.keras.utils.SidecarEvaluator): the evaluator task of a cluster. It watches
// the directory the chief's ModelCheckpoint or BackupAndRestore writes to, loads each new
// checkpoint into its own model, evaluates it on its dataset, logs a line and writes TensorBoard
// `validation` scalars, and stops after max_evaluations checkpoints, after idle_timeout seconds
// with no new one, or on request_stop(). docs/distributed_training.md#the-evaluator-task.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kerascpp/callbacks/callback.hpp"
#include "kerascpp/data/dataset.hpp"
#include "kerascpp/training/logs.hpp"
#include "kerascpp/training/model.hpp"

namespace kerascpp::io {
class EventFileWriter;
}

namespace kerascpp {

/// SidecarEvaluator's settings: Keras' steps, max_evaluations and callbacks, plus where to write
/// TensorBoard events and when to stop waiting.
struct SidecarEvaluatorOptions {
  /// Batches per evaluation; -1 (Keras' None) for the whole dataset.
  std::int64_t steps = -1;
  /// Stop after evaluating this many checkpoints; unset (Keras' None): no limit.
  std::optional<int> max_evaluations{};
  /// Given to every evaluate() call (on_test_* hooks).
  std::vector<callbacks::CallbackRef> callbacks{};
  /// When not empty, scalars go to log_dir/validation with TensorBoard's tags
  /// (evaluation_<metric>_vs_iterations); use the chief's TensorBoard log_dir to see them beside
  /// the training curves.
  std::string log_dir{};
  /// Seconds between two looks at checkpoint_dir.
  double poll_interval = 1.0;
  /// Stop when no new checkpoint has appeared for this many seconds (counted from start() or the
  /// last evaluation); unset: wait until max_evaluations or request_stop(), as Keras does.
  std::optional<double> idle_timeout{};
  /// 1: one line per checkpoint evaluated (to kerascpp::output()); 0: silent.
  int verbose = 1;
};

/// What one checkpoint evaluation gave.
struct CheckpointEvaluation {
  std::string path;                    ///< the checkpoint file
  std::optional<std::int64_t> step{};  ///< the optimizer's iteration count stored in the file
  std::optional<int> epoch{};          ///< BackupAndRestore files: the epochs fit() had completed
  Logs logs;                           ///< evaluate()'s logs ("loss", then the metrics)
};

/// Keras' SidecarEvaluator: evaluates each checkpoint that appears in `checkpoint_dir` exactly once.
class SidecarEvaluator {
 public:
  /// `model` must be compiled (its metrics are what is reported) and have the trained model's
  /// layers; `data` is the evaluation dataset; `checkpoint_dir` is where the chief writes
  /// `.weights.h5` or `.keras` checkpoints (ModelCheckpoint's folder or BackupAndRestore's backup_dir).
  SidecarEvaluator(Model model, Dataset data, std::string checkpoint_dir, SidecarEvaluatorOptions options = {});
  /// Closes the event file.
  ~SidecarEvaluator();
  /// Not copyable: it owns its event file and the record of what it evaluated.
  SidecarEvaluator(const SidecarEvaluator&) = delete;
  /// Not copyable (see above).
  SidecarEvaluator& operator=(const SidecarEvaluator&) = delete;

  /// Watches and evaluates until a stop condition (see SidecarEvaluatorOptions); blocks.
  void start();
  /// Makes start() return after the evaluation running now; safe from any thread.
  void request_stop() { stop_ = true; }
  /// Every evaluation so far, in the order they ran.
  const std::vector<CheckpointEvaluation>& evaluations() const { return evaluations_; }

 private:
  std::vector<std::pair<std::string, std::string>> new_checkpoints() const;
  bool evaluate(const std::string& path, const std::string& stamp);
  void report(const CheckpointEvaluation& e);

  Model model_;
  Dataset data_;
  std::string dir_;
  SidecarEvaluatorOptions o_;
  std::map<std::string, std::string> seen_;  // file name -> the stamp of the version evaluated
  std::vector<CheckpointEvaluation> evaluations_;
  std::shared_ptr<io::EventFileWriter> validation_;
  std::atomic<bool> stop_{false};
};

}  // namespace kerascpp
