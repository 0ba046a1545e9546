// DnnState (see dnn_state.hpp): handles, caches, buffers and the helpers dnn_*.cpp share.
#include "backend/cuda/dnn_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>

#include "backend/cuda/device_runtime.hpp"
#include "backend/cuda/kernels/kernels.hpp"
#include "check.hpp"
#include "core/knobs.hpp"

namespace kerascpp::cuda {

namespace {

constexpr float kOne = 1.f, kZero = 0.f;

}  // namespace

int cudnn_int(std::int64_t value, const char* op, const char* what) {
  KERASCPP_CHECK_SHAPE(value >= 0 && value <= std::numeric_limits<int>::max(),
                       "{}: {} is {}, beyond the int range cuDNN accepts (at most {}); split the work, "
                       "e.g. use a smaller batch",
                       op, what, value, std::numeric_limits<int>::max());
  return static_cast<int>(value);
}

void check_cudnn_elements(std::int64_t count, const char* op, const char* what) {
  KERASCPP_CHECK_SHAPE(count <= std::numeric_limits<int>::max(),
                       "{}: {} holds {} elements; cuDNN indexes tensors with 32 bits (at most {}); use a "
                       "smaller batch",
                       op, what, count, std::numeric_limits<int>::max());
}

// ---------------------------------------------------------------------------- DeviceBuffer

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) device_release(device_, ptr_, bytes_);
}

