#include "kerascpp/training/sidecar_evaluator.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>
#include <tuple>

#include "check.hpp"
#include "io/event_file_writer.hpp"
#include "io/keras_archive.hpp"
#include "io/model_weights.hpp"
#include "io/weights_image.hpp"
#include "kerascpp/core/session.hpp"

namespace kerascpp {
namespace fs = std::filesystem;

namespace {

bool name_ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// What ModelCheckpoint and BackupAndRestore write. Names starting with '.' are write_atomically's
// temporary files (io/atomic_file.cpp): a checkpoint gets its real name only once it is complete,
// so a file with a checkpoint's name is never half written and the dot names are never read.
bool is_checkpoint_name(const std::string& name) {
  return !name.empty() && name[0] != '.' && (name_ends_with(name, ".weights.h5") || name_ends_with(name, ".keras"));
}

struct Stamped {
  std::string name;
  std::string stamp;  // changes when the file is replaced (rename: new inode) or rewritten
  std::int64_t mtime_ns = 0;
};

std::optional<Stamped> stamp_of(const fs::path& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const std::int64_t mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return Stamped{
      path.filename().string(),
      fmt::format("{}:{}:{}", mtime_ns, static_cast<long long>(st.st_size), static_cast<unsigned long long>(st.st_ino)),
      mtime_ns};
}

}  // namespace

SidecarEvaluator::SidecarEvaluator(Model model, Dataset data, std::string checkpoint_dir,
                                   SidecarEvaluatorOptions options)
    : model_(std::move(model)), data_(std::move(data)), dir_(std::move(checkpoint_dir)), o_(std::move(options)) {
  KERASCPP_CHECK_VALUE(!dir_.empty(),
                       "SidecarEvaluator: checkpoint_dir must not be empty; pass the folder the "
                       "chief's ModelCheckpoint or BackupAndRestore writes to");
  KERASCPP_CHECK_STATE(model_.compiled(),
                       "SidecarEvaluator: the model is not compiled; compile() it with the loss and metrics to "
                       "report (as the chief's model) before building the evaluator");
  KERASCPP_CHECK_VALUE(o_.steps == -1 || o_.steps > 0,
                       "SidecarEvaluator: steps must be -1 (the whole dataset) or > 0, "
                       "got {}",
                       o_.steps);
  KERASCPP_CHECK_VALUE(!o_.max_evaluations || *o_.max_evaluations > 0,
                       "SidecarEvaluator: max_evaluations must be > 0 (leave it unset for no limit), got {}",
                       o_.max_evaluations.value_or(0));
  KERASCPP_CHECK_VALUE(std::isfinite(o_.poll_interval) && o_.poll_interval > 0,
                       "SidecarEvaluator: poll_interval must be a positive number of seconds, got {}",
                       o_.poll_interval);
  KERASCPP_CHECK_VALUE(!o_.idle_timeout || (std::isfinite(*o_.idle_timeout) && *o_.idle_timeout >= 0),
                       "SidecarEvaluator: idle_timeout must be >= 0 seconds (leave it unset to wait forever), got {}",
                       o_.idle_timeout.value_or(0));
}

SidecarEvaluator::~SidecarEvaluator() = default;

std::vector<std::pair<std::string, std::string>> SidecarEvaluator::new_checkpoints() const {
  std::vector<Stamped> found;
  std::error_code ec;
  // The directory may not exist yet: the chief creates it at its first save.
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!is_checkpoint_name(name)) continue;
    auto s = stamp_of(it->path());
    if (!s) continue;  // removed meanwhile, or not a regular file
    auto seen = seen_.find(name);
    if (seen == seen_.end() || seen->second != s->stamp) found.push_back(*s);
  }
  // Oldest first: the order the chief wrote them in (names break ties of coarse clocks).
  std::sort(found.begin(), found.end(), [](const Stamped& a, const Stamped& b) {
    return std::tie(a.mtime_ns, a.name) < std::tie(b.mtime_ns, b.name);
  });
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& s : found) out.emplace_back(s.name, s.stamp);
  return out;
}

