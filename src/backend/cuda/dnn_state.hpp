// State of the cuBLAS/cuDNN half of CudaBackend (see cuda_backend.hpp): the library handles
// bound to the replica's stream, cuDNN descriptor caches, the convolution-algorithm cache, the
// cuBLASLt matmul plans, one bounded workspace and a few growable scratch buffers, plus the
// helpers that dnn_*.cpp share (activations, bias rows, transposes, explicit padding).
//
// Layout conventions used throughout dnn_*.cpp:
//  * Our tensors are dense row-major; a row-major [R, C] matrix is, to cuBLAS (column-major),
//    a C x R matrix with leading dimension C. Every cuBLAS call below is written in those terms.
//  * "Flat" cuDNN views: a row-major [rows, cols] tensor is described as NCHW (rows, cols, 1, 1),
//    which is the same bytes (offset = row * cols + col). Elementwise ops, bias rows and softmax
//    use these views; cuDNN's NCHW paths are also its fastest for such tensors.
//  * Images are NHWC; cuDNN's CUDNN_TENSOR_NHWC descriptors take the dims in (n, c, h, w) order
//    and lay them out as n, h, w, c, i.e. exactly our tensors.
//
// Everything is queued on `stream`; nothing here waits for the GPU. One DnnState serves one
// backend, used from one thread at a time.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>

#include "backend/cuda/conv_algo_key.hpp"
#include "backend/cuda/cuda_check.hpp"
#include "kerascpp/backend/backend.hpp"

namespace kerascpp::cuda {

// A device block that grows on demand (through the caching allocator) and never shrinks. Its
// contents are undefined after it grows. Growing hands the old block back to the allocator:
// work already queued on the stream that reads it runs before any later user of that block
// (stream order, see device_runtime.hpp).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get(int device, std::size_t bytes);
  float* floats(int device, std::int64_t count) {
    return static_cast<float*>(get(device, static_cast<std::size_t>(count) * sizeof(float)));
  }
  std::size_t capacity() const { return bytes_; }

 private:
  int device_ = 0;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// The algorithm chosen for one convolution problem and the workspace it needs. For a 16-bit
// problem also the math type the heuristics paired it with (set on the descriptor before each
// run), and `none`: cuDNN offered no usable 16-bit algorithm, so the op computes in float32.
struct ConvAlgoChoice {
  int algo = 0;  // cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t of the key's direction
  std::size_t workspace_bytes = 0;
  cudnnMathType_t math = CUDNN_FMA_MATH;
  bool none = false;
};

// A cached cuBLASLt plan for dense_forward (see dense.cpp). `lt` is false when cuBLASLt
// offered no algorithm for the problem; dense_forward then uses cublasSgemm plus separate bias
// and activation steps.
struct DensePlan {
  DensePlan() = default;
  ~DensePlan();
  DensePlan(const DensePlan&) = delete;
  DensePlan& operator=(const DensePlan&) = delete;

  bool lt = false;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  std::size_t workspace_bytes = 0;
  bool epilogue_bias = false;  // the epilogue added the bias
};

// Per-output-position correction factors of asymmetrically padded average pooling (see
// pooling.cpp), on the device, with the pinned host copy they were uploaded from.
struct AvgPoolFactors {
  AvgPoolFactors() = default;
  ~AvgPoolFactors();
  AvgPoolFactors(const AvgPoolFactors&) = delete;
  AvgPoolFactors& operator=(const AvgPoolFactors&) = delete;

  DeviceBuffer device_factors;
  void* pinned = nullptr;
  std::size_t pinned_bytes = 0;
};

// How convolutions are routed (conv_route.cpp, KERASCPP_GPU_CONV): `cudnn` all on cuDNN over the
// NHWC tensors; `pointwise` the 1x1 unpadded ones as cuBLAS products, the rest on cuDNN; `gemm`
// every one whose patch matrix fits the workspace limit on cuBLAS; `nchw` every one the NCHW
// route takes (conv_nchw.cpp) there, the 1x1 unpadded ones included; `timed` each pass on
// whichever of them ran it fastest when first met.
enum class ConvEngine : std::uint8_t { cudnn, pointwise, gemm, nchw, timed };

struct DnnState {
  explicit DnnState(cudaStream_t stream);  // on the current device (the backend's)
  ~DnnState();
  DnnState(const DnnState&) = delete;
  DnnState& operator=(const DnnState&) = delete;

