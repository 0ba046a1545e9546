// ThreadGovernor: how many OpenMP threads each CPU replica uses for the next step, following the
// cores this process actually gets. libgomp's idle threads spin, so threads that outnumber the
// free cores fight a busy neighbour for them: the MLP at batch 128 on 2 threads beside two
// compiler processes on a 2-core Zen 4 ran 2,500 samples/s, against 23,000 on one thread. The
// wait policy that would soften this is read from the environment once, before any kerascpp
// code runs, so the library cannot set it; it can use fewer threads.
//
// Between steps (at most every 100 ms) the governor samples two counters: how long this
// process's threads waited on the kernel's run queue (/proc/self/task/*/schedstat) and how long
// the machine's cores were idle (/proc/stat). Threads waiting for half a core or more means the
// cores are taken: one thread per replica fewer per waiting core. An idle core seen twice in a
// row gives threads back, up to the configured count.
//
// Results depend on the thread count (oneDNN splits its sums by thread), so a governed run is
// not bit-reproducible under a changing load. It is on by default unless the OpenMP wait
// policy is passive (passive threads do not spin; the test suite runs that way);
// KERASCPP_ADAPTIVE_THREADS=0 or 1 decides instead; =verbose turns it on and prints each change
// with the readings behind it to stderr.
#pragma once
#include <cstdint>
#include <functional>

namespace kerascpp::distribute {

// One reading of the counters; cumulative values, differences are taken between samples.
struct CoreSample {
  double seconds = 0;             // wall clock
  double waited_seconds = 0;      // this process's threads on the run queue, summed
  double idle_cores_seconds = 0;  // the machine's cores idle, summed (core-seconds)
  bool valid = false;             // false where the counters cannot be read (not Linux)
};

class ThreadGovernor {
 public:
  using Probe = std::function<CoreSample()>;
  using Clock = std::function<double()>;  // seconds, the same clock as CoreSample::seconds
  // `probe` reads the counters and `clock` the time (tests inject their own); the defaults read
  // /proc and the steady clock.
  explicit ThreadGovernor(int max_threads, int replicas, Probe probe = read_core_sample, Clock clock = now_seconds);

  // Whether a CPU strategy governs its threads (the environment, as described above).
  static bool enabled_by_environment();
  static bool verbose_by_environment();
  static CoreSample read_core_sample();
  static double now_seconds();

  // The threads per replica for the next step, in [1, max_threads].
  int threads_for_next_step();

 private:
  void decide(double waiting_cores, double idle_cores);

  int max_threads_, replicas_, threads_;
  Probe probe_;
  Clock clock_;
  CoreSample last_;
  int idle_samples_ = 0;
  bool verbose_ = false;
};

}  // namespace kerascpp::distribute
