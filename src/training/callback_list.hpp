// CallbackList (Keras' CallbackList): the callbacks one fit/evaluate/predict call runs — its
// progress bar first, then the user's in the order given, then History — attached to the model
// for the call, each hook forwarded to every callback in that order.
#pragma once
#include <cstdint>
#include <vector>

#include "kerascpp/callbacks/callback.hpp"

namespace kerascpp::detail {

class CallbackList {
 public:
  // `first` (the progress bar) and `last` (History) are optional; the list points at every
  // callback and does not own any, so they must outlive it.
  CallbackList(Model& model, const std::vector<callbacks::CallbackRef>& user, callbacks::Callback* first = nullptr,
               callbacks::Callback* last = nullptr);
  // Lets go of the model (fit does at its end; evaluate inside fit must not, its callbacks are
  // still fit's).
  void detach();

  void on_train_begin(const Logs& logs) { each(&callbacks::Callback::on_train_begin, logs); }
  void on_train_end(const Logs& logs) { each(&callbacks::Callback::on_train_end, logs); }
  void on_epoch_begin(int epoch, const Logs& logs) { each(&callbacks::Callback::on_epoch_begin, epoch, logs); }
  void on_epoch_end(int epoch, const Logs& logs) { each(&callbacks::Callback::on_epoch_end, epoch, logs); }
  void on_train_batch_begin(std::int64_t batch, const Logs& logs) {
    each(&callbacks::Callback::on_train_batch_begin, batch, logs);
  }
  void on_train_batch_end(std::int64_t batch, const Logs& logs) {
    each(&callbacks::Callback::on_train_batch_end, batch, logs);
  }
  void on_test_begin(const Logs& logs) { each(&callbacks::Callback::on_test_begin, logs); }
  void on_test_end(const Logs& logs) { each(&callbacks::Callback::on_test_end, logs); }
  void on_test_batch_begin(std::int64_t batch, const Logs& logs) {
    each(&callbacks::Callback::on_test_batch_begin, batch, logs);
  }
  void on_test_batch_end(std::int64_t batch, const Logs& logs) {
    each(&callbacks::Callback::on_test_batch_end, batch, logs);
  }
  void on_predict_begin(const Logs& logs) { each(&callbacks::Callback::on_predict_begin, logs); }
  void on_predict_end(const Logs& logs) { each(&callbacks::Callback::on_predict_end, logs); }
  void on_predict_batch_begin(std::int64_t batch, const Logs& logs) {
    each(&callbacks::Callback::on_predict_batch_begin, batch, logs);
  }
  void on_predict_batch_end(std::int64_t batch, const Logs& logs) {
    each(&callbacks::Callback::on_predict_batch_end, batch, logs);
  }

  std::size_t size() const { return callbacks_.size(); }

 private:
  template <class... Params, class... Args>
  void each(void (callbacks::Callback::*hook)(Params...), const Args&... args) {
    for (callbacks::Callback* c : callbacks_) (c->*hook)(args...);
  }
  std::vector<callbacks::Callback*> callbacks_;
};

}  // namespace kerascpp::detail
