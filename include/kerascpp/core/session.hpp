// Process-wide session settings, for notebooks and unit tests: where the library prints, the
// default verbosity of fit/evaluate/predict, and clear_session() (Keras'
// keras.backend.clear_session).
#pragma once
#include <iosfwd>
#include <optional>

namespace kerascpp {

// ---- output sink ----
/// Progress bars, Model::summary() and the callbacks' messages (EarlyStopping, ModelCheckpoint...)
/// go to one stream, std::cout unless set_output() names another. It is looked up on every write,
/// so a std::cout whose buffer is redirected (how a xeus kernel captures a cell's output) gets
/// them too. Warnings stay on std::cerr. The stream must outlive its use; not for concurrent
/// changes while a fit() is printing.
void set_output(std::ostream& out);
void reset_output();  ///< back to std::cout
/// The current sink (looked up on every write).
std::ostream& output();
/// Whether the sink is a live terminal (std::cout, still on the process' stdout, and a tty).
bool output_is_terminal();

/// How fit()'s progress bar (verbose=1) draws, chosen at each epoch's start.
enum class ProgressStyle {
  lines,     ///< one final line per epoch: a log file, a pipe, CI
  terminal,  ///< redrawn in place with a carriage return ('\\r') and the erase-line escape
  notebook,  ///< redrawn in place with a carriage return alone, the line padded with spaces: Jupyter's output
             ///< area honours carriage returns, not terminal escapes
};
/// KERASCPP_PROGRESS=live or lines forces it (live: `terminal` on a terminal, `notebook`
/// elsewhere); unset, a terminal gets `terminal`, a Jupyter kernel (JPY_PARENT_PID or
/// JPY_SESSION_NAME in the environment, which Jupyter sets for the kernels it starts) gets
/// `notebook`, and anything else `lines`. ValueError for another KERASCPP_PROGRESS value.
ProgressStyle progress_style();

// ---- verbosity ----
/// The verbose level fit/evaluate/predict use when their options leave `verbose` unset: 0 silent,
/// 1 progress bar, 2 one line per epoch; ValueError otherwise. Until set (or after reset) Keras'
/// defaults apply: fit 1, evaluate 1, predict 0.
void set_default_verbose(int verbose);
/// Forgets set_default_verbose: Keras' per-call defaults apply again.
void reset_default_verbose();
/// The level set by set_default_verbose, or nullopt.
std::optional<int> default_verbose();

// ---- clear_session ----
/// Keras' clear_session(): automatic layer and model names start again ("dense", "sequential"),
/// the random seed stream restarts from the last set_random_seed() seed (from a fresh random seed
/// when none was set), and cached data (fashion_mnist::load()) is dropped. Models and tensors that
/// still exist keep working.
void clear_session();

}  // namespace kerascpp
