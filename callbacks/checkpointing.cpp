#include "kerascpp/callbacks/checkpointing.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <ostream>

#include "check.hpp"
#include "io/model_weights.hpp"
#include "kerascpp/core/session.hpp"
#include "training/training_position.hpp"

namespace kerascpp::callbacks {
namespace fs = std::filesystem;

namespace {

void make_parent_dirs(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  fs::create_directories(parent, ec);
  KERASCPP_CHECK_IO(!ec, "cannot create directory '{}' for '{}': {}; choose a writable location", parent.string(), path,
                    ec.message());
}

// A diverged run must not replace the last good file, nor stop because it cannot save: when a
// weight or optimizer slot is NaN/Inf, warns (naming the epoch and the variable) and says to skip.
bool finite_or_warn(const Model& model, const char* who, int epoch, const std::string& path, const char* kept) {
  auto bad = io::find_non_finite(model);
  if (!bad) return true;
  std::fprintf(stderr, "%s: epoch %d: not saving '%s': %s; %s (%s)\n", who, epoch + 1, path.c_str(), bad->c_str(), kept,
               io::kNonFiniteAdvice);
  return false;
}

}  // namespace

std::string format_filepath(const std::string& pattern, int epoch, std::optional<std::int64_t> batch,
                            const Logs& logs) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '{' && i + 1 < pattern.size() && pattern[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    if (c == '}' && i + 1 < pattern.size() && pattern[i + 1] == '}') {
      out += '}';
      ++i;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    auto close = pattern.find('}', i);
    KERASCPP_CHECK_VALUE(close != std::string::npos, "checkpoint filepath '{}': unclosed '{{'", pattern);
    std::string field = pattern.substr(i + 1, close - i - 1);
    std::string key = field.substr(0, field.find(':'));
    std::string spec = field.find(':') == std::string::npos ? "" : field.substr(field.find(':') + 1);
    std::string fmt_str = "{:" + spec + "}";
    try {
      if (key == "epoch") out += fmt::format(fmt::runtime(fmt_str), epoch + 1);
      else if (key == "batch" && batch) out += fmt::format(fmt::runtime(fmt_str), *batch + 1);
      else if (logs.contains(key)) out += fmt::format(fmt::runtime(fmt_str), logs.at(key));
      else
        throw ValueError(fmt::format("checkpoint filepath '{}': unknown key '{}'; available: epoch{}, {}", pattern, key,
                                     batch ? ", batch" : "", logs.keys_str()));
    } catch (const fmt::format_error& e) {
      throw ValueError(
          fmt::format("checkpoint filepath '{}': bad format '{}' for key '{}': {}", pattern, spec, key, e.what()));
    }
    i = close;
  }
  return out;
}

ModelCheckpoint::ModelCheckpoint(std::string filepath, ModelCheckpointOptions o)
    : filepath_(std::move(filepath)), o_(std::move(o)), monitor_(o_.monitor, o_.mode, 0) {
  best_ = o_.initial_value_threshold ? *o_.initial_value_threshold : monitor_.worst();
  // As Keras 3: weights-only checkpoints are .weights.h5 files, whole models .keras archives.
  const std::string suffix = o_.save_weights_only ? ".weights.h5" : ".keras";
  KERASCPP_CHECK_VALUE(
      filepath_.size() >= suffix.size() && !filepath_.compare(filepath_.size() - suffix.size(), suffix.size(), suffix),
      "ModelCheckpoint: filepath '{}' must end in '{}' with save_weights_only = {} (Keras 3 "
      "writes {} there)",
      filepath_, suffix, o_.save_weights_only, o_.save_weights_only ? "weights files" : "whole-model .keras archives");
}

void ModelCheckpoint::on_train_begin(const Logs&) {
  // Fail before training, not after the first epoch, when the template has an unknown key.
  Logs probe;
  const std::vector<std::string> names = model().metrics_names();  // "loss", then the metrics
  probe.set("loss", 0);
  for (std::size_t i = 1; i < names.size(); ++i) probe.set(names[i], 0), probe.set("val_" + names[i], 0);
  probe.set("val_loss", 0);
  probe.set("learning_rate", 0);
  format_filepath(filepath_, 0, o_.save_freq.per_epoch() ? std::nullopt : std::optional<std::int64_t>(0), probe);
}

void ModelCheckpoint::save(int epoch, std::optional<std::int64_t> batch, const Logs& logs) {
  if (!model().distribute_strategy().is_chief()) return;  // the should_write seam: only the chief writes
  double current = 0;
  if (o_.save_best_only) {
    if (!logs.contains(o_.monitor)) {
      std::fprintf(stderr, "ModelCheckpoint: can save best model only with '%s' available (logs: %s); skipping\n",
                   o_.monitor.c_str(), logs.keys_str().c_str());
      return;
    }
    current = logs.at(o_.monitor);
    if (!monitor_.improved(current, best_)) return;
  }
  std::string path = format_filepath(filepath_, epoch, batch, logs);
  // Skipped saves do not count as the best: a later finite improvement must still beat the old best.
  if (!finite_or_warn(model(), "ModelCheckpoint", epoch, path, "earlier checkpoints stay as they were")) return;
  if (o_.save_best_only) {
    if (o_.verbose > 0)
      output() << fmt::format("Epoch {}: {} improved from {:.5f} to {:.5f}, saving model\n", epoch + 1, o_.monitor,
                              best_, current)
               << std::flush;
    best_ = current;
  }
  make_parent_dirs(path);
  if (o_.save_weights_only) model().save_weights(path);
  else model().save(path);  // atomic too
  last_saved_ = path;
}

void ModelCheckpoint::on_train_batch_end(std::int64_t batch, const Logs& logs) {
  if (o_.save_freq.per_epoch() || (batch + 1) % o_.save_freq.batches() != 0) return;
  save(epoch_, batch, logs);
}

void ModelCheckpoint::on_epoch_end(int epoch, const Logs& logs) {
  if (o_.save_freq.per_epoch()) save(epoch, std::nullopt, logs);
}

BackupAndRestore::BackupAndRestore(std::string backup_dir, BackupAndRestoreOptions o)
    : dir_(std::move(backup_dir)), o_(o) {
  KERASCPP_CHECK_VALUE(!dir_.empty(), "BackupAndRestore: backup_dir must not be empty");
}

std::string BackupAndRestore::checkpoint_path() const { return (fs::path(dir_) / "latest.weights.h5").string(); }

void BackupAndRestore::on_train_begin(const Logs&) {
  restored_ = false;
  if (!fs::exists(checkpoint_path())) return;
  auto cp = io::load_model_weights(model(), checkpoint_path());
  KERASCPP_CHECK_IO(cp,
                    "BackupAndRestore: '{}' holds weights but no training state; it was not written by "
                    "BackupAndRestore — remove it or use another backup_dir",
                    checkpoint_path());
  detail::training_position(model()).resume_at(cp->position);
  restored_ = true;
}

void BackupAndRestore::backup(const detail::ResumePoint& point) {
  if (!model().distribute_strategy().is_chief()) return;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  KERASCPP_CHECK_IO(!ec, "BackupAndRestore: cannot create '{}': {}", dir_, ec.message());
  io::save_model_weights(model(), checkpoint_path(), io::TrainingCheckpoint{point});
}

void BackupAndRestore::on_train_batch_end(std::int64_t batch, const Logs&) {
  if (o_.save_freq.per_epoch() || (batch + 1) % o_.save_freq.batches() != 0) return;
  const detail::ResumePoint& here = detail::training_position(model()).current();
  if (model().distribute_strategy().is_chief() &&
      !finite_or_warn(model(), "BackupAndRestore", here.epoch, checkpoint_path(), "the last backup stays as it was"))
    return;
  backup(here);
}

void BackupAndRestore::on_epoch_end(int epoch, const Logs&) {
  // Stopped by request_stop() or Ctrl-C: an interruption, which this callback exists for. The
  // epoch did not finish, so the backup is where training stopped, and a later fit() resumes there.
  const bool interrupted = model().stop_requested();
  if (!o_.save_freq.per_epoch() && !interrupted) return;
  if (model().distribute_strategy().is_chief() &&
      !finite_or_warn(model(), "BackupAndRestore", epoch, checkpoint_path(), "the last backup stays as it was"))
    return;
  const detail::ResumePoint& here = detail::training_position(model()).current();
  if (interrupted) {
    backup(here);
    return;
  }
  detail::ResumePoint next;  // the next thing to do is the start of the next epoch
  next.epoch = epoch + 1;
  next.totals = here.totals;  // sized for the metrics, then zeroed
  next.totals.zero();
  backup(next);
}

void BackupAndRestore::on_train_end(const Logs&) {
  // Training that was interrupted (request_stop, Ctrl-C) keeps its backup, like Keras' after an
  // exception; only training that ran to its end deletes it.
  if (o_.delete_checkpoint && !model().stop_requested() && model().distribute_strategy().is_chief()) {
    std::error_code ec;
    fs::remove(checkpoint_path(), ec);
  }
}

}  // namespace kerascpp::callbacks
