#include "kerascpp/session.hpp"

#include <fmt/format.h>

#include <atomic>
#include <iostream>

#include <unistd.h>

#include "check.hpp"
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