void* DeviceBuffer::get(int device, std::size_t bytes) {
  if (bytes == 0) bytes = 1;  // a valid pointer even for empty requests
  if (ptr_ && bytes <= bytes_) return ptr_;
  if (ptr_) {
    device_release(device_, ptr_, bytes_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  ptr_ = device_allocate(device, bytes);
  device_ = device;
  bytes_ = bytes;
  return ptr_;
}

// ---------------------------------------------------------------------------- plans

DensePlan::~DensePlan() {
  if (a) cublasLtMatrixLayoutDestroy(a);
  if (b) cublasLtMatrixLayoutDestroy(b);
  if (d) cublasLtMatrixLayoutDestroy(d);
  if (desc) cublasLtMatmulDescDestroy(desc);
}

AvgPoolFactors::~AvgPoolFactors() {
  if (pinned) pinned_release(pinned, pinned_bytes);
}

// ---------------------------------------------------------------------------- DnnState

DnnState::DnnState(cudaStream_t s) : stream(s) {
  KCPP_CUDA_CHECK(cudaGetDevice(&device));
  KCPP_CUDA_CHECK(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device));
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
    workspace_limit = std::min(workspace_limit, std::max(total_bytes / 8, std::size_t{256} << 20));
  if (const char* env = ::kerascpp::detail::knob("KERASCPP_GPU_WORKSPACE_MB")) {
    char* end = nullptr;
    unsigned long long mb = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0' && mb > 0 && mb < (1ull << 24)) workspace_limit = static_cast<std::size_t>(mb) << 20;
  }
  if (const char* env = ::kerascpp::detail::knob("KERASCPP_CUDNN_ALGO_SEARCH"))
    conv_find = std::string_view(env) == "find";
  if (const char* env = ::kerascpp::detail::knob("KERASCPP_CUDNN_VERBOSE"))
    conv_verbose = *env && std::string_view(env) != "0";
  if (const char* env = ::kerascpp::detail::knob("KERASCPP_GPU_BN")) bn_cudnn = std::string_view(env) == "cudnn";
  if (const char* env = ::kerascpp::detail::knob("KERASCPP_GPU_GRAPHS")) record_graphs = std::string_view(env) != "0";
  if (const char* env = ::kerascpp::detail::knob("KERASCPP_GPU_CONV")) {
    const std::string_view v(env);
    conv_engine = v == "cudnn"       ? ConvEngine::cudnn
                  : v == "gemm"      ? ConvEngine::gemm
                  : v == "pointwise" ? ConvEngine::pointwise
                  : v == "nchw"      ? ConvEngine::nchw
                                     : ConvEngine::timed;
  }
  try {
    KCPP_CUBLAS_CHECK(cublasCreate(&blas));
    KCPP_CUBLAS_CHECK(cublasSetStream(blas, stream));
    // CUBLAS_DEFAULT_MATH: plain FP32 (TF32 tensor cores need CUBLAS_TF32_TENSOR_OP_MATH), so
    // results match the CPU backend to float32 rounding.
    KCPP_CUBLAS_CHECK(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
    KCPP_CUBLAS_CHECK(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST));
    KCPP_CUBLAS_CHECK(cublasLtCreate(&lt));
    KCPP_CUDNN_CHECK(cudnnCreate(&dnn));
    KCPP_CUDNN_CHECK(cudnnSetStream(dnn, stream));
  } catch (...) {
    if (dnn) cudnnDestroy(dnn);
    if (lt) cublasLtDestroy(lt);
    if (blas) cublasDestroy(blas);
    throw;
  }
}

DnnState::~DnnState() {
  // The backend synchronised its stream before destroying this state: nothing queued still
  // uses the descriptors or buffers. Errors are ignored (no throwing from a destructor).
  for (auto& [k, v] : tensor_descs_) cudnnDestroyTensorDescriptor(v);
  for (auto& [k, v] : filter_descs_) cudnnDestroyFilterDescriptor(v);
  for (auto& [k, v] : conv_descs_) cudnnDestroyConvolutionDescriptor(v);
  for (auto& [k, v] : pool_descs_) cudnnDestroyPoolingDescriptor(v);
  for (auto& [k, v] : activation_descs_) cudnnDestroyActivationDescriptor(v);
  for (auto& [k, v] : op_tensor_descs_) cudnnDestroyOpTensorDescriptor(v);
  dense_plans.clear();
  avg_pool_factors.clear();
  if (dnn) cudnnDestroy(dnn);
  if (lt) cublasLtDestroy(lt);
  if (blas) cublasDestroy(blas);
}

void* DnnState::workspace(std::size_t bytes, const char* op, const char* what) {
  if (bytes == 0) return nullptr;
  KERASCPP_CHECK_DEVICE(bytes <= workspace_limit,
                        "{}: {} needs {:.1f} MiB of GPU workspace but the limit is {} MiB; set "
                        "KERASCPP_GPU_WORKSPACE_MB higher or use a smaller batch",
                        op, what, static_cast<double>(bytes) / (1 << 20), workspace_limit >> 20);
  return workspace_.get(device, bytes);
}

void DnnState::forget_lazy_device_data() {
  ones_count_ = 0;
  zeros_count_ = 0;
  avg_pool_factors.clear();
}

const float* DnnState::ones(std::int64_t count) {
  if (count > ones_count_) {
    float* p = ones_.floats(device, count);
    fill(p, count, 1.f);
    ones_count_ = count;
  }
  return static_cast<const float*>(ones_.get(device, static_cast<std::size_t>(ones_count_) * sizeof(float)));
}

const float* DnnState::zeros(std::int64_t count) {
  if (count > zeros_count_) {
    float* p = zeros_.floats(device, count);
    zero(p, count);
    zeros_count_ = count;
  }
  return static_cast<const float*>(zeros_.get(device, static_cast<std::size_t>(zeros_count_) * sizeof(float)));
}

// ---------------------------------------------------------------------------- mixed precision

DType DnnState::gemm_dtype(DType requested) const {
  if (requested == DType::float16) return DType::float16;
  if (requested == DType::bfloat16 && cc_major >= 8) return DType::bfloat16;
  return DType::float32;
}

namespace {
kern::FloatType kern_type(DType d) { return d == DType::bfloat16 ? kern::kBfloat16 : kern::kFloat16; }
}  // namespace

void DnnState::to_16bit(const float* src, void* dst, DType dtype, std::int64_t count) {
  if (count <= 0) return;
  kern::cast(src, kern::kFloat32, dst, kern_type(dtype), count, stream);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void DnnState::from_16bit(const void* src, DType dtype, float* dst, std::int64_t count) {
  if (count <= 0) return;
  kern::cast(src, kern_type(dtype), dst, kern::kFloat32, count, stream);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void DnnState::gemm_16bit(DType dtype, cublasOperation_t trans_a, cublasOperation_t trans_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, const float* a, std::int64_t a_count, std::int64_t lda,
                          std::int64_t stride_a, const float* b, std::int64_t b_count, std::int64_t ldb,
                          std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c,
                          std::int64_t batch) {
  void* a16 = operand_a(a_count);
  void* b16 = operand_b(b_count);
  to_16bit(a, a16, dtype, a_count);
  to_16bit(b, b16, dtype, b_count);
  const cudaDataType_t t = dtype == DType::bfloat16 ? CUDA_R_16BF : CUDA_R_16F;
  if (batch == 1) {
    KCPP_CUBLAS_CHECK(cublasGemmEx_64(blas, trans_a, trans_b, m, n, k, &kOne, a16, t, lda, b16, t, ldb, &beta, c,
                                      CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  } else {
    KCPP_CUBLAS_CHECK(cublasGemmStridedBatchedEx_64(blas, trans_a, trans_b, m, n, k, &kOne, a16, t, lda, stride_a, b16,
                                                    t, ldb, stride_b, &beta, c, CUDA_R_32F, ldc, stride_c, batch,
                                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
}

// ---------------------------------------------------------------------------- descriptors

cudnnTensorDescriptor_t DnnState::tensor_nchw(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w,
                                              const char* op) {
  return tensor_4d(CUDNN_TENSOR_NCHW, n, c, h, w, op);
}

cudnnTensorDescriptor_t DnnState::tensor_nhwc(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c,
                                              const char* op, cudnnDataType_t type) {
  // NHWC descriptors still take (n, c, h, w); the format makes c the innermost (stride 1) axis.
  return tensor_4d(CUDNN_TENSOR_NHWC, n, c, h, w, op, type);
}

cudnnTensorDescriptor_t DnnState::tensor_4d(cudnnTensorFormat_t format, std::int64_t n, std::int64_t c, std::int64_t h,
                                            std::int64_t w, const char* op, cudnnDataType_t type) {
  const std::array<std::int64_t, 6> key{format == CUDNN_TENSOR_NHWC ? 1 : 0, n, c, h, w,
                                        static_cast<std::int64_t>(type)};
  auto it = tensor_descs_.find(key);
  if (it != tensor_descs_.end()) return it->second;
  check_cudnn_elements(n * c * h * w, op, "a tensor");
  const int in = cudnn_int(n, op, "a tensor dimension"), ic = cudnn_int(c, op, "a tensor dimension"),
            ih = cudnn_int(h, op, "a tensor dimension"), iw = cudnn_int(w, op, "a tensor dimension");
  cudnnTensorDescriptor_t desc = nullptr;
  KCPP_CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc));
  cudnnStatus_t st = cudnnSetTensor4dDescriptor(desc, format, type, in, ic, ih, iw);
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroyTensorDescriptor(desc);
    KCPP_CUDNN_CHECK(st);
  }
  tensor_descs_.emplace(key, desc);
  return desc;
}

cudnnFilterDescriptor_t DnnState::filter_krsc(std::int64_t k, std::int64_t r, std::int64_t s, std::int64_t c,
                                              const char* op, cudnnDataType_t type) {
  // Format NHWC for a filter means K, R, S, C from outermost to innermost ("KRSC" / OHWI).
  return filter_4d(CUDNN_TENSOR_NHWC, k, c, r, s, op, type);
}

cudnnFilterDescriptor_t DnnState::filter_kcrs(std::int64_t k, std::int64_t c, std::int64_t r, std::int64_t s,
                                              const char* op) {
  return filter_4d(CUDNN_TENSOR_NCHW, k, c, r, s, op, CUDNN_DATA_FLOAT);
}

cudnnFilterDescriptor_t DnnState::filter_4d(cudnnTensorFormat_t format, std::int64_t k, std::int64_t c, std::int64_t r,
                                            std::int64_t s, const char* op, cudnnDataType_t type) {
  const std::array<std::int64_t, 6> key{format == CUDNN_TENSOR_NHWC ? 1 : 0, k, r, s, c,
                                        static_cast<std::int64_t>(type)};
  auto it = filter_descs_.find(key);
  if (it != filter_descs_.end()) return it->second;
  check_cudnn_elements(k * r * s * c, op, "the kernel");
  const int ik = cudnn_int(k, op, "the filter count"), ir = cudnn_int(r, op, "the kernel height"),
            is = cudnn_int(s, op, "the kernel width"), ic = cudnn_int(c, op, "the input channel count");
  cudnnFilterDescriptor_t desc = nullptr;
  KCPP_CUDNN_CHECK(cudnnCreateFilterDescriptor(&desc));
  cudnnStatus_t st = cudnnSetFilter4dDescriptor(desc, type, format, ik, ic, ir, is);
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroyFilterDescriptor(desc);
    KCPP_CUDNN_CHECK(st);
  }
  filter_descs_.emplace(key, desc);
  return desc;
}

cudnnConvolutionDescriptor_t DnnState::convolution(std::int64_t pad_h, std::int64_t pad_w, std::int64_t stride_h,
                                                   std::int64_t stride_w, std::int64_t groups, const char* op,
                                                   cudnnDataType_t data) {
  const std::array<std::int64_t, 6> key{pad_h, pad_w, stride_h, stride_w, groups, static_cast<std::int64_t>(data)};
  auto it = conv_descs_.find(key);
  if (it != conv_descs_.end()) return it->second;
  const int ph = cudnn_int(pad_h, op, "the padding"), pw = cudnn_int(pad_w, op, "the padding"),
            sh = cudnn_int(stride_h, op, "the stride"), sw = cudnn_int(stride_w, op, "the stride"),
            gc = cudnn_int(groups, op, "the group count");
  cudnnConvolutionDescriptor_t desc = nullptr;
  KCPP_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&desc));
  // Keras' Conv2D is a cross-correlation. For float32 data CUDNN_FMA_MATH rules out tensor-core
  // kernels, which on Ampere and later would round float32 inputs to TF32 (CUDNN_DEFAULT_MATH
  // allows that). 16-bit data computes in float32 too (the "pseudo" half/bfloat16 configuration,
  // the only one with float32 accumulation) and may use tensor cores: CUDNN_TENSOR_OP_MATH.
  cudnnStatus_t st =
      cudnnSetConvolution2dDescriptor(desc, ph, pw, sh, sw, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
  if (st == CUDNN_STATUS_SUCCESS)
    st = cudnnSetConvolutionMathType(desc, data == CUDNN_DATA_FLOAT ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH);
  if (st == CUDNN_STATUS_SUCCESS && gc != 1) st = cudnnSetConvolutionGroupCount(desc, gc);
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroyConvolutionDescriptor(desc);
    KCPP_CUDNN_CHECK(st);
  }
  conv_descs_.emplace(key, desc);
  return desc;
}

cudnnPoolingDescriptor_t DnnState::pooling(cudnnPoolingMode_t mode, std::int64_t window_h, std::int64_t window_w,
                                           std::int64_t pad_h, std::int64_t pad_w, std::int64_t stride_h,
                                           std::int64_t stride_w, const char* op) {
  const std::array<std::int64_t, 7> key{
      static_cast<std::int64_t>(mode), window_h, window_w, pad_h, pad_w, stride_h, stride_w};
  auto it = pool_descs_.find(key);
  if (it != pool_descs_.end()) return it->second;
  const int wh = cudnn_int(window_h, op, "the pool height"), ww = cudnn_int(window_w, op, "the pool width"),
            ph = cudnn_int(pad_h, op, "the padding"), pw = cudnn_int(pad_w, op, "the padding"),
            sh = cudnn_int(stride_h, op, "the stride"), sw = cudnn_int(stride_w, op, "the stride");
  cudnnPoolingDescriptor_t desc = nullptr;
  KCPP_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&desc));
  cudnnStatus_t st = cudnnSetPooling2dDescriptor(desc, mode, CUDNN_PROPAGATE_NAN, wh, ww, ph, pw, sh, sw);
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroyPoolingDescriptor(desc);
    KCPP_CUDNN_CHECK(st);
  }
  pool_descs_.emplace(key, desc);
  return desc;
}

