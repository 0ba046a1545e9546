// cuDNN convolution algorithms (legacy API): the choice for one problem, cached by key, and the
// run that falls back to the next candidate. Shared by the NHWC passes (conv.cpp) and the
// NCHW route (conv_nchw.cpp).
//
// Algorithms come from cudnnGet*Algorithm_v7 heuristics or, with KERASCPP_CUDNN_ALGO_SEARCH=find
// and always for the NCHW route's problems (key.nchw),
// from cudnnFind*Algorithm (each algorithm run and timed once per problem, fastest first;
// deterministic ones preferred, so reruns stay bit-identical where cuDNN allows): the first candidate that
// succeeds, is not a tensor-core (TF32) kernel and fits the workspace limit. The choice is
// cached per problem (ConvAlgoKey). Should cuDNN then refuse to run it ("not supported"), the
// next candidate is tried. Bias and activation follow the convolution as separate cuDNN calls.
// KERASCPP_CUDNN_VERBOSE=1 prints each choice (algorithm, measured time, workspace, rejected).
//
#pragma once
#include <fmt/format.h>

#include <vector>

#include "backend/cuda/checks.hpp"
#include "backend/cuda/conv_algo_key.hpp"
#include "backend/cuda/dnn_state.hpp"
#include "backend/op_shapes.hpp"

namespace kerascpp::cuda {

// The descriptors of one convolution problem as cuDNN sees it.
struct ConvDescs {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
};

// The algorithm for `key`: cached, or chosen by the heuristics (or cudnnFind), skipping
// `excluded` algorithms (ones that failed to run; a non-empty list replaces the cached choice).
// For a 16-bit key, no usable algorithm (or heuristics that refuse the configuration) gives a
// choice with `none` set, cached too, instead of an error: the caller then computes in float32.
// `s` is the shape the output must have (checked against cuDNN's).
ConvAlgoChoice choose_algo(DnnState& d, const ConvAlgoKey& key, const ConvDescs& cd, const op_shapes::ConvShape& s,
                           const char* op, const std::vector<int>& excluded);

// Runs one convolution pass with the chosen algorithm. Should cuDNN refuse to run it after all
// (a "not supported" status, or a pointer alignment the algorithm cannot take), the next
// candidate of the heuristics is tried, and the one that runs is cached. Returns false only
// for a 16-bit key once no candidate is left (the caller then computes in float32); a float32
// key throws instead.
template <class Launch>
bool run_conv(DnnState& d, const ConvAlgoKey& key, const ConvDescs& cd, const op_shapes::ConvShape& s, const char* op,
              const char* what, Launch&& launch) {
  std::vector<int> failed;
  cudnnStatus_t first = CUDNN_STATUS_SUCCESS;
  const bool sixteen = key.dtype != DType::float32;
  for (;;) {
    const ConvAlgoChoice algo = choose_algo(d, key, cd, s, op, failed);
    if (algo.none) return false;
    if (sixteen) KCPP_CUDNN_CHECK(cudnnSetConvolutionMathType(cd.conv, algo.math));
    void* ws = d.workspace(algo.workspace_bytes, op, what);
    const cudnnStatus_t st = launch(algo, ws);
    if (st == CUDNN_STATUS_SUCCESS) return true;
    if (first == CUDNN_STATUS_SUCCESS) first = st;
    // A 16-bit configuration the legacy API rejects as a bad parameter counts as not supported
    // too: the next candidate, and in the end the float32 path.
    const bool retry = CUDNN_STATUS_CATEGORY(st) == CUDNN_STATUS_NOT_SUPPORTED ||
                       st == CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER ||
                       (sixteen && CUDNN_STATUS_CATEGORY(st) == CUDNN_STATUS_BAD_PARAM);
    if (!retry || failed.size() >= 16) break;
    failed.push_back(algo.algo);
    // choose_algo throws, naming the problem, once no candidate is left.
  }
  throw DeviceError(
      fmt::format("{}: cuDNN failed to run {} for {}: {}", op, what, key.describe(), cudnnGetErrorString(first)));
}

}  // namespace kerascpp::cuda
