// Frequency: Keras' `"epoch"` or an integer number of batches, for save_freq / update_freq.
#pragma once
#include <cstdint>
#include <string>

#include "kerascpp/error.hpp"

namespace kerascpp::callbacks {

/// Keras' save_freq / update_freq: "epoch", "batch" or a positive number of batches.
class Frequency {
 public:
  /// @{
  /// "epoch" or "batch" (every batch); anything else is a ValueError.
  Frequency(const char* s) : Frequency(std::string(s)) {}  // NOLINT: implicit like Keras strings
  Frequency(const std::string& s) {                        // NOLINT
    if (s == "epoch") batches_ = 0;
    else if (s == "batch") batches_ = 1;
    else throw ValueError("frequency must be \"epoch\", \"batch\" or a positive number of batches, got \"" + s + "\"");
  }
  /// @}
  /// @{
  /// Every `batches` batches; ValueError unless positive.
  Frequency(std::int64_t batches) : batches_(batches) {  // NOLINT
    if (batches <= 0) throw ValueError("frequency in batches must be positive, got " + std::to_string(batches));
  }
  Frequency(int batches) : Frequency(static_cast<std::int64_t>(batches)) {}  // NOLINT
  /// @}
  /// True for "epoch".
  bool per_epoch() const { return batches_ == 0; }
  /// The number of batches between events; 0 for "epoch".
  std::int64_t batches() const { return batches_; }

 private:
  std::int64_t batches_ = 0;
};

}  // namespace kerascpp::callbacks
