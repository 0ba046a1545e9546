// Convolutions (not depthwise) as matrix products on cuBLAS. KERASCPP_GPU_CONV picks the engine:
// `timed` (the default) takes the 1x1 unpadded convolutions plus each other pass (shape,
// direction) that ran faster on cuBLAS than on cuDNN when it was first met, both timed on the GPU
// (as PyTorch's cudnn.benchmark times cuDNN's algorithms); `pointwise` the 1x1 ones only, `gemm`
// every one whose patch matrix fits the workspace limit, `cudnn` none.
//
// Why: cuDNN's float32 convolution kernels are NCHW ones, so on kerascpp's NHWC tensors it
// transposes around them, and for the 1x1 stride-2 backward data pass it had only a slow
// algorithm. Measured on an H200 (ResNet-50, batch 64, float32; bench/results/h200-2026-11-26,
// visit 4): 1x1 convolutions on cuBLAS gave 758.3 images/s against 580.0 on cuDNN, one step's GPU
// time 70.2 ms against 88.6 (ncu). `gemm` for the other convolutions was slower there (747.2
// against 766.1 images/s, bench/results/h200-2026-11-26b: its im2col kernel alone took 17 ms of
// a step), so it stays a switch. `timed` became the default after its first GPU runs: ResNet-50
// b64 910.2 images/s against 867.9 for `pointwise` on an H200, 876.2 against 831.2 on an H100
// (2026-11-26, bench/results/gpu-2026-11-26c).
//
// A convolution of NHWC x is the product of its patch matrix col [pixels, kh·kw·C]
// (kernels/im2col.cu) with the HWIO kernel, which is already the [kh·kw·C, filters] matrix; a
// 1x1 unit-stride unpadded convolution's patch matrix is x itself. The data gradient is the
// adjoint of im2col (col2im) applied to dy · kernelᵀ, the kernel gradient colᵀ · dy.
// dense_forward and matmul bring the bias, the activation and the 16-bit compute dtype with them.
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>

#include "backend/op_shapes.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/dnn_state.hpp"
#include "cuda/kernels/kernels.hpp"

