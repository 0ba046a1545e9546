// Helpers of the GPU suite: seeded random host tensors, moving tensors between the host and a
// GPU, and the comparisons every GPU test uses.
//
// The one error measure (used for GPU-vs-CPU results and GPU-vs-CPU training alike):
//   rel_error(a, e) = max over elements i of |a_i − e_i| / max(1, |e_i|)
// i.e. a relative error for |e_i| >= 1 and an absolute error below 1 (the floor keeps values near
// zero, where relative error is meaningless, from failing on rounding). A NaN/Inf on either side
// or a shape mismatch counts as an infinite error.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backend/gpu_support.hpp"
#include "kerascpp/backend/backend.hpp"
#include "kerascpp/tensor/tensor.hpp"

namespace gputest {

namespace K = kerascpp;
using Vec = std::vector<float>;

// Tolerance of GPU-vs-CPU op results (the suite's contract: rel_error <= 1e-4).
constexpr double kOpTol = 1e-4;

inline int gpu_count() { return K::detail::gpu_availability().device_count; }
inline K::Device gpu(int index = 0) { return K::Device{K::Device::Kind::gpu, index}; }
inline K::Device host() { return K::Device{}; }

inline Vec random_vec(std::size_t n, std::uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Vec v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

// A float32 host tensor of uniform values in [lo, hi), the same for the same seed.
inline K::Tensor random_tensor(K::Shape shape, std::uint32_t seed, float lo = -1.f, float hi = 1.f) {
  auto n = static_cast<std::size_t>(K::shape_numel(shape));
  return K::Tensor::from_vector(std::move(shape), random_vec(n, seed, lo, hi));
}

// Integer class ids in [0, classes), as int32 values (convert with labels_as).
inline std::vector<std::int32_t> random_labels(std::size_t n, std::int64_t classes, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<std::int32_t> v(n);
  for (auto& l : v) l = static_cast<std::int32_t>(gen() % static_cast<std::uint32_t>(classes));
  return v;
}

// Labels of `dtype` (int32, int64 or uint8) and `shape` on the host.
inline K::Tensor labels_as(const std::vector<std::int32_t>& l, K::DType dtype, K::Shape shape) {
  switch (dtype) {
    case K::DType::int64:
      return K::Tensor::from_vector(std::move(shape), std::vector<std::int64_t>(l.begin(), l.end()));
    case K::DType::uint8:
      return K::Tensor::from_vector(std::move(shape), std::vector<std::uint8_t>(l.begin(), l.end()));
    default:
      return K::Tensor::from_vector(std::move(shape), l);
  }
}

// A copy on GPU `index` (undefined stays undefined).
inline K::Tensor on_gpu(const K::Tensor& t, int index = 0) { return t.defined() ? t.to(gpu(index)) : t; }
// A deep copy on the host (never shares storage with `t`, so later GPU work cannot change it).
inline K::Tensor on_host(const K::Tensor& t) { return t.on_host() ? t.clone() : t.to(host()); }

// A GPU tensor of `shape` filled with garbage (NaN), to prove an op overwrites its output.
inline K::Tensor gpu_garbage(const K::Shape& shape, int index = 0) {
  K::Tensor h(shape);
  h.fill(std::numeric_limits<float>::quiet_NaN());
  return h.to(gpu(index));
}

inline double rel_error(const Vec& actual, const Vec& expected) {
  if (actual.size() != expected.size()) return std::numeric_limits<double>::infinity();
  double worst = 0.0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    double a = actual[i], e = expected[i];
    if (!std::isfinite(a) || !std::isfinite(e)) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::fabs(a - e) / std::max(1.0, std::fabs(e)));
  }
  return worst;
}

