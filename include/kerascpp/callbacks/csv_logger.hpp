// CSVLogger: one row per epoch (epoch, then the log keys in alphabetical order, like Keras).
// The whole file is rewritten atomically each epoch, so a crash never leaves a torn row.
#pragma once
#include <string>
#include <vector>

#include "kerascpp/callbacks/callback.hpp"

namespace kerascpp::callbacks {

/// Keras' CSVLogger: one row per epoch (epoch, then the log keys alphabetically), rewritten atomically.
class CSVLogger : public Callback {
 public:
  /// Throws ValueError for an empty filename or a line-breaking separator, IOError when filename is a directory.
  explicit CSVLogger(std::string filename, char separator = ',', bool append = false);
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;

 private:
  std::string filename_;
  char separator_;
  bool append_;
  std::string text_;
  std::vector<std::string> keys_;
};

}  // namespace kerascpp::callbacks