  cudaStream_t stream;
  int device = 0;
  cublasHandle_t blas = nullptr;  // bound to `stream`, CUBLAS_DEFAULT_MATH (no TF32)
  cublasLtHandle_t lt = nullptr;  // stream passed per call
  cudnnHandle_t dnn = nullptr;    // bound to `stream`
  int cc_major = 0;               // the device's compute capability (major)
  // Upper bound of the one workspace shared by cuDNN convolutions and cuBLASLt: an eighth of the
  // device's memory, at most 4 GiB (TensorFlow's cuDNN workspace default), unless the environment
  // variable KERASCPP_GPU_WORKSPACE_MB says otherwise. 256 MiB was too little on an H200: a 1x1
  // stride-2 backward-data pass of ResNet-50 (batch 64) then had only an algorithm 6x slower.
  std::size_t workspace_limit = std::size_t{4} << 30;
  // How convolution algorithms are chosen (KERASCPP_CUDNN_ALGO_SEARCH): cuDNN's heuristics
  // (cudnnGet*Algorithm_v7, no GPU work) or measurement (cudnnFind*Algorithm: every algorithm
  // timed once per problem, as TensorFlow's autotuning and PyTorch's cudnn.benchmark do).
  bool conv_find = false;
  // KERASCPP_CUDNN_VERBOSE=1: each new convolution choice printed to stderr.
  bool conv_verbose = false;
  // KERASCPP_GPU_GRAPHS=0: CudaBackend::record records nothing (predict runs op by op).
  bool record_graphs = true;

  // ---- buffers (each valid until the next call that asks the same buffer for more) ----
  // The workspace: at least `bytes`, grown on demand up to workspace_limit (beyond it throws,
  // naming `op` and `what`). Returns nullptr for 0 bytes.
  void* workspace(std::size_t bytes, const char* op, const char* what);
  float* kernel_buffer(std::int64_t count) { return kernel_.floats(device, count); }  // KRSC kernels
  float* pad_buffer(std::int64_t count) { return pad_.floats(device, count); }        // padded inputs
  float* pad_grad_buffer(std::int64_t count) { return pad_grad_.floats(device, count); }
  float* scratch(std::int64_t count) { return scratch_.floats(device, count); }  // outputs that alias inputs
  float* small(std::int64_t count) { return small_.floats(device, count); }      // per-channel vectors
  // After a refused capture (recorded_work.cpp): the device constants filled lazily (ones, zeros,
  // average pooling's factors) are filled again on next use, their capture never having run.
  void forget_lazy_device_data();
  const float* ones(std::int64_t count);   // a device vector of >= count ones
  const float* zeros(std::int64_t count);  // a device vector of >= count zeros
  // Mixed precision: 16-bit copies of the two operands of a matmul or convolution, and the
  // 16-bit output of a cuDNN convolution before it is cast back to float32 (2 bytes an element).
  void* operand_a(std::int64_t count) { return operand_a_.get(device, static_cast<std::size_t>(count) * 2); }
  void* operand_b(std::int64_t count) { return operand_b_.get(device, static_cast<std::size_t>(count) * 2); }
  void* operand_out(std::int64_t count) { return operand_out_.get(device, static_cast<std::size_t>(count) * 2); }
  // The NCHW route (conv_nchw.cpp): NCHW copies of a pass's two activations, and its KCRS kernel.
  float* nchw_a(std::int64_t count) { return nchw_a_.floats(device, count); }
  float* nchw_b(std::int64_t count) { return nchw_b_.floats(device, count); }
  float* kernel_kcrs(std::int64_t count) { return kernel_kcrs_.floats(device, count); }

