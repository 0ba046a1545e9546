// Which route a convolution pass (not depthwise) takes on the GPU. Three compute it:
//   cudnn  cuDNN over kerascpp's NHWC tensors (conv.cpp);
//   gemm   im2col + a cuBLAS product (conv_gemm.cpp); a 1x1 unpadded convolution is a product
//          over x's rows with no patch matrix, so those always go this way;
//   nchw   cuDNN over NCHW copies of the tensors (conv_nchw.cpp), float32 with symmetric
//          padding only.
// KERASCPP_GPU_CONV picks: `timed` (the default) runs each pass (shape, direction, compute
// dtype) on every route that can take it when it is first met, timed on the GPU as PyTorch's
// cudnn.benchmark times cuDNN's algorithms, and keeps the fastest; `pointwise` sends only the
// 1x1 ones to cuBLAS, `gemm` every one whose patch matrix fits the workspace limit, `nchw` every
// one the NCHW route takes, `cudnn` none.
//
// Measured (ResNet-50 b64, float32): `timed` over cuBLAS and NHWC cuDNN gave 910.2 images/s
// against 867.9 for `pointwise` on an H200, 876.2 against 831.2 on an H100
// (bench/results/gpu-2026-11-26c). cuDNN's NCHW kernels ran ResNet-50's 3x3 stride-1 passes
// 2-3x faster than its NHWC ones (bench/cudnn_layout_bench, visit1-layout.txt there), which is
// why the NCHW route, transposes included, is a candidate: it won every 3x3 stride-1 pass of
// ResNet-50 b64, 910 -> 1,095 images/s on an H200 (bench/results/gpu-2026-11-26d).
#include <fmt/format.h>

#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_check.hpp"
#include "backend/cuda/dnn_state.hpp"
#include "backend/op_shapes.hpp"

