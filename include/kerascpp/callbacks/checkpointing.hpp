// ModelCheckpoint (Keras filepath templates, save_best_only, save_freq) and BackupAndRestore
// (resume an interrupted fit exactly). Files are Keras `.weights.h5` (or, for ModelCheckpoint with
// save_weights_only = false, `.keras` archives), written atomically, saved from one replica copy
// and restored into every copy; only the chief writes.
#pragma once
#include <optional>
#include <string>

#include "kerascpp/callbacks/callback.hpp"
#include "kerascpp/callbacks/frequency.hpp"
#include "kerascpp/callbacks/monitor.hpp"

namespace kerascpp::detail {
struct ResumePoint;  // internal: where a fit() run is (src/training/training_position.hpp)
}

namespace kerascpp::callbacks {

/// ModelCheckpoint's settings, with Keras' names and defaults.
struct ModelCheckpointOptions {
  /// The log key that decides "best" for save_best_only.
  std::string monitor = "val_loss";
  /// "auto", "min" or "max": whether smaller or larger `monitor` is better ("auto": larger for accuracies).
  std::string mode = "auto";
  /// Save only when `monitor` improved on the best so far.
  bool save_best_only = false;
  /// true: weights + optimizer state in a .weights.h5 file; false: the whole model in a .keras
  /// archive (Model::save), which kerascpp::load_model and Python Keras' load_model read.
  bool save_weights_only = true;
  /// Save at each epoch's end, or every N batches.
  Frequency save_freq = "epoch";
  /// With save_best_only: the value `monitor` must beat before the first save.
  std::optional<double> initial_value_threshold{};
  /// 1: with save_best_only, print a line for each improvement saved.
  int verbose = 0;
};

/// Keras' ModelCheckpoint: saves the weights (or the model) at save_freq to a path formatted from
/// `filepath`'s {epoch}, {batch} and log-key fields.
class ModelCheckpoint : public Callback {
 public:
  /// Saves to `filepath`, a template such as "ckpt/e{epoch:02d}-{val_loss:.3f}.weights.h5".
  explicit ModelCheckpoint(std::string filepath, ModelCheckpointOptions options = {});
  void on_train_begin(const Logs& logs) override;
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override;
  void on_epoch_begin(int epoch, const Logs& /*logs*/) override { epoch_ = epoch; }
  void on_epoch_end(int epoch, const Logs& logs) override;
  /// The path the last save went to ("" before any).
  const std::string& last_saved() const { return last_saved_; }

 private:
  void save(int epoch, std::optional<std::int64_t> batch, const Logs& logs);
  std::string filepath_;
  ModelCheckpointOptions o_;
  Monitor monitor_;
  double best_;
  int epoch_ = 0;
  std::string last_saved_;
};

/// Formats a Keras filepath template: {epoch:02d} (1-based), {batch}, and any log key, e.g. {val_loss:.4f}.
std::string format_filepath(const std::string& pattern, int epoch, std::optional<std::int64_t> batch, const Logs& logs);

/// BackupAndRestore's settings, with Keras' names and defaults.
struct BackupAndRestoreOptions {
  /// Back up at each epoch's end, or every N batches.
  Frequency save_freq = "epoch";
  /// Delete the backup when fit() runs to its end (an interrupted fit() keeps it to resume).
  bool delete_checkpoint = true;
};

/// Keras' BackupAndRestore: backs up the weights, optimizer and position in fit(), so that a
/// fit() interrupted and run again resumes exactly where the last backup was taken.
class BackupAndRestore : public Callback {
 public:
  /// Keeps the backup in `backup_dir`.
  explicit BackupAndRestore(std::string backup_dir, BackupAndRestoreOptions options = {});
  void on_train_begin(const Logs& logs) override;
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;
  /// The backup file: backup_dir/latest.weights.h5.
  std::string checkpoint_path() const;
  /// Whether the last fit() started from a backup.
  bool restored() const { return restored_; }

 private:
  void backup(const detail::ResumePoint& point);
  std::string dir_;
  BackupAndRestoreOptions o_;
  bool restored_ = false;
};

}  // namespace kerascpp::callbacks