cudnnActivationDescriptor_t DnnState::activation_desc(const ActivationFn& act) {
  const int key = static_cast<int>(act.kind);
  auto it = activation_descs_.find(key);
  if (it != activation_descs_.end()) return it->second;
  cudnnActivationMode_t mode;
  switch (act.kind) {
    case ActivationKind::relu:
      KERASCPP_CHECK_VALUE(act == ActivationKind::relu,
                           "internal error: relu with arguments has no cuDNN activation mode");
      mode = CUDNN_ACTIVATION_RELU;
      break;
    case ActivationKind::sigmoid:
      mode = CUDNN_ACTIVATION_SIGMOID;
      break;
    case ActivationKind::tanh:
      mode = CUDNN_ACTIVATION_TANH;
      break;
    default:
      throw ValueError(fmt::format("internal error: activation {} has no cuDNN activation mode", activation_name(act)));
  }
  cudnnActivationDescriptor_t desc = nullptr;
  KCPP_CUDNN_CHECK(cudnnCreateActivationDescriptor(&desc));
  // NaN in, NaN out (as on the CPU), so a diverging model shows up in the loss.
  cudnnStatus_t st = cudnnSetActivationDescriptor(desc, mode, CUDNN_PROPAGATE_NAN, 0.0);
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroyActivationDescriptor(desc);
    KCPP_CUDNN_CHECK(st);
  }
  activation_descs_.emplace(key, desc);
  return desc;
}