// Where the worst element is, for failure messages.
inline std::string worst_element(const Vec& actual, const Vec& expected) {
  if (actual.size() != expected.size())
    return "sizes differ: " + std::to_string(actual.size()) + " vs " + std::to_string(expected.size());
  std::size_t at = 0;
  double worst = -1;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    double a = actual[i], e = expected[i];
    double err = (!std::isfinite(a) || !std::isfinite(e)) ? std::numeric_limits<double>::infinity()
                                                          : std::fabs(a - e) / std::max(1.0, std::fabs(e));
    if (err > worst) {
      worst = err;
      at = i;
    }
  }
  if (actual.empty()) return "empty";
  return "worst at element " + std::to_string(at) + ": gpu " + std::to_string(actual[at]) + " cpu " +
         std::to_string(expected[at]);
}

// CHECKs that `gpu_result` lives on `device`, has the CPU result's shape and rel_error <= tol.
inline void check_close(const K::Tensor& gpu_result, const K::Tensor& cpu_result, const std::string& what,
                        double tol = kOpTol, K::Device device = gpu()) {
  REQUIRE_MESSAGE(gpu_result.defined(), what << ": the GPU result is undefined");
  REQUIRE_MESSAGE(cpu_result.defined(), what << ": the CPU result is undefined");
  CHECK_MESSAGE(gpu_result.device() == device,
                what << ": result is on " << gpu_result.device().str() << ", expected " << device.str());
  CHECK_MESSAGE(gpu_result.shape() == cpu_result.shape(), what << ": shape " << K::shape_str(gpu_result.shape())
                                                               << " vs CPU " << K::shape_str(cpu_result.shape()));
  Vec a = gpu_result.to_vector(), e = cpu_result.to_vector();
  double err = rel_error(a, e);
  CHECK_MESSAGE(err <= tol, what << ": rel_error " << err << " > " << tol << " (" << worst_element(a, e) << ")");
}

// Byte-for-byte equality of two tensors on any devices (same shape and dtype required).
inline bool bit_equal(const K::Tensor& a, const K::Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  K::Tensor ha = a.to(host()), hb = b.to(host());
  return std::memcmp(ha.raw(), hb.raw(), ha.nbytes()) == 0;
}

// Max |a − b| over lists of weights (host or GPU), infinite on a size mismatch or a NaN.
inline double max_abs_diff(const std::vector<K::Tensor>& a, const std::vector<K::Tensor>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    Vec va = a[i].to_vector(), vb = b[i].to_vector();
    if (va.size() != vb.size()) return std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < va.size(); ++j) {
      double d = std::fabs(double(va[j]) - double(vb[j]));
      if (!std::isfinite(d)) return std::numeric_limits<double>::infinity();
      m = std::max(m, d);
    }
  }
  return m;
}

// rel_error over lists of weights (the worst tensor).
inline double max_rel_error(const std::vector<K::Tensor>& actual, const std::vector<K::Tensor>& expected) {
  if (actual.size() != expected.size()) return std::numeric_limits<double>::infinity();
  double m = 0;
  for (std::size_t i = 0; i < actual.size(); ++i)
    m = std::max(m, rel_error(actual[i].to_vector(), expected[i].to_vector()));
  return m;
}

// The kerascpp::Error message of f, "" when it does not throw one (other exceptions propagate).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const K::Error& e) { return e.what(); }
  return "";
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The GPU backend of `device` and a CPU backend to compare it with.
struct Backends {
  std::unique_ptr<K::Backend> cpu;
  std::unique_ptr<K::Backend> gpu;
};
inline Backends make_backends(int device = 0) {
  Backends b;
  b.cpu = K::make_cpu_backend(2);
  b.gpu = K::detail::make_gpu_backend(device);
  return b;
}

// Backends whose GPU one is made with the environment variable `name` set to `value` (the CUDA
// backend reads its switches when it is made); whatever the process had there is restored, so
// a gpu_check.sh variant run keeps its setting for the tests after this one.
inline Backends make_backends_with(const char* name, const char* value) {
  std::optional<std::string> before;
  if (const char* v = std::getenv(name)) before = v;
  ::setenv(name, value, 1);
  Backends b = make_backends();
  if (before) ::setenv(name, before->c_str(), 1);
  else ::unsetenv(name);
  return b;
}

}  // namespace gputest