namespace kerascpp::cuda {

namespace {

// A 1x1 kernel without padding: a product over (gathered) rows of x, no patch matrix.
bool pointwise(const Conv2DGeometry& g) {
  return g.kernel_h == 1 && g.kernel_w == 1 && g.pad_top == 0 && g.pad_bottom == 0 && g.pad_left == 0 &&
         g.pad_right == 0;
}

// KERASCPP_GPU_CONV=timed's choices: per device, per convolution pass (shape, direction, dtype),
// the fastest route. Shared by the backends of one process so that every model and strategy on
// a device computes a shape the same way.
struct TimedChoices {
  std::mutex mu;
  std::map<int, std::unordered_map<ConvAlgoKey, ConvRoute, ConvAlgoKeyHash>> by_device;
};

TimedChoices& timed_choices() {
  static auto* choices = new TimedChoices;  // lives as long as the process
  return *choices;
}

ConvAlgoKey timed_key(const op_shapes::ConvShape& s, const Conv2DGeometry& g, ConvDirection dir, DType dtype) {
  return conv_algo_key(dir, s.n, s.ih, s.iw, s.ic, s.oc, g, 1, dtype);
}

const char* route_name(ConvRoute r) {
  switch (r) {
    case ConvRoute::gemm:
      return "cuBLAS (im2col)";
    case ConvRoute::cudnn:
      return "cuDNN";
    case ConvRoute::nchw:
      return "cuDNN NCHW";
  }
  return "unknown";
}

}  // namespace

ConvRoute CudaBackend::conv_route(const op_shapes::ConvShape& s, const Conv2DGeometry& g, bool depthwise,
                                  ConvDirection dir) const {
  const ConvEngine engine = dnn_->conv_engine;
  if (depthwise || engine == ConvEngine::cudnn) return ConvRoute::cudnn;
  if (timing_route_) return *timing_route_;
  if (engine == ConvEngine::nchw && nchw_conv_fits(s, g)) return ConvRoute::nchw;
  // The kernels index a patch row with int: a wider one stays on cuDNN.
  if (pointwise(g)) return s.ic <= std::numeric_limits<int>::max() ? ConvRoute::gemm : ConvRoute::cudnn;
  if (engine == ConvEngine::gemm) return gemm_conv_fits(s, g) ? ConvRoute::gemm : ConvRoute::cudnn;
  if (engine != ConvEngine::timed) return ConvRoute::cudnn;
  TimedChoices& t = timed_choices();
  std::lock_guard lock(t.mu);
  const auto& choices = t.by_device[device_];
  auto it = choices.find(timed_key(s, g, dir, compute_dtype()));
  return it == choices.end() ? ConvRoute::cudnn : it->second;
}

bool CudaBackend::conv_needs_timing(const op_shapes::ConvShape& s, const Conv2DGeometry& g, bool depthwise,
                                    ConvDirection dir) const {
  if (dnn_->conv_engine != ConvEngine::timed || timing_route_ || depthwise || pointwise(g)) return false;
  if (!gemm_conv_fits(s, g) && !nchw_conv_fits(s, g)) return false;  // cuDNN's NHWC route only
  TimedChoices& t = timed_choices();
  std::lock_guard lock(t.mu);
  return !t.by_device[device_].count(timed_key(s, g, dir, compute_dtype()));
}

void CudaBackend::time_conv_engines(const op_shapes::ConvShape& s, const Conv2DGeometry& g, ConvDirection dir,
                                    const std::function<void()>& pass) {
  constexpr int kRuns = 3;
  struct Events {  // released however the timing ends
    cudaEvent_t start = nullptr, stop = nullptr;
    ~Events() {
      if (start) cudaEventDestroy(start);
      if (stop) cudaEventDestroy(stop);
    }
  } ev;
  KCPP_CUDA_CHECK(cudaEventCreate(&ev.start));
  KCPP_CUDA_CHECK(cudaEventCreate(&ev.stop));
  // Each route's time, or infinity when it cannot take the pass (not a candidate, no memory for
  // the patch matrix, no cuDNN algorithm within the workspace); every candidate failing rethrows
  // the last one's error.
  constexpr ConvRoute kRoutes[] = {ConvRoute::gemm, ConvRoute::cudnn, ConvRoute::nchw};
  const bool candidate[] = {gemm_conv_fits(s, g), true, nchw_conv_fits(s, g)};
  float ms[3];
  std::exception_ptr last_error;
  {
    struct RouteReset {  // the op's own route again, however the timing ends
      std::optional<ConvRoute>& route;
      ~RouteReset() { route.reset(); }
    } reset{timing_route_};
    for (int e = 0; e < 3; ++e) {
      ms[e] = std::numeric_limits<float>::infinity();
      if (!candidate[e]) continue;
      timing_route_ = kRoutes[e];
      try {
        pass();  // warm-up: cuDNN's algorithm choice, workspace and allocator growth
        KCPP_CUDA_CHECK(cudaEventRecord(ev.start, stream_));
        for (int r = 0; r < kRuns; ++r) pass();
        KCPP_CUDA_CHECK(cudaEventRecord(ev.stop, stream_));
        KCPP_CUDA_CHECK(cudaEventSynchronize(ev.stop));
        KCPP_CUDA_CHECK(cudaEventElapsedTime(&ms[e], ev.start, ev.stop));
      } catch (const Error&) {
        ms[e] = std::numeric_limits<float>::infinity();
        last_error = std::current_exception();
      }
    }
  }
  int best = -1;
  for (int e = 0; e < 3; ++e)
    if (ms[e] < std::numeric_limits<float>::infinity() && (best < 0 || ms[e] < ms[best])) best = e;
  if (best < 0) std::rethrow_exception(last_error);
  const ConvAlgoKey key = timed_key(s, g, dir, compute_dtype());
  {
    TimedChoices& t = timed_choices();
    std::lock_guard lock(t.mu);
    t.by_device[device_].emplace(key, kRoutes[best]);  // a replica that timed it first wins
  }
  if (dnn_->conv_verbose) {
    std::string times;
    for (int e = 0; e < 3; ++e)
      if (candidate[e]) times += fmt::format(", {} {:.3f} ms", route_name(kRoutes[e]), ms[e] / kRuns);
    fmt::print(stderr, "kerascpp gpu:{} timed {}: {}{}\n", device_, key.describe(), route_name(kRoutes[best]), times);
  }
}

std::size_t timed_conv_choices(int device) {
  TimedChoices& t = timed_choices();
  std::lock_guard lock(t.mu);
  auto it = t.by_device.find(device);
  return it == t.by_device.end() ? 0 : it->second.size();
}

}  // namespace kerascpp::cuda