cudnnOpTensorDescriptor_t DnnState::op_tensor(cudnnOpTensorOp_t op) {
  const int key = static_cast<int>(op);
  auto it = op_tensor_descs_.find(key);
  if (it != op_tensor_descs_.end()) return it->second;
  cudnnOpTensorDescriptor_t desc = nullptr;
  KCPP_CUDNN_CHECK(cudnnCreateOpTensorDescriptor(&desc));
  cudnnStatus_t st = cudnnSetOpTensorDescriptor(desc, op, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN);
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroyOpTensorDescriptor(desc);
    KCPP_CUDNN_CHECK(st);
  }
  op_tensor_descs_.emplace(key, desc);
  return desc;
}

// ---------------------------------------------------------------------------- helpers

void DnnState::activation_forward(const ActivationFn& act, const float* x, float* y, std::int64_t rows,
                                  std::int64_t cols, const char* op) {
  const std::int64_t n = rows * cols;
  if (n == 0) return;
  KERASCPP_CHECK_VALUE(!act.changes_shape() && (!act.along_axis() || act.axis == -1),
                       "{}: {} along axis {} cannot follow a matmul or convolution in place (it works along "
                       "the last axis and keeps the shape); apply it with activation_forward",
                       op, activation_name(act), act.axis);
  if (!has_cudnn_mode(act) && !act.along_axis() && act != ActivationKind::linear) {
    // The kinds cuDNN has no activation mode for: kerascpp's kernel (elementwise, in place is fine).
    kern::activation_forward(static_cast<int>(act.kind), act.alpha, act.beta, act.gamma, x, y, n, stream);
    KCPP_CUDA_CHECK(cudaGetLastError());
    return;
  }
  if (act.kind == ActivationKind::sparsemax) {
    kern::sparsemax_forward(x, y, rows, cols, 1, stream);  // one fibre per row; in place is fine
    KCPP_CUDA_CHECK(cudaGetLastError());
    return;
  }
  switch (act.kind) {
    case ActivationKind::linear:
      copy(x, y, n);
      return;
    case ActivationKind::log_softmax:
    case ActivationKind::softmax: {
      // The tensor viewed as NCHW (rows, classes, 1, 1); MODE_INSTANCE normalises over C*H*W =
      // the classes of each row. ACCURATE subtracts the row maximum first (as oneDNN does).
      // cuDNN does not document in-place softmax, so an aliased output goes through scratch.
      cudnnTensorDescriptor_t desc = rows_view(rows, cols, op);
      float* out = x == y ? scratch(n) : y;
      const cudnnSoftmaxAlgorithm_t algo =
          act.kind == ActivationKind::log_softmax ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
      KCPP_CUDNN_CHECK(cudnnSoftmaxForward(dnn, algo, CUDNN_SOFTMAX_MODE_INSTANCE, &kOne, desc, x, &kZero, desc, out));
      if (out != y) copy(out, y, n);
      return;
    }
    default: {
      // Elementwise: any view of the bytes does; cuDNN allows x == y with identical descriptors.
      cudnnTensorDescriptor_t desc = rows_view(rows, cols, op);
      KCPP_CUDNN_CHECK(cudnnActivationForward(dnn, activation_desc(act), &kOne, desc, x, &kZero, desc, y));
      return;
    }
  }
}