  // ---- mixed precision (compute dtype bfloat16/float16; dense.cpp, conv.cpp) ----
  // The dtype the GEMMs and convolutions compute in for the requested compute dtype: float16
  // as asked; bfloat16 on compute capability 8.0 and later (cuDNN's bfloat16 convolutions need
  // it, and bfloat16 tensor cores start there), float32 before; float32 for float32.
  DType gemm_dtype(DType requested) const;
  // dst (`dtype`: bfloat16 or float16, 16-bit) = src rounded to nearest even; and back.
  void to_16bit(const float* src, void* dst, DType dtype, std::int64_t count);
  void from_16bit(const void* src, DType dtype, float* dst, std::int64_t count);
  // The mixed precision GEMM of matmul, dense_forward and batched_matmul: column-major
  // C = op(A)·op(B) + beta·C (m x n, ld ldc) for `batch` slices `stride_*` elements apart, where
  // A (a_count floats) and B (b_count floats) are float32 and are first rounded to `dtype`
  // (bfloat16/float16) into operand_a/operand_b. One cublasGemmEx (batch 1) or
  // cublasGemmStridedBatchedEx: 16-bit A/B, float32 C, CUBLAS_COMPUTE_32F (float32 accumulation;
  // tensor cores under the handle's CUBLAS_DEFAULT_MATH), float32 alpha and beta.
  void gemm_16bit(DType dtype, cublasOperation_t trans_a, cublasOperation_t trans_b, std::int64_t m, std::int64_t n,
                  std::int64_t k, const float* a, std::int64_t a_count, std::int64_t lda, std::int64_t stride_a,
                  const float* b, std::int64_t b_count, std::int64_t ldb, std::int64_t stride_b, float beta, float* c,
                  std::int64_t ldc, std::int64_t stride_c, std::int64_t batch);

  // ---- cuDNN descriptor caches (descriptors live as long as the state) ----
  cudnnTensorDescriptor_t tensor_nchw(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, const char* op);
  // An NHWC image tensor; dims in our (n, h, w, c) order; float32 unless `type` says otherwise.
  cudnnTensorDescriptor_t tensor_nhwc(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, const char* op,
                                      cudnnDataType_t type = CUDNN_DATA_FLOAT);
  // Row-major [rows, cols] as NCHW (rows, cols, 1, 1).
  cudnnTensorDescriptor_t rows_view(std::int64_t rows, std::int64_t cols, const char* op) {
    return tensor_nchw(rows, cols, 1, 1, op);
  }
  // A KRSC filter (K filters of R x S x C), i.e. cuDNN's NHWC filter layout.
  cudnnFilterDescriptor_t filter_krsc(std::int64_t k, std::int64_t r, std::int64_t s, std::int64_t c, const char* op,
                                      cudnnDataType_t type = CUDNN_DATA_FLOAT);
  // The same filter in cuDNN's NCHW filter layout, KCRS (K filters of C x R x S).
  cudnnFilterDescriptor_t filter_kcrs(std::int64_t k, std::int64_t c, std::int64_t r, std::int64_t s, const char* op);
  // Cross-correlation (Keras' convolution), float32 compute, with `groups` channel groups
  // (cudnnSetConvolutionGroupCount; the input channels for a depthwise one). For float32 data
  // (`data` CUDNN_DATA_FLOAT) CUDNN_FMA_MATH (no TF32); for 16-bit data ("pseudo half/bfloat16":
  // 16-bit tensors, float32 compute) CUDNN_TENSOR_OP_MATH, tensor cores allowed. Each data type
  // has its own descriptor (the 16-bit one's math type is set per run, see conv.cpp).
  cudnnConvolutionDescriptor_t convolution(std::int64_t pad_h, std::int64_t pad_w, std::int64_t stride_h,
                                           std::int64_t stride_w, std::int64_t groups, const char* op,
                                           cudnnDataType_t data = CUDNN_DATA_FLOAT);
  cudnnPoolingDescriptor_t pooling(cudnnPoolingMode_t mode, std::int64_t window_h, std::int64_t window_w,
                                   std::int64_t pad_h, std::int64_t pad_w, std::int64_t stride_h, std::int64_t stride_w,
                                   const char* op);
  cudnnActivationDescriptor_t activation_desc(const ActivationFn& act);  // relu, sigmoid or tanh
  // The activations cuDNN runs itself (activation_desc): plain relu, sigmoid and tanh. The rest
  // run on kerascpp's kernels (kernels/activations.cu).
  static bool has_cudnn_mode(const ActivationFn& act) {
    return act == ActivationKind::relu || act == ActivationKind::sigmoid || act == ActivationKind::tanh;
  }
  cudnnOpTensorDescriptor_t op_tensor(cudnnOpTensorOp_t op);  // float compute

  // ---- plan caches ----
  std::unordered_map<ConvAlgoKey, ConvAlgoChoice, ConvAlgoKeyHash> conv_algos;
  std::map<std::array<std::int64_t, 8>, std::unique_ptr<DensePlan>> dense_plans;
  std::map<std::array<std::int64_t, 10>, std::unique_ptr<AvgPoolFactors>> avg_pool_factors;
  std::map<std::int64_t, std::int64_t> bn_widths;  // rows M -> the W of batch norm's NHWC view (batchnorm_cudnn.cpp)
  bool bn_nchw_view = false;                       // cuDNN refused batch norm on the NHWC view once: use the NCHW one
  ConvEngine conv_engine = ConvEngine::timed;      // KERASCPP_GPU_CONV (conv_route.cpp)
  bool bn_cudnn = false;  // KERASCPP_GPU_BN=cudnn: cuDNN's batch norm instead of kerascpp's kernels