bool SidecarEvaluator::evaluate(const std::string& name, const std::string& stamp) {
  const std::string path = (fs::path(dir_) / name).string();
  CheckpointEvaluation e;
  e.path = path;
  // Keep the file's tensors to read its iteration count; the model is changed only when all fits.
  const auto observing = [&](io::WeightsReader read) -> io::WeightsReader {
    return [&, read](const io::LayoutCheck& check) {
      io::WeightsFile file = read(check);
      e.step = io::stored_iterations(model_, file);
      return file;
    };
  };
  try {
    std::optional<io::TrainingCheckpoint> cp;
    if (name_ends_with(name, ".keras")) {
      const io::KerasArchive archive = io::read_keras_archive(path);
      const std::string inner = path + "/model.weights.h5";
      cp = io::load_model_weights(model_, inner, observing(io::weights_image_reader(archive.weights_h5, inner)));
    } else {
      cp = io::load_model_weights(
          model_, path, observing([&](const io::LayoutCheck& check) { return io::read_weights_file(path, check); }));
    }
    if (cp) e.epoch = cp->position.epoch;
  } catch (const Error&) {
    // Replaced or removed while being read (BackupAndRestore rewrites latest.weights.h5 every
    // epoch and deletes it at the end): the new version, if any, is picked up at the next look.
    auto now = stamp_of(path);
    if (!now || now->stamp != stamp) return false;
    throw;  // the file as it stands does not fit the model: say so (the error names the file)
  }
  EvaluateOptions eval;
  eval.steps = o_.steps;
  eval.callbacks = o_.callbacks;
  eval.verbose = 0;  // one line per checkpoint instead (report)
  e.logs = model_.evaluate(data_, eval);
  seen_[name] = stamp;
  evaluations_.push_back(std::move(e));
  report(evaluations_.back());
  return true;
}

void SidecarEvaluator::report(const CheckpointEvaluation& e) {
  if (!o_.log_dir.empty()) {
    if (!validation_) {
      try {
        validation_ = std::make_shared<io::EventFileWriter>((fs::path(o_.log_dir) / "validation").string());
      } catch (const IOError& err) {
        throw IOError(fmt::format("SidecarEvaluator log_dir '{}': {}", o_.log_dir, err.what()));
      }
    }
    // TensorBoard's tag for evaluations outside fit, at the training step of the checkpoint; a
    // file without optimizer state has no step, so its place in the sequence stands in.
    const std::int64_t step = e.step.value_or(static_cast<std::int64_t>(evaluations_.size()));
    for (auto& [k, v] : e.logs) validation_->add_scalar("evaluation_" + k + "_vs_iterations", v, step);
    validation_->flush();
  }
  if (o_.verbose <= 0) return;
  std::string line = fmt::format("SidecarEvaluator: evaluated '{}'", e.path);
  if (e.step) line += fmt::format(" (step {}", *e.step);
  if (e.epoch) line += fmt::format("{}{} epochs done", e.step ? ", " : " (", *e.epoch);
  if (e.step || e.epoch) line += ")";
  std::string sep = ": ";
  for (auto& [k, v] : e.logs) {
    line += fmt::format("{}{}: {:.4f}", sep, k, v);
    sep = " - ";
  }
  output() << line << '\n' << std::flush;
}

void SidecarEvaluator::start() {
  using clock = std::chrono::steady_clock;
  auto last_new = clock::now();
  const auto poll = std::chrono::duration<double>(o_.poll_interval);
  while (!stop_) {
    for (const auto& [name, stamp] : new_checkpoints()) {
      if (stop_) return;
      if (!evaluate(name, stamp)) continue;
      last_new = clock::now();
      if (o_.max_evaluations && static_cast<int>(evaluations_.size()) >= *o_.max_evaluations) return;
    }
    if (o_.idle_timeout && clock::now() - last_new >= std::chrono::duration<double>(*o_.idle_timeout)) {
      if (o_.verbose > 0)
        output() << fmt::format(
                        "SidecarEvaluator: no new checkpoint in '{}' for {} s; stopping after {} evaluation(s)\n", dir_,
                        *o_.idle_timeout, evaluations_.size())
                 << std::flush;
      return;
    }
    // Sleep in short slices so that request_stop() is seen promptly.
    const auto wake = clock::now() + std::chrono::duration_cast<clock::duration>(poll);
    while (!stop_ && clock::now() < wake)
      std::this_thread::sleep_for(std::min<clock::duration>(wake - clock::now(), std::chrono::milliseconds(20)));
  }
}

}  // namespace kerascpp
