// Key of the CUDA backend's convolution-algorithm cache: one cuDNN convolution problem (which
// pass, the NHWC input as handed to cuDNN, the filter count, kernel, strides, padding, group
// count: C for a depthwise convolution, 1 otherwise, and the data type of the tensors cuDNN
// sees: float32, or bfloat16/float16 under a mixed precision policy). Kept
// free of CUDA headers so the key's equality, hash and description are unit-tested on machines
// without a GPU (tests/test_conv_algo_key.cpp).
//
// When the backend pads an input explicitly (asymmetric padding, see conv.cpp) the key
// describes the problem cuDNN actually solves: the padded height/width and zero padding. `nchw`
// marks the problem of the NCHW route (conv_nchw.cpp: the same convolution on NCHW copies),
// whose algorithms differ from the NHWC problem's.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "kerascpp/backend/backend.hpp"  // Conv2DGeometry
#include "kerascpp/tensor/tensor.hpp"    // DType, dtype_name

namespace kerascpp::cuda {

enum class ConvDirection : std::uint8_t { forward, backward_data, backward_filter };

// The route one convolution pass takes (conv_route.cpp): cuDNN on the NHWC tensors, im2col +
// cuBLAS, or cuDNN on NCHW copies.
enum class ConvRoute : std::uint8_t { cudnn, gemm, nchw };

inline const char* conv_direction_name(ConvDirection d) {
  switch (d) {
    case ConvDirection::forward:
      return "forward";
    case ConvDirection::backward_data:
      return "backward_data";
    case ConvDirection::backward_filter:
      return "backward_filter";
  }
  return "unknown";
}

struct ConvAlgoKey {
  ConvDirection direction = ConvDirection::forward;
  std::int64_t n = 0, h = 0, w = 0, c = 0;  // input (NHWC) as handed to cuDNN
  std::int64_t k = 0;                       // output channels (filters)
  std::int64_t kernel_h = 0, kernel_w = 0;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  std::int64_t groups = 1;
  DType dtype = DType::float32;  // of the tensors cuDNN sees; the compute type is float32 always
  bool nchw = false;             // cuDNN sees NCHW copies (and a KCRS filter), not the NHWC tensors

  bool operator==(const ConvAlgoKey& o) const {
    return direction == o.direction && n == o.n && h == o.h && w == o.w && c == o.c && k == o.k &&
           kernel_h == o.kernel_h && kernel_w == o.kernel_w && stride_h == o.stride_h && stride_w == o.stride_w &&
           pad_top == o.pad_top && pad_left == o.pad_left && pad_bottom == o.pad_bottom && pad_right == o.pad_right &&
           groups == o.groups && dtype == o.dtype && nchw == o.nchw;
  }
  bool operator!=(const ConvAlgoKey& o) const { return !(*this == o); }

  // "forward x(8,32,32,3) filters 16 kernel 3x3 stride 1x1 pad t1 l1 b1 r1", for error messages;
  // " float16" / " bfloat16" follows for a 16-bit problem, " nchw" for the NCHW route's.
  std::string describe() const {
    std::string s = conv_direction_name(direction);
    s += " x(" + std::to_string(n) + "," + std::to_string(h) + "," + std::to_string(w) + "," + std::to_string(c) + ")";
    s += " filters " + std::to_string(k);
    s += " kernel " + std::to_string(kernel_h) + "x" + std::to_string(kernel_w);
    s += " stride " + std::to_string(stride_h) + "x" + std::to_string(stride_w);
    s += " pad t" + std::to_string(pad_top) + " l" + std::to_string(pad_left) + " b" + std::to_string(pad_bottom) +
         " r" + std::to_string(pad_right);
    if (groups != 1) s += " groups " + std::to_string(groups);
    if (dtype != DType::float32) s += std::string(" ") + dtype_name(dtype);
    if (nchw) s += " nchw";
    return s;
  }
};

// The key of pass `dir` over NHWC input (n, h, w, c) into k filters with g's kernel, strides and
// padding, in `groups` groups of `dtype` tensors.
inline ConvAlgoKey conv_algo_key(ConvDirection dir, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c,
                                 std::int64_t k, const Conv2DGeometry& g, std::int64_t groups, DType dtype) {
  ConvAlgoKey key;
  key.direction = dir;
  key.n = n;
  key.h = h;
  key.w = w;
  key.c = c;
  key.k = k;
  key.kernel_h = g.kernel_h;
  key.kernel_w = g.kernel_w;
  key.stride_h = g.stride_h;
  key.stride_w = g.stride_w;
  key.pad_top = g.pad_top;
  key.pad_left = g.pad_left;
  key.pad_bottom = g.pad_bottom;
  key.pad_right = g.pad_right;
  key.groups = groups;
  key.dtype = dtype;
  return key;
}

struct ConvAlgoKeyHash {
  // splitmix64's finalizer: every input bit affects every output bit.
  static constexpr std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
  }
  std::size_t operator()(const ConvAlgoKey& key) const noexcept {
    // Fields are folded in order, with a mix between them, so swapping two fields' values
    // (h and w, say) changes the hash too.
    std::uint64_t h = 0x2545f4914f6cdd1dULL;
    auto add = [&h](std::int64_t v) { h = mix(h + 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(v)); };
    add(static_cast<std::int64_t>(key.direction));
    add(key.n);
    add(key.h);
    add(key.w);
    add(key.c);
    add(key.k);
    add(key.kernel_h);
    add(key.kernel_w);
    add(key.stride_h);
    add(key.stride_w);
    add(key.pad_top);
    add(key.pad_left);
    add(key.pad_bottom);
    add(key.pad_right);
    add(key.groups);
    add(static_cast<std::int64_t>(key.dtype));
    add(key.nchw ? 1 : 0);
    return static_cast<std::size_t>(h);
  }
};

}  // namespace kerascpp::cuda
