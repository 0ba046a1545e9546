// Callback: Keras' hook interface. Hooks receive globally aggregated logs (over every replica);
// the model — its optimizer, learning rate and stop_training flag — is reachable via model().
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kerascpp/core/session.hpp"
#include "kerascpp/training/logs.hpp"

namespace kerascpp {
class Model;
}

/// Keras' callbacks: hooks called around training, evaluation and prediction.
namespace kerascpp::callbacks {

/// Keras' hook interface: override the hooks you need; logs are aggregated over every replica.
class Callback {
 public:
  /// Destroys the callback.
  virtual ~Callback() = default;
  /// Binds the model being trained (fit/evaluate/predict do, before the first hook).
  void set_model(Model* model) { model_ = model; }
  /// The model being trained; StateError before set_model.
  Model& model() const;

  /// At the start of fit().
  virtual void on_train_begin(const Logs& /*logs*/) {}
  /// At the end of fit() (the logs are empty, as Keras 3's).
  virtual void on_train_end(const Logs& /*logs*/) {}
  /// Before epoch `epoch` (from 0).
  virtual void on_epoch_begin(int /*epoch*/, const Logs& /*logs*/) {}
  /// After epoch `epoch`, with its logs (validation's "val_" keys included).
  virtual void on_epoch_end(int /*epoch*/, const Logs& /*logs*/) {}
  /// Before training batch `batch` of the epoch (from 0).
  virtual void on_train_batch_begin(std::int64_t /*batch*/, const Logs& /*logs*/) {}
  /// After training batch `batch`, with the running means of the epoch so far.
  virtual void on_train_batch_end(std::int64_t /*batch*/, const Logs& /*logs*/) {}
  /// At the start of evaluate() (and of fit()'s validation).
  virtual void on_test_begin(const Logs& /*logs*/) {}
  /// At the end of evaluate(), with its logs.
  virtual void on_test_end(const Logs& /*logs*/) {}
  /// Before evaluation batch `batch`.
  virtual void on_test_batch_begin(std::int64_t /*batch*/, const Logs& /*logs*/) {}
  /// After evaluation batch `batch`, with the running means so far.
  virtual void on_test_batch_end(std::int64_t /*batch*/, const Logs& /*logs*/) {}
  /// At the start of predict().
  virtual void on_predict_begin(const Logs& /*logs*/) {}
  /// At the end of predict().
  virtual void on_predict_end(const Logs& /*logs*/) {}
  /// Before prediction batch `batch`.
  virtual void on_predict_batch_begin(std::int64_t /*batch*/, const Logs& /*logs*/) {}
  /// After prediction batch `batch`.
  virtual void on_predict_batch_end(std::int64_t /*batch*/, const Logs& /*logs*/) {}

 private:
  Model* model_ = nullptr;
};

/// Shared handle so `.callbacks = {ModelCheckpoint(...), TensorBoard(...)}` takes values or shared_ptrs.
class CallbackRef {
 public:
  template <class C, class = std::enable_if_t<std::is_base_of_v<Callback, C>>>
  /// Holds a copy of `cb`.
  CallbackRef(C cb) : cb_(std::make_shared<C>(std::move(cb))) {}  // NOLINT: implicit by design
  template <class C, class = std::enable_if_t<std::is_base_of_v<Callback, C>>>
  /// Shares `cb` (to read its state after fit()).
  CallbackRef(std::shared_ptr<C> cb) : cb_(std::move(cb)) {}  // NOLINT
  /// The callback held.
  Callback* get() const { return cb_.get(); }
  /// The callback's members.
  Callback* operator->() const { return cb_.get(); }

 private:
  std::shared_ptr<Callback> cb_;
};

/// Keras' History: per-epoch values of every log key, returned by fit().
class History : public Callback {
 public:
  /// Log key -> one value per epoch ("loss", "val_accuracy", ...).
  std::map<std::string, std::vector<double>> history;
  /// The epoch numbers the values belong to (from 0).
  std::vector<int> epoch;
  /// Appends the epoch's logs.
  void on_epoch_end(int e, const Logs& logs) override;
};

/// Keras-style progress: verbose 1 = a bar redrawn per batch, 2 = one line per epoch. fit() and
/// evaluate() each use their own instance (validation inside fit is silent). Writes to
/// kerascpp::output() (session.hpp); the bar redraws only when that is a terminal, otherwise
/// verbose 1 prints each epoch's final line.
class ProgbarLogger : public Callback {
 public:
  /// 0 silent, 1 progress bar, 2 one line per epoch.
  explicit ProgbarLogger(int verbose = 1) : verbose_(verbose) {}
  /// The totals the bar counts to (steps -1: unknown).
  void set_params(int epochs, std::int64_t steps) {
    epochs_ = epochs;
    steps_ = steps;
  }
  void on_epoch_begin(int epoch, const Logs& logs) override;
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_test_begin(const Logs& logs) override;
  void on_test_batch_end(std::int64_t batch, const Logs& logs) override;
  void on_test_end(const Logs& logs) override;
  /// The number of evaluation batches the bar counts to (-1: unknown).
  void set_test_steps(std::int64_t steps) { test_steps_ = steps; }

 private:
  void render(std::int64_t done, std::int64_t total, const Logs& logs, bool final_line);
  int verbose_;
  int epochs_ = 1;
  std::int64_t steps_ = -1, test_steps_ = -1;
  double start_ = 0, last_render_ = 0;
  std::int64_t seen_ = 0;                       // batches run in the current epoch
  std::int64_t test_seen_ = 0;                  // batches run in the current evaluate() (its length may be unknown)
  ProgressStyle style_ = ProgressStyle::lines;  // how the bar redraws (progress_style(), looked up per epoch)
  std::size_t drawn_width_ = 0;                 // the length of the line last redrawn in place
};

}  // namespace kerascpp::callbacks
