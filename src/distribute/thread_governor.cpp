#include "distribute/thread_governor.hpp"

#include "core/knobs.hpp"

#include <dirent.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace kerascpp::distribute {

namespace {

constexpr double kSampleSeconds = 0.1;
// Waiting for this many cores (summed over the process's threads) means the cores are taken.
constexpr double kWaitingCores = 0.5;
// An idle core: this much of one core idle over a sample.
constexpr double kIdleCores = 0.75;

}  // namespace

double ThreadGovernor::now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

// Σ over this process's threads of the nanoseconds spent runnable but not running.
bool read_run_queue_wait(double& seconds) {
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return false;
  double total = 0;
  bool any = false;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string path = std::string("/proc/self/task/") + entry->d_name + "/schedstat";
    if (std::FILE* f = std::fopen(path.c_str(), "r")) {
      unsigned long long on_cpu = 0, waited = 0;
      if (std::fscanf(f, "%llu %llu", &on_cpu, &waited) == 2) {
        total += static_cast<double>(waited) * 1e-9;
        any = true;
      }
      std::fclose(f);
    }
  }
  closedir(dir);
  seconds = total;
  return any;
}

// The machine's idle core-seconds: idle + iowait jiffies of the "cpu" line.
bool read_idle_core_seconds(double& seconds) {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (!f) return false;
  unsigned long long user, nice, system, idle, iowait;
  const bool ok = std::fscanf(f, "cpu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle, &iowait) == 5;
  std::fclose(f);
  static const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (!ok || tick <= 0) return false;
  seconds = static_cast<double>(idle + iowait) / tick;
  return true;
}

}  // namespace

ThreadGovernor::ThreadGovernor(int max_threads, int replicas, Probe probe, Clock clock)
    : max_threads_(std::max(1, max_threads)),
      replicas_(std::max(1, replicas)),
      threads_(max_threads_),
      probe_(std::move(probe)),
      clock_(std::move(clock)),
      last_(probe_()),
      verbose_(verbose_by_environment()) {}

bool ThreadGovernor::enabled_by_environment() {
  if (const char* set = ::kerascpp::detail::knob("KERASCPP_ADAPTIVE_THREADS")) return std::strcmp(set, "0") != 0;
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  return !(policy && strcasecmp(policy, "passive") == 0);
}

bool ThreadGovernor::verbose_by_environment() {
  const char* set = ::kerascpp::detail::knob("KERASCPP_ADAPTIVE_THREADS");
  return set && std::strcmp(set, "verbose") == 0;
}

CoreSample ThreadGovernor::read_core_sample() {
  CoreSample s;
  s.seconds = now_seconds();
  s.valid = read_run_queue_wait(s.waited_seconds) && read_idle_core_seconds(s.idle_cores_seconds);
  return s;
}

int ThreadGovernor::threads_for_next_step() {
  if (!last_.valid || max_threads_ == 1) return threads_;
  // The clock first: reading /proc takes tens of microseconds, as long as a batch-1 prediction.
  if (clock_() - last_.seconds < kSampleSeconds) return threads_;
  CoreSample now = probe_();
  const double span = now.seconds - last_.seconds;
  if (!now.valid || span < kSampleSeconds) return threads_;
  const double waiting = (now.waited_seconds - last_.waited_seconds) / span;
  const double idle = (now.idle_cores_seconds - last_.idle_cores_seconds) / span;
  last_ = now;
  const int before = threads_;
  decide(waiting, idle);
  if (verbose_ && threads_ != before)
    std::fprintf(stderr,
                 "kerascpp: thread governor: %d -> %d thread(s) per replica (over %.0f ms its threads waited for "
                 "%.2f cores, %.2f cores idle)\n",
                 before, threads_, span * 1e3, waiting, idle);
  return threads_;
}

void ThreadGovernor::decide(double waiting, double idle) {
  if (waiting >= kWaitingCores) {
    // Give up one thread per replica for each core the threads waited for (at least one).
    const int fewer = std::max(1, static_cast<int>(std::lround(waiting / replicas_)));
    threads_ = std::max(1, threads_ - fewer);
    idle_samples_ = 0;
  } else if (idle >= kIdleCores && threads_ < max_threads_) {
    // Twice in a row: a neighbour that pauses between bursts should not pull threads back at once.
    if (++idle_samples_ >= 2) {
      const int more = std::max(1, static_cast<int>((idle + 1 - kIdleCores) / replicas_));
      threads_ = std::min(max_threads_, threads_ + more);
      idle_samples_ = 0;
    }
  } else {
    idle_samples_ = 0;
  }
}

}  // namespace kerascpp::distribute
