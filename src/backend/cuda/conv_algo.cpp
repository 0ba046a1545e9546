// cuDNN convolution algorithm choice (conv_algo.hpp).
#include "backend/cuda/conv_algo.hpp"

#include <algorithm>
#include <string>

#include "backend/cuda/device_runtime.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

namespace {

bool tensor_core(cudnnMathType_t m) { return m == CUDNN_TENSOR_OP_MATH || m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION; }

// The index of the first search result that succeeds, runs without tensor cores (float32 data:
// no TF32; 16-bit data may use them) and whose workspace (queried again for the algorithm) fits
// the limit, or -1. Measured results (`measured`, from cudnnFind) must also be deterministic
// unless none is, when a second pass takes the fastest nondeterministic one. `query` returns the
// workspace size of an algorithm under a math type or false when cuDNN cannot say.
template <class Perf, class Query>
int pick(const std::vector<Perf>& perf, int returned, std::size_t limit, const std::vector<int>& excluded,
         bool sixteen_bit, bool measured, Query&& query, ConvAlgoChoice& choice, std::string& rejected) {
  for (int i = 0; i < returned; ++i) {
    const Perf& r = perf[static_cast<std::size_t>(i)];
    if (r.status != CUDNN_STATUS_SUCCESS) continue;
    if (measured && r.determinism != CUDNN_DETERMINISTIC) {
      rejected += fmt::format(" algo {} (nondeterministic, {:.3f} ms);", static_cast<int>(r.algo), r.time);
      continue;
    }
    if (std::find(excluded.begin(), excluded.end(), static_cast<int>(r.algo)) != excluded.end()) {
      rejected += fmt::format(" algo {} (failed to run);", static_cast<int>(r.algo));
      continue;
    }
    if (!sixteen_bit && tensor_core(r.mathType)) {
      rejected += fmt::format(" algo {} (tensor cores);", static_cast<int>(r.algo));
      continue;
    }
    std::size_t bytes = 0;
    if (!query(r.algo, r.mathType, bytes)) continue;
    if (bytes > limit) {
      rejected += fmt::format(" algo {} ({:.1f} MiB workspace);", static_cast<int>(r.algo),
                              static_cast<double>(bytes) / (1 << 20));
      continue;
    }
    choice.algo = static_cast<int>(r.algo);
    choice.workspace_bytes = bytes;
    choice.math = r.mathType;
    return i;
  }
  if (measured) return pick(perf, returned, limit, excluded, sixteen_bit, false, query, choice, rejected);
  return -1;
}

}  // namespace

