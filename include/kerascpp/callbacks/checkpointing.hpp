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

struct ModelCheckpointOptions {
  std::string monitor = "val_loss";
  std::string mode = "auto";
  bool save_best_only = false;
  // true: weights + optimizer state in a .weights.h5 file; false: the whole model in a .keras
  // archive (Model::save), which kerascpp::load_model and Python Keras' load_model read.
  bool save_weights_only = true;
  Frequency save_freq = "epoch";
  std::optional<double> initial_value_threshold{};
  int verbose = 0;
};

class ModelCheckpoint : public Callback {
 public:
  explicit ModelCheckpoint(std::string filepath, ModelCheckpointOptions options = {});
  void on_train_begin(const Logs& logs) override;
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override;
  void on_epoch_begin(int epoch, const Logs& /*logs*/) override { epoch_ = epoch; }
  void on_epoch_end(int epoch, const Logs& logs) override;
  // The path the last save went to ("" before any).
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

// Formats a Keras filepath template: {epoch:02d} (1-based), {batch}, and any log key, e.g. {val_loss:.4f}.
std::string format_filepath(const std::string& pattern, int epoch, std::optional<std::int64_t> batch, const Logs& logs);

struct BackupAndRestoreOptions {
  Frequency save_freq = "epoch";
  bool delete_checkpoint = true;
};

class BackupAndRestore : public Callback {
 public:
  explicit BackupAndRestore(std::string backup_dir, BackupAndRestoreOptions options = {});
  void on_train_begin(const Logs& logs) override;
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;
  std::string checkpoint_path() const;
  bool restored() const { return restored_; }

 private:
  void backup(const detail::ResumePoint& point);
  std::string dir_;
  BackupAndRestoreOptions o_;
  bool restored_ = false;
};

}  // namespace kerascpp::callbacks
