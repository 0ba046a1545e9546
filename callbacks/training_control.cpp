#include "kerascpp/callbacks/training_control.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <ostream>

#include "check.hpp"
#include "kerascpp/core/session.hpp"
#include "kerascpp/training/model.hpp"

namespace kerascpp::callbacks {
namespace {

// Keras warns and skips when the monitored value is missing; we do the same (once per epoch).
bool monitored(const Logs& logs, const Monitor& m, const char* who, double& value) {
  if (!logs.contains(m.name())) {
    std::fprintf(stderr, "%s: metric '%s' is not in the logs (available: %s); skipping\n", who, m.name().c_str(),
                 logs.keys_str().c_str());
    return false;
  }
  value = logs.at(m.name());
  return true;
}

}  // namespace

EarlyStopping::EarlyStopping(EarlyStoppingOptions o) : o_(std::move(o)), monitor_(o_.monitor, o_.mode, o_.min_delta) {
  KERASCPP_CHECK_VALUE(o_.patience >= 0, "EarlyStopping: patience must be >= 0 epochs, got {}", o_.patience);
  KERASCPP_CHECK_VALUE(o_.start_from_epoch >= 0, "EarlyStopping: start_from_epoch must be >= 0, got {}",
                       o_.start_from_epoch);
}

void EarlyStopping::on_train_begin(const Logs&) {
  wait_ = 0;
  stopped_epoch_ = 0;
  best_epoch_ = 0;
  best_ = monitor_.worst();
  best_weights_.clear();
}

void EarlyStopping::on_epoch_end(int epoch, const Logs& logs) {
  double current;
  if (epoch < o_.start_from_epoch || !monitored(logs, monitor_, "EarlyStopping", current)) return;
  if (o_.restore_best_weights && best_weights_.empty()) best_weights_ = model().get_weights();
  ++wait_;
  if (monitor_.improved(current, best_)) {
    best_ = current;
    best_epoch_ = epoch;
    if (o_.restore_best_weights) best_weights_ = model().get_weights();
    if (!o_.baseline || monitor_.improved(current, *o_.baseline)) {
      wait_ = 0;
      return;
    }
  }
  if (wait_ >= o_.patience && epoch > 0) {
    stopped_epoch_ = epoch;
    model().stop_training = true;
  }
}

void EarlyStopping::on_train_end(const Logs&) {
  if (stopped_epoch_ > 0 && o_.verbose > 0)
    output() << fmt::format("Epoch {}: early stopping\n", stopped_epoch_ + 1) << std::flush;
  if (o_.restore_best_weights && !best_weights_.empty() && stopped_epoch_ > 0) {
    if (o_.verbose > 0)
      output() << fmt::format("Restoring model weights from the end of the best epoch: {}.\n", best_epoch_ + 1)
               << std::flush;
    model().set_weights(best_weights_);
  }
}

ReduceLROnPlateau::ReduceLROnPlateau(ReduceLROnPlateauOptions o)
    : o_(std::move(o)), monitor_(o_.monitor, o_.mode, o_.min_delta) {
  // Keras refuses factor >= 1 only; 0, negative or NaN would zero, flip or poison the rate.
  KERASCPP_CHECK_VALUE(o_.factor > 0.0 && o_.factor < 1.0,
                       "ReduceLROnPlateau: factor must be in (0, 1) (it multiplies the learning rate), got {}",
                       o_.factor);
  KERASCPP_CHECK_VALUE(o_.patience >= 0, "ReduceLROnPlateau: patience must be >= 0 epochs, got {}", o_.patience);
  KERASCPP_CHECK_VALUE(o_.cooldown >= 0, "ReduceLROnPlateau: cooldown must be >= 0 epochs, got {}", o_.cooldown);
  KERASCPP_CHECK_VALUE(o_.min_lr >= 0.0 && std::isfinite(o_.min_lr),
                       "ReduceLROnPlateau: min_lr must be a finite number >= 0, got {}", o_.min_lr);
}

void ReduceLROnPlateau::on_train_begin(const Logs&) {
  best_ = monitor_.worst();
  wait_ = cooldown_counter_ = 0;
}

void ReduceLROnPlateau::on_epoch_end(int epoch, const Logs& logs) {
  double current;
  if (!monitored(logs, monitor_, "ReduceLROnPlateau", current)) return;
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    wait_ = 0;
  }
  if (monitor_.improved(current, best_)) {
    best_ = current;
    wait_ = 0;
  } else if (cooldown_counter_ <= 0 && ++wait_ >= o_.patience) {
    auto& opt = model().optimizer();
    double old_lr = opt.learning_rate();
    if (old_lr > o_.min_lr) {
      double new_lr = std::max(old_lr * o_.factor, o_.min_lr);
      opt.set_learning_rate(new_lr);
      if (o_.verbose > 0)
        output() << fmt::format("Epoch {}: ReduceLROnPlateau reducing learning rate to {:g}.\n", epoch + 1, new_lr)
                 << std::flush;
      cooldown_counter_ = o_.cooldown;
      wait_ = 0;
    }
  }
}

void LearningRateScheduler::on_epoch_begin(int epoch, const Logs&) {
  auto& opt = model().optimizer();
  double lr = schedule_(epoch, opt.learning_rate());
  KERASCPP_CHECK_VALUE(std::isfinite(lr), "LearningRateScheduler: the schedule returned {} at epoch {}", lr, epoch);
  opt.set_learning_rate(lr);
  if (verbose_ > 0)
    output() << fmt::format("Epoch {}: LearningRateScheduler setting learning rate to {:g}.\n", epoch + 1, lr)
             << std::flush;
}

// Keras: np.isnan(loss) or np.isinf(loss), with Keras's message plus the value.
void TerminateOnNaN::on_train_batch_end(std::int64_t batch, const Logs& logs) {
  if (!logs.contains("loss")) return;
  const double loss = logs.at("loss");
  if (std::isnan(loss) || std::isinf(loss)) {
    output() << fmt::format("Batch {}: Invalid loss, terminating training (loss is {})\n", batch,
                            std::isnan(loss) ? "NaN" : (loss > 0 ? "+Inf" : "-Inf"))
             << std::flush;
    model().stop_training = true;
  }
}

}  // namespace kerascpp::callbacks
