#include "cuda/phase_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include "cuda/cuda_check.hpp"

namespace kerascpp::cuda {

// One timeline per device for the life of the process; each reports when the process ends.
struct PhaseTimelines {
  std::mutex mu;
  std::map<int, std::unique_ptr<PhaseTimeline>> by_device;
  ~PhaseTimelines() {
    for (auto& [device, t] : by_device) t->report();
  }
};

PhaseTimeline* PhaseTimeline::for_device(int device) {
  static const bool enabled = [] {
    const char* env = std::getenv("KERASCPP_GPU_PHASES");
    return env && std::string_view(env) == "1";
  }();
  if (!enabled) return nullptr;
  static PhaseTimelines all;
  std::lock_guard lock(all.mu);
  auto& t = all.by_device[device];
  if (!t) t.reset(new PhaseTimeline(device));
  return t.get();
}

void PhaseTimeline::mark(const char* phase, cudaStream_t stream) {
  cudaEvent_t e;
  if (spare_.empty()) {
    KCPP_CUDA_CHECK(cudaEventCreate(&e));
  } else {
    e = spare_.back();
    spare_.pop_back();
  }
  KCPP_CUDA_CHECK(cudaEventRecord(e, stream));
  marks_.push_back({phase, e, std::chrono::steady_clock::now()});
  // "forward" opens a step and closes the one before, whose last phase ("after": the fit loop's
  // own work between steps) ends here.
  if (std::string_view(phase) == "forward" && marks_.size() > 1) close_step();
}

void PhaseTimeline::close_step() {
  KCPP_CUDA_CHECK(cudaEventSynchronize(marks_.back().event));
  // The first steps (algorithm searches, allocator growth, the first batch's upload) are left out.
  if (closed_++ >= kSkippedSteps) {
    double step_host = 0, step_gpu = 0;
    for (std::size_t i = 0; i + 1 < marks_.size(); ++i) {
      float ms = 0;
      KCPP_CUDA_CHECK(cudaEventElapsedTime(&ms, marks_[i].event, marks_[i + 1].event));
      const double host = std::chrono::duration<double, std::milli>(marks_[i + 1].host - marks_[i].host).count();
      if (phases_.size() <= i) phases_.push_back({marks_[i].phase});
      phases_[i].host_ms.push_back(host);
      phases_[i].gpu_ms.push_back(ms);
      step_host += host;
      step_gpu += ms;
    }
    steps_.host_ms.push_back(step_host);
    steps_.gpu_ms.push_back(step_gpu);
  }
  // The new step's mark stays as its first.
  for (std::size_t i = 0; i + 1 < marks_.size(); ++i) spare_.push_back(marks_[i].event);
  marks_.erase(marks_.begin(), marks_.end() - 1);
}

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

void PhaseTimeline::report() const {
  if (steps_.host_ms.empty()) return;
  std::string out =
      fmt::format("gpu:{} phases per training step (median of {} steps after the first {}; KERASCPP_GPU_PHASES=1):\n",
                  device_, steps_.host_ms.size(), kSkippedSteps);
  for (const Series& p : phases_)
    out += fmt::format("  {:<10} host {:8.3f} ms   GPU {:8.3f} ms\n", p.phase, median(p.host_ms), median(p.gpu_ms));
  out +=
      fmt::format("  {:<10} host {:8.3f} ms   GPU {:8.3f} ms\n", "step", median(steps_.host_ms), median(steps_.gpu_ms));
  std::fputs(out.c_str(), stderr);
}

}  // namespace kerascpp::cuda
