// The thread governor's decisions on scripted counter readings (a real neighbour would make the
// test depend on the machine's load), the environment switch, and a CPU backend switching
// thread counts back and forth with each count's primitives kept.
#include <doctest/doctest.h>

#include <cstdlib>
#include <vector>

#include "distribute/thread_governor.hpp"
#include "full_mantissa_tensor.hpp"
#include "kerascpp/kerascpp.hpp"

namespace K = kerascpp;
using K::distribute::CoreSample;
using K::distribute::ThreadGovernor;

namespace {

// Readings 0.2 s apart: each call adds `waited` and `idle` cores over that span.
struct ScriptedProbe {
  std::vector<std::pair<double, double>> steps;  // (waiting cores, idle cores) per sample
  std::size_t next = 0;
  CoreSample now{0, 0, 0, true};
  CoreSample operator()() {
    if (next > 0 && next <= steps.size()) {
      now.seconds += 0.2;
      now.waited_seconds += steps[next - 1].first * 0.2;
      now.idle_cores_seconds += steps[next - 1].second * 0.2;
    }
    ++next;
    return now;
  }
};

std::vector<int> decisions(int max_threads, int replicas, std::vector<std::pair<double, double>> steps) {
  auto probe = std::make_shared<ScriptedProbe>(ScriptedProbe{steps});
  // The clock reads the time the next reading will carry.
  ThreadGovernor g(max_threads, replicas, [probe] { return (*probe)(); }, [probe] { return probe->now.seconds + 0.2; });
  std::vector<int> out;
  for (std::size_t i = 0; i < steps.size(); ++i) out.push_back(g.threads_for_next_step());
  return out;
}

}  // namespace

TEST_CASE("thread governor: fewer threads while they wait for cores, back after an idle core twice") {
  // Alone on the machine: nothing waits, nothing idles (the threads use every core).
  CHECK(decisions(2, 1, {{0.0, 0.0}, {0.1, 0.05}, {0.2, 0.0}}) == std::vector<int>{2, 2, 2});
  // A neighbour takes a core: the threads wait, one goes; the neighbour stays, so does the count;
  // it leaves: one idle sample is not enough, the second gives the thread back.
  CHECK(decisions(2, 1, {{1.0, 0.0}, {0.1, 0.0}, {0.0, 1.0}, {0.0, 1.0}, {0.0, 0.0}}) ==
        std::vector<int>{1, 1, 1, 2, 2});
  // An idle sample interrupted by a busy one starts counting again.
  CHECK(decisions(2, 1, {{1.0, 0.0}, {0.0, 1.0}, {0.0, 0.2}, {0.0, 1.0}, {0.0, 1.0}}) ==
        std::vector<int>{1, 1, 1, 1, 2});
  // 16 threads on each of 2 replicas, waiting for 4 cores: 2 threads fewer per replica; never below 1.
  CHECK(decisions(16, 2, {{4.0, 0.0}, {40.0, 0.0}, {40.0, 0.0}}) == std::vector<int>{14, 1, 1});
  // Idle cores come back a replica's share at a time, up to the configured count.
  CHECK(decisions(8, 2, {{40.0, 0.0}, {0.0, 6.0}, {0.0, 6.0}, {0.0, 6.0}, {0.0, 6.0}}) ==
        std::vector<int>{1, 1, 4, 4, 7});
  // One thread to begin with: nothing to govern.
  CHECK(decisions(1, 1, {{3.0, 0.0}}) == std::vector<int>{1});
}

TEST_CASE("thread governor: readings closer than 100 ms, or unreadable counters, change nothing") {
  CoreSample now{0, 0, 0, true};
  int readings = 0;
  ThreadGovernor quick(
      2, 1,
      [&] {
        ++readings;
        now.seconds += 0.01;
        now.waited_seconds += 0.01;  // waiting a whole core, but over 10 ms
        return now;
      },
      [&] { return now.seconds + 0.01; });
  for (int i = 0; i < 5; ++i) CHECK(quick.threads_for_next_step() == 2);
  CHECK(readings == 1);  // the construction's: /proc is not read while the clock says it is too early
  ThreadGovernor blind(2, 1, [] { return CoreSample{}; }, [] { return 1.0; });
  CHECK(blind.threads_for_next_step() == 2);
  // The real counters can be read here (Linux /proc).
  const CoreSample real = ThreadGovernor::read_core_sample();
  CHECK(real.valid);
  CHECK(real.idle_cores_seconds > 0);
}

TEST_CASE(
    "thread governor: on unless the OpenMP wait policy is passive; KERASCPP_ADAPTIVE_THREADS decides (verbose: "
    "prints)") {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const std::string saved_policy = policy ? policy : "";
  ::unsetenv("KERASCPP_ADAPTIVE_THREADS");
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  CHECK_FALSE(ThreadGovernor::enabled_by_environment());
  ::setenv("OMP_WAIT_POLICY", "active", 1);
  CHECK(ThreadGovernor::enabled_by_environment());
  ::setenv("KERASCPP_ADAPTIVE_THREADS", "0", 1);
  CHECK_FALSE(ThreadGovernor::enabled_by_environment());
  ::setenv("OMP_WAIT_POLICY", "passive", 1);
  ::setenv("KERASCPP_ADAPTIVE_THREADS", "1", 1);
  CHECK(ThreadGovernor::enabled_by_environment());
  CHECK_FALSE(ThreadGovernor::verbose_by_environment());
  ::setenv("KERASCPP_ADAPTIVE_THREADS", "verbose", 1);
  CHECK(ThreadGovernor::enabled_by_environment());
  CHECK(ThreadGovernor::verbose_by_environment());
  ::unsetenv("KERASCPP_ADAPTIVE_THREADS");
  if (policy) ::setenv("OMP_WAIT_POLICY", saved_policy.c_str(), 1);
  else ::unsetenv("OMP_WAIT_POLICY");
}

TEST_CASE("cpu backend: switching thread counts keeps each count's primitives and its results") {
  auto be = K::make_cpu_backend(2);
  const K::Tensor x = kerascpp_test::full_mantissa_tensor({64, 96}, 1),
                  w = kerascpp_test::full_mantissa_tensor({96, 80}, 2),
                  b = kerascpp_test::full_mantissa_tensor({80}, 3);
  std::vector<std::vector<float>> by_count[3];
  for (int round = 0; round < 3; ++round)
    for (int threads : {2, 1}) {
      be->set_num_threads(threads);
      CHECK(be->num_threads() == threads);
      K::Tensor y;
      be->dense_forward(x, w, b, K::ActivationKind::relu, y);
      by_count[threads].push_back(y.to_vector());
    }
  // Each count gives the same bits every time it comes back.
  for (int threads : {1, 2}) {
    CHECK(by_count[threads][1] == by_count[threads][0]);
    CHECK(by_count[threads][2] == by_count[threads][0]);
  }
}
