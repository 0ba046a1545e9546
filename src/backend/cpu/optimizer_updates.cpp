// Optimizer steps in place, written as Keras 3's update_step computes them (same operation
// order, so results track Keras closely in float32). Elementwise, hence any thread split is
// bit-identical.
#include <fmt/format.h>

#include <cmath>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/parallel.hpp"

namespace kerascpp::cpu {

namespace {

void require_slot(const Tensor& slot, const Tensor& w, const char* op, const char* arg) {
  require_float(slot, op, arg);
  if (slot.shape() != w.shape())
    throw Error(
        fmt::format("{}: {} has shape {} but the variable has shape {}; optimizer slots must match their "
                    "variable",
                    op, arg, shape_str(slot.shape()), shape_str(w.shape())));
}

}  // namespace

void CpuBackend::sgd_update(Tensor& w, const Tensor& g, Tensor& velocity, float lr, float momentum, bool nesterov) {
  enter();
  const char* op = "sgd_update";
  require_float(w, op, "w");
  require_slot(g, w, op, "gradient");
  float* pw = w.data<float>();
  const float* pg = g.data<float>();
  if (momentum == 0.f) {
    parallel_for(w.numel(), kElementGrain, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) pw[i] -= pg[i] * lr;
    });
    return;
  }
  require_slot(velocity, w, op, "velocity");
  float* pv = velocity.data<float>();
  parallel_for(w.numel(), kElementGrain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      float v = pv[i] * momentum - pg[i] * lr;
      pv[i] = v;
      pw[i] += nesterov ? v * momentum - pg[i] * lr : v;
    }
  });
}

void CpuBackend::adam_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v, float lr_t, float beta_1, float beta_2,
                             float eps) {
  enter();
  const char* op = "adam_update";
  require_float(w, op, "w");
  require_slot(g, w, op, "gradient");
  require_slot(m, w, op, "m");
  require_slot(v, w, op, "v");
  float* pw = w.data<float>();
  const float* pg = g.data<float>();
  float* pm = m.data<float>();
  float* pv = v.data<float>();
  const float one_minus_b1 = 1.f - beta_1, one_minus_b2 = 1.f - beta_2;
  parallel_for(w.numel(), kElementGrain, [&](std::int64_t b, std::int64_t e) {
    // Local restrict pointers and no errno from sqrt (-fno-math-errno) let this vectorise;
    // vector sqrt and division are exact, so results equal the scalar loop bit for bit.
    float* __restrict ww = pw;
    const float* __restrict gg = pg;
    float* __restrict mm = pm;
    float* __restrict vv = pv;
#pragma omp simd
    for (std::int64_t i = b; i < e; ++i) {
      // Keras: m += (g − m)(1 − β1), v += (g² − v)(1 − β2), w −= m·lr_t / (√v + ε).
      float gi = gg[i];
      float mi = mm[i] + (gi - mm[i]) * one_minus_b1;
      float vi = vv[i] + (gi * gi - vv[i]) * one_minus_b2;
      mm[i] = mi;
      vv[i] = vi;
      ww[i] -= (mi * lr_t) / (std::sqrt(vi) + eps);
    }
  });
}

void CpuBackend::rmsprop_update(Tensor& w, const Tensor& g, Tensor& v, float lr, float rho, float eps) {
  enter();
  const char* op = "rmsprop_update";
  require_float(w, op, "w");
  require_slot(g, w, op, "gradient");
  require_slot(v, w, op, "velocity");
  float* pw = w.data<float>();
  const float* pg = g.data<float>();
  float* pv = v.data<float>();
  const float one_minus_rho = 1.f - rho;
  parallel_for(w.numel(), kElementGrain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      float gi = pg[i];
      float vi = rho * pv[i] + one_minus_rho * (gi * gi);
      pv[i] = vi;
      pw[i] -= (lr * gi) / std::sqrt(vi + eps);
    }
  });
}

}  // namespace kerascpp::cpu
