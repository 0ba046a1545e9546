// ScopedSession: what one test fixes (seed, thread budget, verbosity) and puts back afterwards.
#include <cstdlib>

#include "check.hpp"
#include "core/knobs.hpp"
#include "kerascpp/core/random.hpp"
#include "kerascpp/core/session.hpp"
#include "kerascpp/testing.hpp"

namespace kerascpp::testing {
namespace {
constexpr const char* kThreadsVariable = "KERASCPP_MAX_THREADS";  // read by every backend when it is made
}  // namespace

ScopedSession::ScopedSession(SessionOptions options) : options_(options) {
  KERASCPP_CHECK_VALUE(options.threads >= 0,
                       "ScopedSession: threads must be >= 0 (0 leaves the thread budget as it is), got {}",
                       options.threads);
  // The global stream has no getter for its state, so the scope draws the seed it will restore on
  // exit: the code after the scope sees a stream that depends only on the one before it.
  // TODO(issue 13): restore the exact state once kerascpp exposes the stream's state.
  previous_verbose_ = default_verbose();
  set_default_verbose(options.verbose);  // ValueError outside 0..2, before anything is changed
  seed_after_ = next_random_seed();
  set_random_seed(options.seed);
  if (options.threads > 0) {
    if (const char* previous = ::kerascpp::detail::knob(kThreadsVariable)) previous_threads_ = std::string(previous);
    ::setenv(kThreadsVariable, std::to_string(options.threads).c_str(), 1);
  }
}

ScopedSession::~ScopedSession() {
  if (options_.threads > 0) {
    if (previous_threads_) ::setenv(kThreadsVariable, previous_threads_->c_str(), 1);
    else ::unsetenv(kThreadsVariable);
  }
  set_random_seed(seed_after_);
  if (previous_verbose_) set_default_verbose(*previous_verbose_);
  else reset_default_verbose();
}

}  // namespace kerascpp::testing