// The algorithm for `key`: cached, or chosen by the heuristics, skipping `excluded` algorithms
// (ones that failed to run; a non-empty list replaces the cached choice). For a 16-bit key,
// no usable algorithm (or heuristics that refuse the configuration) gives a choice with `none`
// set, cached too, instead of an error: the caller then computes in float32.
ConvAlgoChoice choose_algo(DnnState& d, const ConvAlgoKey& key, const ConvDescs& cd, const op_shapes::ConvShape& s,
                           const char* op, const std::vector<int>& excluded) {
  auto it = d.conv_algos.find(key);
  if (it != d.conv_algos.end() && excluded.empty()) return it->second;
  const bool sixteen = key.dtype != DType::float32;
  // Search status: a 16-bit configuration cuDNN refuses is "no algorithm", not an error.
  bool refused = false;
  auto search_status = [&](cudnnStatus_t st, const char* call) {
    if (st == CUDNN_STATUS_SUCCESS) return;
    if (sixteen) {
      refused = true;
      return;
    }
    throw_failure("cuDNN", call, cudnnGetErrorString(st), __FILE__, __LINE__);
  };
  // The math type a workspace query or run uses: the result's, on the 16-bit descriptor (the
  // float32 one keeps CUDNN_FMA_MATH).
  auto set_math = [&](cudnnMathType_t m) {
    if (sixteen) KCPP_CUDNN_CHECK(cudnnSetConvolutionMathType(cd.conv, m));
  };
  // The heuristics see the 16-bit descriptor as created (tensor ops allowed), whatever an
  // earlier run of another pass set on it.
  set_math(CUDNN_TENSOR_OP_MATH);

  // Sanity check, once per problem: cuDNN's output size for these descriptors is ours.
  int on = 0, oc = 0, oh = 0, ow = 0;
  KCPP_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(cd.conv, cd.x, cd.w, &on, &oc, &oh, &ow));
  KERASCPP_CHECK_DEVICE(!(on != s.n || oc != s.oc || oh != s.oh || ow != s.ow),
                        "{}: internal error: cuDNN computes a ({}, {}, {}, {}) output for {} but the geometry "
                        "gives ({}, {}, {}, {})",
                        op, on, oh, ow, oc, key.describe(), s.n, s.oh, s.ow, s.oc);

  ConvAlgoChoice choice;
  bool found = false;
  std::string rejected;
  const bool find = d.conv_find || key.nchw;
  // The chosen result, printed under KERASCPP_CUDNN_VERBOSE (time is -1 from the heuristics).
  auto chosen = [&](const auto& perf, int index) {
    found = index >= 0;
    if (!d.conv_verbose) return;
    if (!found) {
      fmt::print(stderr, "kerascpp cuDNN {}: {}: no algorithm;{}\n", find ? "find" : "heuristics", key.describe(),
                 rejected);
      return;
    }
    const auto& r = perf[static_cast<std::size_t>(index)];
    fmt::print(stderr, "kerascpp cuDNN {}: {}: algo {} ({:.3f} ms, {:.1f} MiB, math {}, {}){}{}\n",
               find ? "find" : "heuristics", key.describe(), static_cast<int>(r.algo), find ? r.time : -1.0,
               static_cast<double>(r.memory) / (1 << 20), static_cast<int>(r.mathType),
               r.determinism == CUDNN_DETERMINISTIC ? "deterministic" : "nondeterministic",
               rejected.empty() ? "" : "; rejected:", rejected);
  };
  switch (key.direction) {
    case ConvDirection::forward: {
      int max_count = 0;
      KCPP_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(d.dnn, &max_count));
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max_count, 1)));
      int returned = 0;
      const int count = static_cast<int>(perf.size());
      if (find)
        search_status(
            cudnnFindConvolutionForwardAlgorithm(d.dnn, cd.x, cd.w, cd.conv, cd.y, count, &returned, perf.data()),
            "cudnnFindConvolutionForwardAlgorithm");
      else
        search_status(
            cudnnGetConvolutionForwardAlgorithm_v7(d.dnn, cd.x, cd.w, cd.conv, cd.y, count, &returned, perf.data()),
            "cudnnGetConvolutionForwardAlgorithm_v7");
      if (refused) break;
      chosen(perf, pick(
                       perf, returned, d.workspace_limit, excluded, sixteen, find,
                       [&](cudnnConvolutionFwdAlgo_t a, cudnnMathType_t m, std::size_t& bytes) {
                         set_math(m);
                         return cudnnGetConvolutionForwardWorkspaceSize(d.dnn, cd.x, cd.w, cd.conv, cd.y, a, &bytes) ==
                                CUDNN_STATUS_SUCCESS;
                       },
                       choice, rejected));
      break;
    }
    case ConvDirection::backward_data: {
      int max_count = 0;
      KCPP_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(d.dnn, &max_count));
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max_count, 1)));
      int returned = 0;
      const int count = static_cast<int>(perf.size());
      if (find)
        search_status(
            cudnnFindConvolutionBackwardDataAlgorithm(d.dnn, cd.w, cd.y, cd.conv, cd.x, count, &returned, perf.data()),
            "cudnnFindConvolutionBackwardDataAlgorithm");
      else
        search_status(cudnnGetConvolutionBackwardDataAlgorithm_v7(d.dnn, cd.w, cd.y, cd.conv, cd.x, count, &returned,
                                                                  perf.data()),
                      "cudnnGetConvolutionBackwardDataAlgorithm_v7");
      if (refused) break;
      chosen(perf, pick(
                       perf, returned, d.workspace_limit, excluded, sixteen, find,
                       [&](cudnnConvolutionBwdDataAlgo_t a, cudnnMathType_t m, std::size_t& bytes) {
                         set_math(m);
                         return cudnnGetConvolutionBackwardDataWorkspaceSize(d.dnn, cd.w, cd.y, cd.conv, cd.x, a,
                                                                             &bytes) == CUDNN_STATUS_SUCCESS;
                       },
                       choice, rejected));
      break;
    }
    case ConvDirection::backward_filter: {
      int max_count = 0;
      KCPP_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(d.dnn, &max_count));
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max_count, 1)));
      int returned = 0;
      const int count = static_cast<int>(perf.size());
      if (find)
        search_status(cudnnFindConvolutionBackwardFilterAlgorithm(d.dnn, cd.x, cd.y, cd.conv, cd.w, count, &returned,
                                                                  perf.data()),
                      "cudnnFindConvolutionBackwardFilterAlgorithm");
      else
        search_status(cudnnGetConvolutionBackwardFilterAlgorithm_v7(d.dnn, cd.x, cd.y, cd.conv, cd.w, count, &returned,
                                                                    perf.data()),
                      "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
      if (refused) break;
      chosen(perf, pick(
                       perf, returned, d.workspace_limit, excluded, sixteen, find,
                       [&](cudnnConvolutionBwdFilterAlgo_t a, cudnnMathType_t m, std::size_t& bytes) {
                         set_math(m);
                         return cudnnGetConvolutionBackwardFilterWorkspaceSize(d.dnn, cd.x, cd.y, cd.conv, cd.w, a,
                                                                               &bytes) == CUDNN_STATUS_SUCCESS;
                       },
                       choice, rejected));
      break;
    }
  }
  if (!found && sixteen) {
    choice = ConvAlgoChoice{};
    choice.none = true;
    d.conv_algos[key] = choice;
    return choice;
  }
  KERASCPP_CHECK_DEVICE(found,
                        "{}: cuDNN offers no float32 (non-TF32) algorithm for the convolution {} within the {} "
                        "MiB workspace limit{}{}; set KERASCPP_GPU_WORKSPACE_MB higher or use a smaller batch",
                        op, key.describe(), d.workspace_limit >> 20, rejected.empty() ? "" : "; rejected:", rejected);
  d.conv_algos[key] = choice;
  return choice;
}

}  // namespace kerascpp::cuda