void DnnState::add_row_bias(const float* b, float* y, std::int64_t rows, std::int64_t cols, const char* op) {
  if (rows == 0 || cols == 0) return;
  // C = 1·A + 1·C with A = b as (1, cols, 1, 1) broadcast over the rows of y as (rows, cols, 1, 1).
  KCPP_CUDNN_CHECK(cudnnAddTensor(dnn, &kOne, tensor_nchw(1, cols, 1, 1, op), b, &kOne, rows_view(rows, cols, op), y));
}

void DnnState::transpose(const float* a, float* out, std::int64_t rows, std::int64_t cols, float beta) {
  if (rows == 0 || cols == 0) return;
  // Column-major view: a is cols x rows (lda = cols), out is rows x cols (ldc = rows), and
  // out = 1·aᵀ + beta·out. With beta = 0 the second operand is a again (transposed too), so the
  // old contents of out (possibly NaN) are never read; with beta = 1 it is out itself, which
  // cuBLAS allows in place when ldb == ldc and transb == N.
  if (beta == 0.f) {
    KCPP_CUBLAS_CHECK(
        cublasSgeam_64(blas, CUBLAS_OP_T, CUBLAS_OP_T, rows, cols, &kOne, a, cols, &kZero, a, cols, out, rows));
  } else {
    KCPP_CUBLAS_CHECK(
        cublasSgeam_64(blas, CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &kOne, a, cols, &beta, out, rows, out, rows));
  }
}

