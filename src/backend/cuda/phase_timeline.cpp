#include "backend/cuda/phase_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include "backend/cuda/cuda_check.hpp"
#include "core/knobs.hpp"

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
    const char* env = ::kerascpp::detail::knob("KERASCPP_GPU_PHASES");
    return env && (std::string_view(env) == "1" || std::string_view(env) == "layers");
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
  // "forward" (or "predict") opens a step and closes the one before, whose last phase (the fit
  // loop's or the caller's own work between steps) ends here.
  const std::string_view p(phase);
  if ((p == "forward" || p == "predict") && marks_.size() > 1) close_step();
}

void PhaseTimeline::close_step() {
  KCPP_CUDA_CHECK(cudaEventSynchronize(marks_.back().event));
  // The first steps (algorithm searches, allocator growth, the first batch's upload) are left out.
  StepKind& kind = kinds_[marks_.front().phase];
  // A step whose phases differ from its kind's earlier ones (an error mid-step) is left out too.
  bool same = kind.phases.empty() || kind.phases.size() == marks_.size() - 1;
  for (std::size_t i = 0; same && i < kind.phases.size(); ++i) same = kind.phases[i].phase == marks_[i].phase;
  if (kind.closed++ >= kSkippedSteps && same) {
    double step_host = 0, step_gpu = 0;
    for (std::size_t i = 0; i + 1 < marks_.size(); ++i) {
      float ms = 0;
      KCPP_CUDA_CHECK(cudaEventElapsedTime(&ms, marks_[i].event, marks_[i + 1].event));
      const double host = std::chrono::duration<double, std::milli>(marks_[i + 1].host - marks_[i].host).count();
      if (kind.phases.size() <= i) kind.phases.push_back({marks_[i].phase});
      kind.phases[i].host_ms.push_back(host);
      kind.phases[i].gpu_ms.push_back(ms);
      step_host += host;
      step_gpu += ms;
    }
    kind.steps.host_ms.push_back(step_host);
    kind.steps.gpu_ms.push_back(step_gpu);
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
  std::string out;
  for (const auto& [opening, kind] : kinds_) {
    if (kind.steps.host_ms.empty()) continue;
    out += fmt::format("gpu:{} phases per {} step (median of {} steps after the first {}; KERASCPP_GPU_PHASES):\n",
                       device_, opening == "forward" ? "training" : opening, kind.steps.host_ms.size(), kSkippedSteps);
    for (const Series& p : kind.phases)
      out += fmt::format("  {:<18} host {:8.3f} ms   GPU {:8.3f} ms\n", p.phase, median(p.host_ms), median(p.gpu_ms));
    out += fmt::format("  {:<18} host {:8.3f} ms   GPU {:8.3f} ms\n", "step", median(kind.steps.host_ms),
                       median(kind.steps.gpu_ms));
  }
  std::fputs(out.c_str(), stderr);
}

}  // namespace kerascpp::cuda
