#include "io/h5_probe.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "core/knobs.hpp"
#include "io/h5_read.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::io::h5 {
namespace {

// The child's exit codes. Anything else (a signal, or a sanitizer's own exit code after its
// report) means libhdf5 or our reader crashed.
constexpr int kReadable = 0;
constexpr int kRefused = 3;  // a kerascpp::Error: the in-process read will raise it again, in full
constexpr int kOtherException = 4;

bool probe_enabled() {
  const char* v = ::kerascpp::detail::knob("KERASCPP_H5_PROBE");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

// Generous: reading a weights file is disk-bound, and a good file takes well under this.
std::chrono::milliseconds time_limit(const Source& source) {
  std::error_code ec;
  const auto bytes = source.image ? source.image->size() : std::filesystem::file_size(source.name, ec);
  return std::chrono::seconds(60) + std::chrono::milliseconds(ec ? 0 : bytes / (10 * 1024));  // + 100 s/GB
}

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
  throw IOError(
      fmt::format("cannot read weights file '{}': {} while parsing it in a probe process; the file is "
                  "corrupt (libhdf5 cannot read it safely): use another copy or re-save it",
                  path, what));
}

}  // namespace

void probe_in_child_process(const std::string& path) { probe_in_child_process(Source{path}); }

void probe_in_child_process(const Source& source) {
  const std::string& path = source.name;
  if (!probe_enabled()) return;
  const pid_t pid = fork();
  if (pid < 0) return;  // no process to spare: read in-process, as without the probe
  if (pid == 0) {
    // A crash here must end this process quietly: the program's own crash handlers (a test
    // framework's, a sanitizer's) would report a failure of the program, which lives on.
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) std::signal(sig, SIG_DFL);
    int code = kReadable;
    try {
      probe_hdf5(source);  // an in-memory image is in the child's copy of our memory too
    } catch (const Error&) { code = kRefused; } catch (...) {
      code = kOtherException;
    }
    _exit(code);  // no atexit handlers: the parent's libhdf5 and sanitizer state are not ours to tear down
  }
  const auto deadline = std::chrono::steady_clock::now() + time_limit(source);
  auto pause = std::chrono::microseconds(50);
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return;  // SIGCHLD ignored by the program: the child was reaped unseen
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      refuse(path, "libhdf5 did not finish within the time limit");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
  if (WIFSIGNALED(status))
    refuse(path, fmt::format("libhdf5 crashed (signal {}, {})", WTERMSIG(status), strsignal(WTERMSIG(status))));
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != kReadable && code != kRefused && code != kOtherException)
    refuse(path, fmt::format("the reader failed (exit status {}; a sanitizer report above says where)", code));
}

}  // namespace kerascpp::io::h5
