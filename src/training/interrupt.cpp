#include "training/interrupt.hpp"

#include <atomic>
#include <csignal>
#include <mutex>

#include <signal.h>

namespace kerascpp::detail {
namespace {

// Lock-free, so the handler may touch it (std::atomic<bool> is, on every platform we build for).
std::atomic<bool> g_received{false};
static_assert(std::atomic<bool>::is_always_lock_free);

std::mutex g_mu;
int g_live = 0;                    // guards alive (calls running, nested validation included)
bool g_installed = false;          // false when SIGINT was ignored: then it stays ignored
struct sigaction g_previous = {};  // written before the handler is installed, read by it

extern "C" void on_sigint(int) {
  if (g_received.load()) {
    // A second Ctrl-C while the first is still stopping: the previous handler decides (by default
    // the process ends). SIGINT is blocked while this runs, so the re-raised one reaches it on return.
    sigaction(SIGINT, &g_previous, nullptr);
    raise(SIGINT);
    return;
  }
  g_received.store(true);
}

}  // namespace

SigintGuard::SigintGuard() {
  std::lock_guard lock(g_mu);
  if (g_live++ > 0) return;
  g_received.store(false);
  struct sigaction current = {};
  sigaction(SIGINT, nullptr, &current);
  g_installed = current.sa_handler != SIG_IGN;  // a process started with SIGINT ignored keeps it so
  if (!g_installed) return;
  g_previous = current;
  struct sigaction mine = {};
  mine.sa_handler = on_sigint;
  sigemptyset(&mine.sa_mask);
  mine.sa_flags = SA_RESTART;  // a blocking read in a data pipeline is not cut short
  sigaction(SIGINT, &mine, nullptr);
}

SigintGuard::~SigintGuard() {
  std::lock_guard lock(g_mu);
  if (--g_live > 0) return;
  g_received.store(false);  // handled: Model::stop_requested() is false between calls
  if (!g_installed) return;
  sigaction(SIGINT, &g_previous, nullptr);
  g_installed = false;
}

bool sigint_received() { return g_received.load(); }

}  // namespace kerascpp::detail
