// CudaBackend's confusion-matrix counts (Precision, Recall, AUC): one histogram kernel on the
// GPU (kernels/metrics.cu), read back once; the per-threshold counts come from it on the host
// exactly as on the CPU (backend/confusion.cpp).
#include <vector>

#include "backend/confusion.hpp"
#include "backend/cuda/kernel_common.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

namespace {

// Histogram of `count` elements on `stream`, read back to the host. The device thresholds (if
// any) are uploaded into the same scratch block after the histogram.
std::vector<double> histogram_counts(KernelState& kernels, cudaStream_t stream, const Tensor& pred,
                                     const Tensor& target, std::int64_t count, std::int64_t stride, std::int64_t offset,
                                     const std::vector<float>& sorted, int num_thresholds, bool even,
                                     const std::vector<std::size_t>& order) {
  const std::size_t buckets = static_cast<std::size_t>(num_thresholds) + 1;
  const std::size_t hist_bytes = 2 * buckets * sizeof(unsigned long long);
  auto* block = static_cast<char*>(kernels.scratch(hist_bytes + sorted.size() * sizeof(float)));
  auto* hist = reinterpret_cast<unsigned long long*>(block);
  auto* thresholds = reinterpret_cast<float*>(block + hist_bytes);  // 8-byte aligned after the u64s
  if (!sorted.empty())
    KCPP_CUDA_CHECK(
        cudaMemcpyAsync(thresholds, sorted.data(), sorted.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
  kern::confusion_histogram(pred.data<float>(), target.data<float>(), count, stride, offset, thresholds, num_thresholds,
                            even, hist, stream);
  KCPP_CUDA_CHECK(cudaGetLastError());
  std::vector<unsigned long long> host(2 * buckets);
  KCPP_CUDA_CHECK(cudaMemcpyAsync(host.data(), hist, hist_bytes, cudaMemcpyDeviceToHost, stream));
  KCPP_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<std::uint64_t> positives(host.begin(), host.begin() + static_cast<std::ptrdiff_t>(buckets));
  std::vector<std::uint64_t> negatives(host.begin() + static_cast<std::ptrdiff_t>(buckets), host.end());
  return confusion::counts_from_histogram(positives, negatives, order);
}

}  // namespace

std::vector<double> CudaBackend::confusion_counts(const Tensor& pred, const Tensor& target,
                                                  const std::vector<float>& thresholds, std::int64_t stride,
                                                  std::int64_t offset) {
  DeviceGuard guard(device_);
  const char* op = "confusion_counts";
  require_float_on(pred, device(), op, "pred");
  require_float_on(target, device(), op, "target");
  const std::int64_t count = confusion::check_elements(pred, target, stride, offset, op);
  const confusion::SortedThresholds s = confusion::sort_thresholds(thresholds, op);
  return histogram_counts(*kernels_, stream_, pred, target, count, stride, offset, s.values,
                          static_cast<int>(s.values.size()), false, s.order);
}

std::vector<double> CudaBackend::even_confusion_counts(const Tensor& pred, const Tensor& target, int num_thresholds) {
  DeviceGuard guard(device_);
  const char* op = "even_confusion_counts";
  require_float_on(pred, device(), op, "pred");
  require_float_on(target, device(), op, "target");
  KERASCPP_CHECK_VALUE(num_thresholds >= 2, "{}: num_thresholds must be >= 2, got {}", op, num_thresholds);
  const std::int64_t count = confusion::check_elements(pred, target, 1, 0, op);
  return histogram_counts(*kernels_, stream_, pred, target, count, 1, 0, {}, num_thresholds, true, {});
}

}  // namespace kerascpp::cuda
