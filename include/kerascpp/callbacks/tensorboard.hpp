// TensorBoard: writes native event files under log_dir/train and log_dir/validation with the tags
// Keras uses (epoch_loss, epoch_accuracy, epoch_learning_rate, batch_*, evaluation_*_vs_iterations),
// weight histograms and the model config. Only the chief worker writes.
#pragma once
#include <memory>
#include <string>

#include "kerascpp/callbacks/callback.hpp"
#include "kerascpp/callbacks/frequency.hpp"

namespace kerascpp::io {
class EventFileWriter;
}

namespace kerascpp::callbacks {

/// TensorBoard's settings, with Keras' names and defaults.
struct TensorBoardOptions {
  /// Write scalars at each epoch's end, or every N batches as well (batch_* tags).
  Frequency update_freq = "epoch";
  int histogram_freq = 0;  ///< epochs between weight histograms; 0 = none
  /// Write the model's Keras config (TensorBoard's graph tab).
  bool write_graph = true;
};

/// Keras' TensorBoard: native event files with Keras' tags; only the chief worker writes.
class TensorBoard : public Callback {
 public:
  /// Writes under log_dir/train and log_dir/validation.
  explicit TensorBoard(std::string log_dir = "logs", TensorBoardOptions options = {});
  void on_train_begin(const Logs& logs) override;
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;

 private:
  std::string log_dir_;
  TensorBoardOptions options_;
  std::shared_ptr<io::EventFileWriter> train_, validation_;
};

}  // namespace kerascpp::callbacks
