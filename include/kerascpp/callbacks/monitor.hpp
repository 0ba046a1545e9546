// Monitor: the "is this value better?" rule shared by EarlyStopping, ReduceLROnPlateau and
// ModelCheckpoint (Keras' mode "auto" maximises accuracy-like metrics and minimises the rest).
#pragma once
#include <cmath>
#include <limits>
#include <string>

#include "kerascpp/error.hpp"

namespace kerascpp::callbacks {

class Monitor {
 public:
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
  const std::string& name() const { return name_; }
  bool maximize() const { return maximize_; }
  double worst() const {
    return maximize_ ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  bool improved(double current, double reference) const {
    return maximize_ ? current - min_delta_ > reference : current - min_delta_ < reference;
  }

 private:
  std::string name_;
  bool maximize_ = false;
  double min_delta_ = 0;
};

}  // namespace kerascpp::callbacks
