// Callback: Keras' hook interface. Hooks receive globally aggregated logs (over every replica);
// the model — its optimizer, learning rate and stop_training flag — is reachable via model().
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kerascpp/logs.hpp"

namespace kerascpp {
class Model;
}

namespace kerascpp::callbacks {

class Callback {
 public:
  virtual ~Callback() = default;
  void set_model(Model* model) { model_ = model; }
  Model& model() const;

  virtual void on_train_begin(const Logs& /*logs*/) {}
  virtual void on_train_end(const Logs& /*logs*/) {}
  virtual void on_epoch_begin(int /*epoch*/, const Logs& /*logs*/) {}
  virtual void on_epoch_end(int /*epoch*/, const Logs& /*logs*/) {}
  virtual void on_train_batch_begin(std::int64_t /*batch*/, const Logs& /*logs*/) {}
  virtual void on_train_batch_end(std::int64_t /*batch*/, const Logs& /*logs*/) {}
  virtual void on_test_begin(const Logs& /*logs*/) {}
  virtual void on_test_end(const Logs& /*logs*/) {}
  virtual void on_test_batch_begin(std::int64_t /*batch*/, const Logs& /*logs*/) {}
  virtual void on_test_batch_end(std::int64_t /*batch*/, const Logs& /*logs*/) {}
  virtual void on_predict_begin(const Logs& /*logs*/) {}
  virtual void on_predict_end(const Logs& /*logs*/) {}
  virtual void on_predict_batch_begin(std::int64_t /*batch*/, const Logs& /*logs*/) {}
  virtual void on_predict_batch_end(std::int64_t /*batch*/, const Logs& /*logs*/) {}

 private:
  Model* model_ = nullptr;
};

// Shared handle so `.callbacks = {ModelCheckpoint(...), TensorBoard(...)}` takes values or shared_ptrs.
class CallbackRef {
 public:
  template <class C, class = std::enable_if_t<std::is_base_of_v<Callback, C>>>
  CallbackRef(C cb) : cb_(std::make_shared<C>(std::move(cb))) {}  // NOLINT: implicit by design
  template <class C, class = std::enable_if_t<std::is_base_of_v<Callback, C>>>
  CallbackRef(std::shared_ptr<C> cb) : cb_(std::move(cb)) {}  // NOLINT
  Callback* get() const { return cb_.get(); }
  Callback* operator->() const { return cb_.get(); }

 private:
  std::shared_ptr<Callback> cb_;
};

// Keras' History: per-epoch values of every log key, returned by fit().
class History : public Callback {
 public:
  std::map<std::string, std::vector<double>> history;
  std::vector<int> epoch;
  void on_epoch_end(int e, const Logs& logs) override;
};

// Keras-style progress: verbose 1 = a bar redrawn per batch, 2 = one line per epoch. fit() and
// evaluate() each use their own instance (validation inside fit is silent). Writes to
// kerascpp::output() (session.hpp); the bar redraws only when that is a terminal, otherwise
// verbose 1 prints each epoch's final line.
class ProgbarLogger : public Callback {
 public:
  explicit ProgbarLogger(int verbose = 1) : verbose_(verbose) {}
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
  void set_test_steps(std::int64_t steps) { test_steps_ = steps; }

 private:
  void render(std::int64_t done, std::int64_t total, const Logs& logs, bool final_line);
  int verbose_;
  int epochs_ = 1;
  std::int64_t steps_ = -1, test_steps_ = -1;
  double start_ = 0, last_render_ = 0;
  std::int64_t seen_ = 0;       // batches run in the current epoch
  std::int64_t test_seen_ = 0;  // batches run in the current evaluate() (its length may be unknown)
  bool interactive_ = false;    // redraw in place: the output sink is a terminal (looked up per epoch)
};

}  // namespace kerascpp::callbacks
