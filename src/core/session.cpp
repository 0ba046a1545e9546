#include "kerascpp/core/session.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <unistd.h>

#include "check.hpp"
#include "core/knobs.hpp"
#include "core/session_state.hpp"

namespace kerascpp {
namespace {

std::atomic<std::ostream*> g_output{nullptr};  // null: std::cout
std::atomic<int> g_default_verbose{-1};        // -1: unset, Keras' per-call defaults

// std::cout's buffer when the library was loaded: the process' stdout. A kernel or a test that
// swaps the buffer later redirects std::cout somewhere that is not a terminal.
std::streambuf* const g_stdout_buffer = std::cout.rdbuf();

}  // namespace

void set_output(std::ostream& out) { g_output.store(&out); }
void reset_output() { g_output.store(nullptr); }

std::ostream& output() {
  std::ostream* out = g_output.load();
  return out ? *out : std::cout;
}

bool output_is_terminal() {
  return &output() == &std::cout && std::cout.rdbuf() == g_stdout_buffer && isatty(STDOUT_FILENO) != 0;
}

ProgressStyle progress_style() {
  const bool terminal = output_is_terminal();
  if (const char* forced = detail::knob("KERASCPP_PROGRESS")) {
    KERASCPP_CHECK_VALUE(std::strcmp(forced, "live") == 0 || std::strcmp(forced, "lines") == 0,
                         "KERASCPP_PROGRESS must be live (redraw the progress bar in place) or lines (one line "
                         "per epoch); got '{}'",
                         forced);
    if (std::strcmp(forced, "lines") == 0) return ProgressStyle::lines;
    return terminal ? ProgressStyle::terminal : ProgressStyle::notebook;
  }
  if (terminal) return ProgressStyle::terminal;
  // Jupyter's kernel launcher (jupyter_client) sets JPY_PARENT_PID for every kernel it starts,
  // Jupyter Server also JPY_SESSION_NAME; a kernel's stdout is a pipe, but the notebook's output
  // area redraws a line on '\r'. Not KERASCPP_ knobs: read as the markers they are.
  if (std::getenv("JPY_PARENT_PID") || std::getenv("JPY_SESSION_NAME")) return ProgressStyle::notebook;
  return ProgressStyle::lines;
}

void set_default_verbose(int verbose) {
  KERASCPP_CHECK_VALUE(
      verbose >= 0 && verbose <= 2,
      "set_default_verbose: verbose must be 0 (silent), 1 (progress bar) or 2 (one line per epoch); got {}", verbose);
  g_default_verbose.store(verbose);
}

void reset_default_verbose() { g_default_verbose.store(-1); }

std::optional<int> default_verbose() {
  int v = g_default_verbose.load();
  return v < 0 ? std::nullopt : std::optional<int>(v);
}

void clear_session() {
  detail::reset_unique_names();
  detail::restart_random_stream();
  detail::clear_dataset_cache();
}

}  // namespace kerascpp
