// How fast cuDNN runs ResNet-50's float32 convolutions (no TF32) in NHWC, the layout kerascpp's
// CUDA backend uses, against NCHW, the layout PyTorch uses: for each distinct convolution of
// ResNet-50 v1.5 at one batch size, cudnnFind*Algorithm times every algorithm of the forward,
// backward-data and backward-filter passes; the fastest deterministic one counts, weighted by
// how often the network runs that convolution. The totals are the convolution time of one
// training step in each layout, to set against a measured step time.
//
//   cudnn_layout_bench [batch]      (default 64)
#include <cudnn.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

#define CHECK_CUDNN(call)                                                                           \
  do {                                                                                              \
    cudnnStatus_t st_ = (call);                                                                     \
    if (st_ != CUDNN_STATUS_SUCCESS) {                                                              \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudnnGetErrorString(st_)); \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)

struct Conv {
  int c, k, hw, r, stride, count;  // in channels, filters, input size, kernel size, stride, uses per step
};

// ResNet-50 v1.5 on 224x224 images (the stride on the 3x3 convolution of each first block).
const std::vector<Conv> kResNet50 = {
    {3, 64, 224, 7, 2, 1},    {64, 64, 56, 1, 1, 1},     {64, 64, 56, 3, 1, 3},    {64, 256, 56, 1, 1, 4},
    {256, 64, 56, 1, 1, 2},   {256, 128, 56, 1, 1, 1},   {128, 128, 56, 3, 2, 1},  {128, 128, 28, 3, 1, 3},
    {128, 512, 28, 1, 1, 4},  {256, 512, 56, 1, 2, 1},   {512, 128, 28, 1, 1, 3},  {512, 256, 28, 1, 1, 1},
    {256, 256, 28, 3, 2, 1},  {256, 256, 14, 3, 1, 5},   {256, 1024, 14, 1, 1, 6}, {512, 1024, 28, 1, 2, 1},
    {1024, 256, 14, 1, 1, 5}, {1024, 512, 14, 1, 1, 1},  {512, 512, 14, 3, 2, 1},  {512, 512, 7, 3, 1, 2},
    {512, 2048, 7, 1, 1, 3},  {1024, 2048, 14, 1, 2, 1}, {2048, 512, 7, 1, 1, 2},
};

template <class Perf>
float fastest(const Perf* p, int n) {
  for (int i = 0; i < n; ++i)
    if (p[i].status == CUDNN_STATUS_SUCCESS && p[i].determinism == CUDNN_DETERMINISTIC &&
        p[i].mathType != CUDNN_TENSOR_OP_MATH && p[i].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
      return p[i].time;  // Find sorts by time
  return -1.f;
}

// Forward, backward-data and backward-filter times (ms) of one convolution in one layout.
void time_conv(cudnnHandle_t h, const Conv& cv, int n, cudnnTensorFormat_t fmt, float out[3]) {
  const int pad = cv.r / 2, o = (cv.hw + 2 * pad - cv.r) / cv.stride + 1;
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&x));
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&y));
  CHECK_CUDNN(cudnnCreateFilterDescriptor(&w));
  CHECK_CUDNN(cudnnCreateConvolutionDescriptor(&conv));
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(x, fmt, CUDNN_DATA_FLOAT, n, cv.c, cv.hw, cv.hw));
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(y, fmt, CUDNN_DATA_FLOAT, n, cv.k, o, o));
  CHECK_CUDNN(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, fmt, cv.k, cv.c, cv.r, cv.r));
  CHECK_CUDNN(cudnnSetConvolution2dDescriptor(conv, pad, pad, cv.stride, cv.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT));
  CHECK_CUDNN(cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH));
  int got = 0;
  cudnnConvolutionFwdAlgoPerf_t f[16];
  CHECK_CUDNN(cudnnFindConvolutionForwardAlgorithm(h, x, w, conv, y, 16, &got, f));
  out[0] = fastest(f, got);
  cudnnConvolutionBwdDataAlgoPerf_t bd[16];
  CHECK_CUDNN(cudnnFindConvolutionBackwardDataAlgorithm(h, w, y, conv, x, 16, &got, bd));
  out[1] = fastest(bd, got);
  cudnnConvolutionBwdFilterAlgoPerf_t bf[16];
  CHECK_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithm(h, x, y, conv, w, 16, &got, bf));
  out[2] = fastest(bf, got);
  cudnnDestroyConvolutionDescriptor(conv);
  cudnnDestroyFilterDescriptor(w);
  cudnnDestroyTensorDescriptor(y);
  cudnnDestroyTensorDescriptor(x);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 64;
  cudnnHandle_t h;
  CHECK_CUDNN(cudnnCreate(&h));
  std::printf("ResNet-50 convolutions, batch %d, float32 FMA (no TF32), fastest deterministic algorithm, ms\n", n);
  std::printf("%-28s %5s | %8s %8s %8s | %8s %8s %8s\n", "conv (c>k @hw, r x r / s)", "uses", "NHWC fwd", "bwd-d",
              "bwd-f", "NCHW fwd", "bwd-d", "bwd-f");
  double total[2] = {0, 0};
  for (const Conv& cv : kResNet50) {
    float t[2][3];
    time_conv(h, cv, n, CUDNN_TENSOR_NHWC, t[0]);
    time_conv(h, cv, n, CUDNN_TENSOR_NCHW, t[1]);
    char name[64];
    std::snprintf(name, sizeof name, "%d>%d @%d, %dx%d/%d", cv.c, cv.k, cv.hw, cv.r, cv.r, cv.stride);
    std::printf("%-28s %5d | %8.3f %8.3f %8.3f | %8.3f %8.3f %8.3f\n", name, cv.count, t[0][0], t[0][1], t[0][2],
                t[1][0], t[1][1], t[1][2]);
    for (int l = 0; l < 2; ++l)
      // The first convolution has no backward-data pass (its input is the image).
      total[l] += cv.count * (t[l][0] + (cv.c == 3 ? 0.f : t[l][1]) + t[l][2]);
  }
  std::printf("convolution time per training step: NHWC %.1f ms, NCHW %.1f ms\n", total[0], total[1]);
  cudnnDestroy(h);
  return 0;
}