  // ---- shared helpers (device pointers; all queued on the stream) ----
  // y = act(x) over a row-major [rows, cols] tensor; softmax, log_softmax and sparsemax run over
  // each row (glu is refused: it halves the row). x == y is fine.
  void activation_forward(const ActivationFn& act, const float* x, float* y, std::int64_t rows, std::int64_t cols,
                          const char* op);
  // y[r, :] += b for every row r of a row-major [rows, cols] y.
  void add_row_bias(const float* b, float* y, std::int64_t rows, std::int64_t cols, const char* op);
  // A HWIO convolution kernel `w`, read as row-major [rows = kh*kw*cin, filters], transposed into
  // the kernel buffer: cuDNN's KRSC filter layout (conv.cpp, conv_nchw.cpp).
  const float* krsc_kernel(const float* w, std::int64_t rows, std::int64_t filters) {
    float* krsc = kernel_buffer(rows * filters);
    transpose(w, krsc, rows, filters, 0.f);
    return krsc;
  }
  // out = aᵀ (+ beta · out): a is row-major [rows, cols], out row-major [cols, rows].
  // beta is 0 (overwrite; out is not read) or 1 (accumulate).
  void transpose(const float* a, float* out, std::int64_t rows, std::int64_t cols, float beta);
  // Explicit padding of an NHWC tensor x[n, h, w, c] into xp[n, h+top+bottom, w+left+right, c]:
  // the border gets `fill`, the interior a copy of x. crop_nhwc is the inverse (interior of xp
  // copied out into x).
  void pad_nhwc(const float* x, float* xp, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c,
                std::int64_t top, std::int64_t bottom, std::int64_t left, std::int64_t right, float fill,
                const char* op);
  void crop_nhwc(const float* xp, float* x, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c,
                 std::int64_t top, std::int64_t bottom, std::int64_t left, std::int64_t right);
  // dst = src re-laid out from one 4-D float32 descriptor's layout into the other's (NHWC <-> NCHW;
  // cudnnTransformTensor), overwriting dst.
  void transform(cudnnTensorDescriptor_t src_desc, const float* src, cudnnTensorDescriptor_t dst_desc, float* dst);
  void copy(const float* src, float* dst, std::int64_t count);  // device to device, skipped when src == dst
  void zero(float* dst, std::int64_t count);
  void fill(float* dst, std::int64_t count, float value);

 private:
  cudnnTensorDescriptor_t tensor_4d(cudnnTensorFormat_t format, std::int64_t n, std::int64_t c, std::int64_t h,
                                    std::int64_t w, const char* op, cudnnDataType_t type = CUDNN_DATA_FLOAT);
  cudnnFilterDescriptor_t filter_4d(cudnnTensorFormat_t format, std::int64_t k, std::int64_t c, std::int64_t r,
                                    std::int64_t s, const char* op, cudnnDataType_t type);
  DeviceBuffer workspace_, kernel_, pad_, pad_grad_, scratch_, small_, ones_, zeros_, operand_a_, operand_b_,
      operand_out_, nchw_a_, nchw_b_, kernel_kcrs_;
  std::int64_t ones_count_ = 0, zeros_count_ = 0;
  std::map<std::array<std::int64_t, 6>, cudnnTensorDescriptor_t> tensor_descs_;
  std::map<std::array<std::int64_t, 6>, cudnnFilterDescriptor_t> filter_descs_;
  std::map<std::array<std::int64_t, 6>, cudnnConvolutionDescriptor_t> conv_descs_;
  std::map<std::array<std::int64_t, 7>, cudnnPoolingDescriptor_t> pool_descs_;
  std::map<int, cudnnActivationDescriptor_t> activation_descs_;
  std::map<int, cudnnOpTensorDescriptor_t> op_tensor_descs_;
};

// cuDNN (legacy API) takes int dimensions and indexes tensors with 32 bits: checks that `value`
// fits, else throws naming the op.
int cudnn_int(std::int64_t value, const char* op, const char* what);
void check_cudnn_elements(std::int64_t count, const char* op, const char* what);

}  // namespace kerascpp::cuda
