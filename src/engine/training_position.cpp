#include "engine/training_position.hpp"

namespace kerascpp::detail {

StepTotals& TrainingPosition::begin_epoch(int epoch, std::size_t metrics) {
  current_.epoch = epoch;
  current_.step = 0;
  current_.totals.reset(metrics);
  return current_.totals;
}

std::optional<ResumePoint> TrainingPosition::take_resume() {
  std::optional<ResumePoint> out = std::move(resume_);
  resume_.reset();
  return out;
}

}  // namespace kerascpp::detail
