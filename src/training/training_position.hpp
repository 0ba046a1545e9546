// Where fit() is — epoch, batches done, the epoch's running sums — owned by one small type, so
// that BackupAndRestore can save it and hand back a point to resume from without reaching into
// the rest of the model (its graph, compile settings or replicas).
#pragma once
#include <cstdint>
#include <optional>
#include <utility>

#include "training/step_totals.hpp"

namespace kerascpp {
class Model;
}

namespace kerascpp::detail {

// A point in a fit() run: what a BackupAndRestore checkpoint stores.
struct ResumePoint {
  int epoch = 0;
  std::int64_t step = 0;  // batches done in this epoch
  StepTotals totals;      // running sums of this epoch
};

class TrainingPosition {
 public:
  // The point reached so far (what a mid-epoch backup saves).
  const ResumePoint& current() const { return current_; }

  // fit(): epoch `epoch` starts with zeroed running sums sized for the compiled metrics.
  StepTotals& begin_epoch(int epoch);
  // compile(): the zero totals of the compiled metrics (their sizes tell a checkpoint's
  // running sums apart).
  void set_zero_totals(StepTotals zero) { zero_ = std::move(zero); }
  const StepTotals& zero_totals() const { return zero_; }
  // fit(): the running sums of the current epoch, and how many of its batches are done.
  StepTotals& totals() { return current_.totals; }
  void set_steps_done(std::int64_t steps) { current_.step = steps; }

  // A callback's on_train_begin (BackupAndRestore) asks fit() to continue an interrupted run.
  void resume_at(ResumePoint point) { resume_ = std::move(point); }
  // fit(): forgets a request left from an earlier run (before on_train_begin), then takes this
  // run's request (after it).
  void clear_resume() { resume_.reset(); }
  std::optional<ResumePoint> take_resume();

 private:
  ResumePoint current_;
  StepTotals zero_;
  std::optional<ResumePoint> resume_;
};

// The one internal door from a Model to its training position (Model befriends it): used by
// BackupAndRestore and the weights-file code, never part of the public API.
TrainingPosition& training_position(Model& model);

}  // namespace kerascpp::detail
