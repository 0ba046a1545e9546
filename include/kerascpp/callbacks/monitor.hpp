// Monitor: the "is this value better?" rule shared by EarlyStopping, ReduceLROnPlateau and
// ModelCheckpoint (Keras' mode "auto" maximises accuracy-like metrics and minimises the rest).
#pragma once
#include <cmath>
#include <limits>
#include <string>

#include "kerascpp/error.hpp"

namespace kerascpp::callbacks {

/// Whether a logged value improved: the rule EarlyStopping, ReduceLROnPlateau and ModelCheckpoint share.
class Monitor {
 public:
  /// Watches log key `name`; mode "auto", "min" or "max"; improvements must exceed |min_delta|.
  Monitor(std::string name, const std::string& mode, double min_delta) : name_(std::move(name)) {
    if (name_.empty()) throw ValueError("monitor is empty; name a logged value such as \"val_loss\" or \"accuracy\"");
    // NaN would make every comparison false (never an improvement); Inf, never one either.
    if (!std::isfinite(min_delta))
      throw ValueError("min_delta for monitor \"" + name_ + "\" must be a finite number, got " +
                       std::to_string(min_delta));
    if (mode == "min") maximize_ = false;
    else if (mode == "max") maximize_ = true;
    else if (mode == "auto") maximize_ = name_.find("acc") != std::string::npos || name_.rfind("fmeasure", 0) == 0;
    else throw ValueError("mode must be \"auto\", \"min\" or \"max\", got \"" + mode + "\"");
    min_delta_ = std::fabs(min_delta) * (maximize_ ? 1 : -1);
  }
  /// The log key watched.
  const std::string& name() const { return name_; }
  /// Whether larger is better.
  bool maximize() const { return maximize_; }
  /// The value every real value improves on (-inf or +inf).
  double worst() const {
    return maximize_ ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  /// Whether `current` beats `reference` by more than min_delta.
  bool improved(double current, double reference) const {
    return maximize_ ? current - min_delta_ > reference : current - min_delta_ < reference;
  }

 private:
  std::string name_;
  bool maximize_ = false;
  double min_delta_ = 0;
};

}  // namespace kerascpp::callbacks