void DnnState::pad_nhwc(const float* x, float* xp, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c,
                        std::int64_t top, std::int64_t bottom, std::int64_t left, std::int64_t right, float fill_value,
                        const char* op) {
  const std::int64_t hp = h + top + bottom, wp = w + left + right;
  const std::int64_t total = n * hp * wp * c;
  if (total == 0) return;
  if (fill_value == 0.f) zero(xp, total);
  else fill(xp, total, fill_value);
  if (n * h * w * c == 0) return;
  // One 3-D copy: each image is a slice of h rows of w*c floats. Source rows are packed (pitch
  // w*c floats, h rows per slice); destination rows have pitch wp*c floats and hp rows per
  // slice, and the block starts `top` rows down and `left` pixels in. Offsets, pitches and the
  // width are in bytes for linear memory.
  const std::size_t row = static_cast<std::size_t>(w * c) * sizeof(float);
  const std::size_t prow = static_cast<std::size_t>(wp * c) * sizeof(float);
  cudaMemcpy3DParms p{};
  p.srcPtr = make_cudaPitchedPtr(const_cast<float*>(x), row, row, static_cast<std::size_t>(h));
  p.dstPtr = make_cudaPitchedPtr(xp, prow, prow, static_cast<std::size_t>(hp));
  p.srcPos = make_cudaPos(0, 0, 0);
  p.dstPos = make_cudaPos(static_cast<std::size_t>(left * c) * sizeof(float), static_cast<std::size_t>(top), 0);
  p.extent = make_cudaExtent(row, static_cast<std::size_t>(h), static_cast<std::size_t>(n));
  p.kind = cudaMemcpyDeviceToDevice;
  KCPP_CUDA_CHECK(cudaMemcpy3DAsync(&p, stream));
}

void DnnState::crop_nhwc(const float* xp, float* x, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c,
                         std::int64_t top, std::int64_t bottom, std::int64_t left, std::int64_t right) {
  if (n * h * w * c == 0) return;
  const std::int64_t hp = h + top + bottom, wp = w + left + right;
  // The inverse of pad_nhwc's copy: the interior block of xp into the packed x.
  const std::size_t row = static_cast<std::size_t>(w * c) * sizeof(float);
  const std::size_t prow = static_cast<std::size_t>(wp * c) * sizeof(float);
  cudaMemcpy3DParms p{};
  p.srcPtr = make_cudaPitchedPtr(const_cast<float*>(xp), prow, prow, static_cast<std::size_t>(hp));
  p.dstPtr = make_cudaPitchedPtr(x, row, row, static_cast<std::size_t>(h));
  p.srcPos = make_cudaPos(static_cast<std::size_t>(left * c) * sizeof(float), static_cast<std::size_t>(top), 0);
  p.dstPos = make_cudaPos(0, 0, 0);
  p.extent = make_cudaExtent(row, static_cast<std::size_t>(h), static_cast<std::size_t>(n));
  p.kind = cudaMemcpyDeviceToDevice;
  KCPP_CUDA_CHECK(cudaMemcpy3DAsync(&p, stream));
}

void DnnState::transform(cudnnTensorDescriptor_t src_desc, const float* src, cudnnTensorDescriptor_t dst_desc,
                         float* dst) {
  KCPP_CUDNN_CHECK(cudnnTransformTensor(dnn, &kOne, src_desc, src, &kZero, dst_desc, dst));
}

void DnnState::copy(const float* src, float* dst, std::int64_t count) {
  if (count <= 0 || src == dst) return;
  KCPP_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, static_cast<std::size_t>(count) * sizeof(float), cudaMemcpyDeviceToDevice, stream));
}

void DnnState::zero(float* dst, std::int64_t count) {
  if (count <= 0) return;
  KCPP_CUDA_CHECK(cudaMemsetAsync(dst, 0, static_cast<std::size_t>(count) * sizeof(float), stream));
}

void DnnState::fill(float* dst, std::int64_t count, float value) {
  // A kernel of our own: cudnnSetTensor on a flat (1, count, 1, 1) view ran one block column
  // (grid 1 x 65535) and took 7.2 ms to fill max pooling's padded ResNet-50 input on an H200.
  kern::fill(dst, value, count, stream);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace kerascpp::cuda
