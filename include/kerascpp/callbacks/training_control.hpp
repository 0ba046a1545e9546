// Callbacks that steer training: EarlyStopping, ReduceLROnPlateau, LearningRateScheduler,
// TerminateOnNaN and LambdaCallback (Keras names, arguments and defaults).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kerascpp/callbacks/callback.hpp"
#include "kerascpp/callbacks/monitor.hpp"
#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::callbacks {

/// EarlyStopping's settings, with Keras' names and defaults.
struct EarlyStoppingOptions {
  /// The log key watched.
  std::string monitor = "val_loss";
  /// The smallest change that counts as an improvement.
  double min_delta = 0;
  /// Epochs without improvement before training stops.
  int patience = 0;
  /// "auto", "min" or "max": whether smaller or larger `monitor` is better ("auto": larger for accuracies).
  std::string mode = "auto";
  /// A value `monitor` must beat; epochs that do not beat it count towards `patience`.
  std::optional<double> baseline{};
  /// On stopping, put back the weights of the best epoch.
  bool restore_best_weights = false;
  /// Epochs to train before watching starts (a warm-up).
  int start_from_epoch = 0;
  /// 1: print a line when it stops.
  int verbose = 0;
};

/// Keras' EarlyStopping: stops fit() when `monitor` has not improved for `patience` epochs.
class EarlyStopping : public Callback {
 public:
  /// Watches as `options` say.
  explicit EarlyStopping(EarlyStoppingOptions options = {});
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;
  /// The epoch training stopped after (from 0); 0 when it ran to the end.
  int stopped_epoch() const { return stopped_epoch_; }
  /// The epoch with the best `monitor` value (from 0).
  int best_epoch() const { return best_epoch_; }

 private:
  EarlyStoppingOptions o_;
  Monitor monitor_;
  double best_ = 0;
  int wait_ = 0, stopped_epoch_ = 0, best_epoch_ = 0;
  std::vector<Tensor> best_weights_;
};

/// ReduceLROnPlateau's settings, with Keras' names and defaults.
struct ReduceLROnPlateauOptions {
  /// The log key watched.
  std::string monitor = "val_loss";
  /// The learning rate is multiplied by this (< 1) on a plateau.
  double factor = 0.1;
  /// Epochs without improvement that make a plateau.
  int patience = 10;
  /// "auto", "min" or "max": whether smaller or larger `monitor` is better ("auto": larger for accuracies).
  std::string mode = "auto";
  /// The smallest change that counts as an improvement.
  double min_delta = 1e-4;
  /// Epochs to wait after a reduction before watching again.
  int cooldown = 0;
  /// The learning rate never goes below this.
  double min_lr = 0;
  /// 1: print a line for each reduction.
  int verbose = 0;
};

/// Keras' ReduceLROnPlateau: lowers the learning rate when `monitor` stops improving.
class ReduceLROnPlateau : public Callback {
 public:
  /// Watches as `options` say.
  explicit ReduceLROnPlateau(ReduceLROnPlateauOptions options = {});
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;

 private:
  ReduceLROnPlateauOptions o_;
  Monitor monitor_;
  double best_ = 0;
  int wait_ = 0, cooldown_counter_ = 0;
};

/// Sets the learning rate at the start of each epoch to schedule(epoch, current_lr).
class LearningRateScheduler : public Callback {
 public:
  /// Calls `schedule` before each epoch; verbose 1 prints the rate set.
  explicit LearningRateScheduler(std::function<double(int epoch, double lr)> schedule, int verbose = 0)
      : schedule_(std::move(schedule)), verbose_(verbose) {}
  void on_epoch_begin(int epoch, const Logs& logs) override;

 private:
  std::function<double(int, double)> schedule_;
  int verbose_;
};

/// Stops training as soon as a batch loss is NaN or infinite.
class TerminateOnNaN : public Callback {
 public:
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override;
};

/// Ad-hoc hooks from lambdas.
class LambdaCallback : public Callback {
 public:
  /// @{
  /// Called by the hook of the same name when set (Keras' on_epoch_begin=..., ...).
  std::function<void(int, const Logs&)> on_epoch_begin_fn, on_epoch_end_fn;
  std::function<void(std::int64_t, const Logs&)> on_train_batch_begin_fn, on_train_batch_end_fn;
  std::function<void(const Logs&)> on_train_begin_fn, on_train_end_fn;
  /// @}
  void on_epoch_begin(int e, const Logs& l) override {
    if (on_epoch_begin_fn) on_epoch_begin_fn(e, l);
  }
  void on_epoch_end(int e, const Logs& l) override {
    if (on_epoch_end_fn) on_epoch_end_fn(e, l);
  }
  void on_train_batch_begin(std::int64_t b, const Logs& l) override {
    if (on_train_batch_begin_fn) on_train_batch_begin_fn(b, l);
  }
  void on_train_batch_end(std::int64_t b, const Logs& l) override {
    if (on_train_batch_end_fn) on_train_batch_end_fn(b, l);
  }
  void on_train_begin(const Logs& l) override {
    if (on_train_begin_fn) on_train_begin_fn(l);
  }
  void on_train_end(const Logs& l) override {
    if (on_train_end_fn) on_train_end_fn(l);
  }
};

}  // namespace kerascpp::callbacks
