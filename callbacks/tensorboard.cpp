#include "kerascpp/callbacks/tensorboard.hpp"

#include <filesystem>

#include "check.hpp"
#include "io/event_file_writer.hpp"
#include "kerascpp/training/model.hpp"
#include "path_checks.hpp"

namespace kerascpp::callbacks {

TensorBoard::TensorBoard(std::string log_dir, TensorBoardOptions options)
    : log_dir_(std::move(log_dir)), options_(options) {
  check_output_dir(log_dir_, "TensorBoard", "log_dir", "e.g. \"logs\"");
  KERASCPP_CHECK_VALUE(options_.histogram_freq >= 0,
                       "TensorBoard: histogram_freq must be >= 0 (epochs between weight histograms; 0: none), got {}",
                       options_.histogram_freq);
}

void TensorBoard::on_train_begin(const Logs&) {
  if (!model().distribute_strategy().is_chief()) return;  // only the chief writes
  namespace fs = std::filesystem;
  try {
    train_ = std::make_shared<io::EventFileWriter>((fs::path(log_dir_) / "train").string());
    validation_ = std::make_shared<io::EventFileWriter>((fs::path(log_dir_) / "validation").string());
  } catch (const IOError& e) {
    // The event writer names the file; this names the callback's argument the user wrote.
    train_.reset();
    throw IOError(fmt::format("TensorBoard log_dir '{}': {}", log_dir_, e.what()));
  }
  if (options_.write_graph) train_->add_keras_model_config(model().to_json(), 0);
  train_->flush();
}

void TensorBoard::on_train_batch_end(std::int64_t, const Logs& logs) {
  if (!train_ || options_.update_freq.per_epoch()) return;
  std::int64_t step = model().optimizer().iterations();
  if (step % options_.update_freq.batches() != 0) return;
  for (auto& [k, v] : logs) train_->add_scalar("batch_" + k, v, step);
}

void TensorBoard::on_epoch_end(int epoch, const Logs& logs) {
  if (!train_) return;
  std::int64_t iterations = model().optimizer().iterations();
  for (auto& [k, v] : logs) {
    if (k.rfind("val_", 0) == 0) {
      std::string name = k.substr(4);
      validation_->add_scalar("epoch_" + name, v, epoch);
      validation_->add_scalar("evaluation_" + name + "_vs_iterations", v, iterations);
    } else {
      train_->add_scalar("epoch_" + k, v, epoch);
    }
  }
  if (options_.histogram_freq > 0 && epoch % options_.histogram_freq == 0)
    for (Variable* var : model().variables()) {
      const Tensor t = var->value(0).to(Device{});  // a host copy when the replica is a GPU
      train_->add_histogram(var->path() + "/histogram", t.data<float>(), static_cast<std::size_t>(t.numel()), epoch);
    }
  train_->flush();
  validation_->flush();
}

void TensorBoard::on_train_end(const Logs&) {
  if (train_) train_->flush();
  if (validation_) validation_->flush();
  train_.reset();
  validation_.reset();
}

}  // namespace kerascpp::callbacks
