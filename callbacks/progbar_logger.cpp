#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ostream>

#include "kerascpp/callbacks/callback.hpp"
#include "kerascpp/core/session.hpp"

namespace kerascpp::callbacks {
namespace {

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string format_logs(const Logs& logs) {
  std::string s;
  for (auto& [k, v] : logs) s += fmt::format(" - {}: {:.4f}", k, v);
  return s;
}

std::string format_duration(double seconds) {
  return seconds >= 1 ? fmt::format("{:.0f}s", seconds) : fmt::format("{:.0f}ms", seconds * 1000);
}

}  // namespace

void ProgbarLogger::render(std::int64_t done, std::int64_t total, const Logs& logs, bool final_line) {
  // Like Keras: redraw at most every 50 ms, and only on a terminal or in a notebook
  // (progress_style()); logs and pipes get the final line.
  const bool interactive = style_ != ProgressStyle::lines;
  double now = now_seconds();
  if (!final_line && (!interactive || now - last_render_ < 0.05)) return;
  last_render_ = now;
  double elapsed = now - start_;
  double per_step = done > 0 ? elapsed / static_cast<double>(done) : 0;
  std::string bar;
  if (total > 0) {
    constexpr int kWidth = 30;
    int filled = static_cast<int>(kWidth * done / total);
    bar = fmt::format(
        "{}/{} [{}{}{}]", done, total, std::string(static_cast<std::size_t>(std::max(0, filled - 1)), '='),
        filled > 0 ? (done == total ? "=" : ">") : "", std::string(static_cast<std::size_t>(kWidth - filled), '.'));
  } else {
    bar = fmt::format("{}/Unknown", done);
  }
  std::string timing =
      final_line
          ? fmt::format(" - {} {}/step", format_duration(elapsed), format_duration(per_step))
          : fmt::format(" - ETA: {}", total > 0 ? format_duration(per_step * double(total - done)) : std::string("?"));
  std::string line = bar + timing + format_logs(logs);
  std::string erase;
  if (style_ == ProgressStyle::terminal) {
    erase = "\033[K";
  } else if (style_ == ProgressStyle::notebook && line.size() < drawn_width_) {
    // Jupyter's output area knows '\r' but not the erase-line escape: blanks cover the rest of a
    // longer line drawn before.
    erase.assign(drawn_width_ - line.size(), ' ');
  }
  drawn_width_ = final_line ? 0 : line.size();
  output() << (interactive ? "\r" : "") << line << erase << (final_line ? "\n" : "") << std::flush;
}

void ProgbarLogger::on_epoch_begin(int epoch, const Logs&) {
  seen_ = 0;
  if (verbose_ <= 0) return;
  style_ = progress_style();
  drawn_width_ = 0;
  output() << fmt::format("Epoch {}/{}\n", epoch + 1, epochs_) << std::flush;
  start_ = now_seconds();
}

void ProgbarLogger::on_train_batch_end(std::int64_t batch, const Logs& logs) {
  seen_ = batch + 1;
  if (verbose_ == 1) render(batch + 1, steps_, logs, false);
}

void ProgbarLogger::on_epoch_end(int, const Logs& logs) {
  if (verbose_ <= 0) return;
  if (verbose_ == 1) {
    // The steps actually run: an epoch can end early (stop_training, a short dataset).
    render(seen_, steps_ > 0 ? std::max(steps_, seen_) : seen_, logs, true);
  } else {
    output() << format_duration(now_seconds() - start_) << format_logs(logs) << "\n" << std::flush;
  }
}

void ProgbarLogger::on_test_begin(const Logs&) {
  test_seen_ = 0;
  style_ = verbose_ > 0 ? progress_style() : ProgressStyle::lines;
  drawn_width_ = 0;
  start_ = now_seconds();
}

void ProgbarLogger::on_test_batch_end(std::int64_t batch, const Logs& logs) {
  test_seen_ = batch + 1;
  if (verbose_ == 1) render(batch + 1, test_steps_, logs, false);
}

void ProgbarLogger::on_test_end(const Logs& logs) {
  if (verbose_ <= 0) return;
  // As on_epoch_end: the batches actually run, so a dataset of unknown length ends on "N/N"
  // (Keras' final count) instead of the "0/Unknown" an unknown step count gave.
  if (verbose_ == 1) render(test_seen_, test_steps_ > 0 ? std::max(test_steps_, test_seen_) : test_seen_, logs, true);
  else output() << format_duration(now_seconds() - start_) << format_logs(logs) << "\n" << std::flush;
}

}  // namespace kerascpp::callbacks