namespace kerascpp::cuda {

namespace {

bool unpadded(const Conv2DGeometry& g) {
  return g.pad_top == 0 && g.pad_bottom == 0 && g.pad_left == 0 && g.pad_right == 0;
}

// The patch matrix is x itself: a 1x1 kernel, unit strides, no padding.
bool identity_patches(const Conv2DGeometry& g) {
  return g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && unpadded(g);
}

kern::ConvGeometry kernel_geometry(const op_shapes::ConvShape& s, const Conv2DGeometry& g) {
  return {s.n, s.ih, s.iw, s.ic, s.oh, s.ow, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w, g.pad_top, g.pad_left};
}

std::int64_t patch_width(const op_shapes::ConvShape& s, const Conv2DGeometry& g) {
  return g.kernel_h * g.kernel_w * s.ic;
}

// x's patch matrix as [n, oh, ow, kh·kw·C] (x itself where that is the same).
Tensor patches(const Tensor& x, const op_shapes::ConvShape& s, const Conv2DGeometry& g, cudaStream_t stream) {
  if (identity_patches(g)) return x;
  Tensor col({s.n, s.oh, s.ow, patch_width(s, g)}, DType::float32, x.device());
  kern::im2col(x.data<float>(), kernel_geometry(s, g), col.data<float>(), stream);
  KCPP_CUDA_CHECK(cudaGetLastError());
  return col;
}

// KERASCPP_GPU_CONV=timed's choices: per device, per convolution pass (shape, direction, dtype),
// whether cuBLAS beat cuDNN. Shared by the backends of one process so that every model and
// strategy on a device computes a shape the same way.
struct TimedChoices {
  std::mutex mu;
  std::map<int, std::unordered_map<ConvAlgoKey, bool, ConvAlgoKeyHash>> by_device;
};

TimedChoices& timed_choices() {
  static auto* choices = new TimedChoices;  // lives as long as the process
  return *choices;
}

// Whether convolution s·g may take the cuBLAS route through a patch matrix: its rows fit the
// kernels' int indexing and the matrix fits the workspace limit.
bool gemm_fits(const op_shapes::ConvShape& s, const Conv2DGeometry& g, std::size_t workspace_limit) {
  const std::int64_t width = patch_width(s, g);
  return width <= std::numeric_limits<int>::max() &&
         static_cast<std::size_t>(s.n * s.oh * s.ow * width) * sizeof(float) <= workspace_limit;
}

ConvAlgoKey timed_key(const op_shapes::ConvShape& s, const Conv2DGeometry& g, ConvDirection dir, DType dtype) {
  return conv_algo_key(dir, s.n, s.ih, s.iw, s.ic, s.oc, g, 1, dtype);
}

}  // namespace

bool CudaBackend::conv_as_gemm(const op_shapes::ConvShape& s, const Conv2DGeometry& g, bool depthwise,
                               ConvDirection dir) const {
  const ConvEngine engine = dnn_->conv_engine;
  // The kernels index a patch row with int: a wider one stays on cuDNN whatever the engine.
  if (depthwise || engine == ConvEngine::cudnn || patch_width(s, g) > std::numeric_limits<int>::max()) return false;
  if (g.kernel_h == 1 && g.kernel_w == 1 && unpadded(g)) return true;  // a patch matrix no larger than x
  if (!gemm_fits(s, g, dnn_->workspace_limit)) return false;
  if (engine == ConvEngine::gemm) return true;
  if (engine != ConvEngine::timed) return false;
  if (timing_gemm_) return *timing_gemm_;
  TimedChoices& t = timed_choices();
  std::lock_guard lock(t.mu);
  const auto& choices = t.by_device[device_];
  auto it = choices.find(timed_key(s, g, dir, compute_dtype()));
  return it != choices.end() && it->second;
}

bool CudaBackend::conv_needs_timing(const op_shapes::ConvShape& s, const Conv2DGeometry& g, bool depthwise,
                                    ConvDirection dir) const {
  if (dnn_->conv_engine != ConvEngine::timed || timing_gemm_ || depthwise) return false;
  if (g.kernel_h == 1 && g.kernel_w == 1 && unpadded(g)) return false;  // always cuBLAS
  if (!gemm_fits(s, g, dnn_->workspace_limit)) return false;            // always cuDNN
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
  // Each engine's time, or infinity when it cannot run the pass (no memory for the patch matrix,
  // no cuDNN algorithm within the workspace): then the other one is kept; both failing rethrows.
  float ms[2] = {0.f, 0.f};
  bool one_failed = false;
  for (int e = 0; e < 2; ++e) {
    timing_gemm_ = e == 0;
    try {
      pass();  // warm-up: cuDNN's algorithm choice, workspace and allocator growth
      KCPP_CUDA_CHECK(cudaEventRecord(ev.start, stream_));
      for (int r = 0; r < kRuns; ++r) pass();
      KCPP_CUDA_CHECK(cudaEventRecord(ev.stop, stream_));
      KCPP_CUDA_CHECK(cudaEventSynchronize(ev.stop));
      KCPP_CUDA_CHECK(cudaEventElapsedTime(&ms[e], ev.start, ev.stop));
    } catch (const Error&) {
      ms[e] = std::numeric_limits<float>::infinity();
      if (one_failed) {
        timing_gemm_.reset();
        throw;  // neither engine runs it: the error of the last one
      }
      one_failed = true;
    }
  }
  timing_gemm_.reset();
  const ConvAlgoKey key = timed_key(s, g, dir, compute_dtype());
  {
    TimedChoices& t = timed_choices();
    std::lock_guard lock(t.mu);
    t.by_device[device_].emplace(key, ms[0] < ms[1]);  // a replica that timed it first wins
  }
  if (dnn_->conv_verbose)
    std::fprintf(stderr, "kerascpp gpu:%d timed %s: cuBLAS (im2col) %.3f ms, cuDNN %.3f ms\n", device_,
                 key.describe().c_str(), ms[0] / kRuns, ms[1] / kRuns);
}

std::size_t timed_conv_choices(int device) {
  TimedChoices& t = timed_choices();
  std::lock_guard lock(t.mu);
  auto it = t.by_device.find(device);
  return it == t.by_device.end() ? 0 : it->second.size();
}

void CudaBackend::gemm_conv_forward(const Tensor& x, const Tensor& w, const Tensor& b, const op_shapes::ConvShape& s,
                                    const Conv2DGeometry& g, ActivationKind act, Tensor& y) {
  dense_forward(patches(x, s, g, stream_), w.reshape({patch_width(s, g), s.oc}), b, act, y);
}

void CudaBackend::gemm_conv_backward_data(const Tensor& dy, const Tensor& w, const op_shapes::ConvShape& s,
                                          const Conv2DGeometry& g, Tensor& dx) {
  const Tensor kernel = w.reshape({patch_width(s, g), s.oc}), dy_rows = dy.reshape({-1, s.oc});
  if (identity_patches(g)) {
    Tensor dx_rows = dx.reshape({-1, s.ic});
    matmul(dy_rows, false, kernel, true, dx_rows, false);
    return;
  }
  Tensor dcol;  // the gradient of the patch matrix
  matmul(dy_rows, false, kernel, true, dcol, false);
  kern::col2im(dcol.data<float>(), kernel_geometry(s, g), dx.data<float>(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::gemm_conv_backward_weights(const Tensor& x, const Tensor& dy, const op_shapes::ConvShape& s,
                                             const Conv2DGeometry& g, Tensor& dw, bool accumulate) {
  const std::int64_t width = patch_width(s, g);
  Tensor dw_matrix = dw.reshape({width, s.oc});
  matmul(patches(x, s, g, stream_).reshape({-1, width}), true, dy.reshape({-1, s.oc}), false, dw_matrix, accumulate);
}

}  // namespace kerascpp::cuda
