#include "training/training_position.hpp"

namespace kerascpp::detail {

StepTotals& TrainingPosition::begin_epoch(int epoch) {
  current_.epoch = epoch;
  current_.step = 0;
  current_.totals = zero_;
  return current_.totals;
}

std::optional<ResumePoint> TrainingPosition::take_resume() {
  std::optional<ResumePoint> out = std::move(resume_);
  resume_.reset();
  return out;
}

}  // namespace kerascpp::detail
