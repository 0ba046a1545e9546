// KERASCPP_GPU_PHASES=1: where a GPU step's time goes, phase by phase. The engine marks the phases
// of each step (Backend::mark_phase: forward, loss, backward, apply, totals, after and the fit
// loop's own between steps; predict's upload, forward and output); at each mark the backend
// records an event on its stream and the host clock. Per phase this gives the host's time
// (launching, waiting) and the GPU's (from its first to its last kernel, idle gaps included); the
// medians over the steps (the first few left out) go to stderr when the process ends. A phase
// whose GPU time is far above its kernels' time (ncu) is one where the GPU waited for the host.
// Measuring costs a wait at each step's start for the previous step's last mark.
// A step opens at "forward" (training) or "predict"; each kind of step has its own table.
// KERASCPP_GPU_PHASES=layers also marks every layer of an inference forward (Graph::forward), for
// where a small model's predict latency goes.
#pragma once
#include <cuda_runtime.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace kerascpp::cuda {

class PhaseTimeline {
 public:
  // Null unless KERASCPP_GPU_PHASES is 1 or layers.
  static PhaseTimeline* for_device(int device);
  void mark(const char* phase, cudaStream_t stream);

 private:
  explicit PhaseTimeline(int device) : device_(device) {}
  friend struct PhaseTimelines;
  struct Mark {
    std::string phase;
    cudaEvent_t event;
    std::chrono::steady_clock::time_point host;
  };
  struct Series {  // one phase's (or the whole step's) time in each step
    std::string phase;
    std::vector<double> host_ms, gpu_ms;
  };
  struct StepKind {  // the steps opened by one phase name
    std::vector<Series> phases;
    Series steps;
    long closed = 0;
  };
  static constexpr long kSkippedSteps = 5;
  void close_step();  // adds the closed step's phases to its kind's series
  void report() const;
  int device_;
  std::vector<Mark> marks_;
  std::vector<cudaEvent_t> spare_;
  std::map<std::string, StepKind> kinds_;
};

}  // namespace kerascpp::cuda
