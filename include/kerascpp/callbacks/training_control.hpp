// Callbacks that steer training: EarlyStopping, ReduceLROnPlateau, LearningRateScheduler,
// TerminateOnNaN and LambdaCallback (Keras names, arguments and defaults).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kerascpp/callbacks/callback.hpp"
#include "kerascpp/callbacks/monitor.hpp"
#include "kerascpp/tensor.hpp"

namespace kerascpp::callbacks {

struct EarlyStoppingOptions {
  std::string monitor = "val_loss";
  double min_delta = 0;
  int patience = 0;
  std::string mode = "auto";
  std::optional<double> baseline{};
  bool restore_best_weights = false;
  int start_from_epoch = 0;
  int verbose = 0;
};

class EarlyStopping : public Callback {
 public:
  explicit EarlyStopping(EarlyStoppingOptions options = {});
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;
  int stopped_epoch() const { return stopped_epoch_; }
  int best_epoch() const { return best_epoch_; }

 private:
  EarlyStoppingOptions o_;
  Monitor monitor_;
  double best_ = 0;
  int wait_ = 0, stopped_epoch_ = 0, best_epoch_ = 0;
  std::vector<Tensor> best_weights_;
};

struct ReduceLROnPlateauOptions {
  std::string monitor = "val_loss";
  double factor = 0.1;
  int patience = 10;
  std::string mode = "auto";
  double min_delta = 1e-4;
  int cooldown = 0;
  double min_lr = 0;
  int verbose = 0;
};

class ReduceLROnPlateau : public Callback {
 public:
  explicit ReduceLROnPlateau(ReduceLROnPlateauOptions options = {});
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;

 private:
  ReduceLROnPlateauOptions o_;
  Monitor monitor_;
  double best_ = 0;
  int wait_ = 0, cooldown_counter_ = 0;
};

// Sets the learning rate at the start of each epoch to schedule(epoch, current_lr).
class LearningRateScheduler : public Callback {
 public:
  explicit LearningRateScheduler(std::function<double(int epoch, double lr)> schedule, int verbose = 0)
      : schedule_(std::move(schedule)), verbose_(verbose) {}
  void on_epoch_begin(int epoch, const Logs& logs) override;

 private:
  std::function<double(int, double)> schedule_;
  int verbose_;
};

// Stops training as soon as a batch loss is NaN or infinite.
class TerminateOnNaN : public Callback {
 public:
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override;
};

// Ad-hoc hooks from lambdas.
class LambdaCallback : public Callback {
 public:
  std::function<void(int, const Logs&)> on_epoch_begin_fn, on_epoch_end_fn;
  std::function<void(std::int64_t, const Logs&)> on_train_batch_begin_fn, on_train_batch_end_fn;
  std::function<void(const Logs&)> on_train_begin_fn, on_train_end_fn;
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
