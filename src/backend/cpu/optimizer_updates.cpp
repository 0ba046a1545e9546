// Optimizer steps in place, written as Keras 3's update_step computes them (same operation
// order, so results track Keras closely in float32). Elementwise, hence any thread split is
// bit-identical.
//
// Slots that decay (Adam's and Nadam's moments, RMSprop's and SGD's velocities) are flushed to
// zero when they fall below FLT_MIN. Where a weight's gradient is zero for a while, its moment
// decays by β per step through ~150 denormal values on its way to zero, and denormal arithmetic
// is many times slower: on an Intel Xeon the Fashion-MNIST MLP's Adam update went from 10% to 38%
// of the step after ~800 steps, its throughput from 55-65k to 33-40k samples/s (bench/README.md,
// "The slow phases are denormal numbers"). A flushed slot changes no weight above ~1e-30 in
// magnitude: the update it would have made is below that. TensorFlow's CPU threads flush
// denormals everywhere; this does it only where they persist.
#include <fmt/format.h>

#include <cfloat>
#include <cmath>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/parallel.hpp"
#include "backend/optimizer_rules.hpp"
#include "check.hpp"
#include "simd_clones.hpp"

namespace kerascpp::cpu {

namespace {

void require_slot(const Tensor& slot, const Tensor& w, const char* op, const char* arg) {
  require_float(slot, op, arg);
  KERASCPP_CHECK_SHAPE(slot.shape() == w.shape(),
                       "{}: {} has shape {} but the variable has shape {}; optimizer slots must match their "
                       "variable",
                       op, arg, shape_str(slot.shape()), shape_str(w.shape()));
}

// A slot value below FLT_MIN in magnitude becomes 0 (see the top of the file); exact, and a
// compare and a blend in every vector build.
inline float flush_denormal(float x) { return std::fabs(x) < FLT_MIN ? 0.f : x; }

// Adam over one block. The update is bound by vector sqrt and division, so the library carries
// AVX-512 and AVX2 builds of this loop next to the baseline (x86-64-v2) one and the loader picks
// the widest the CPU has. This file is compiled with -ffp-contract=off (CMakeLists.txt), so no
// build fuses a multiply-add, and vector sqrt and division are correctly rounded: every build
// gives the scalar loop's bits.
KERASCPP_SIMD_CLONES void adam_block(float* __restrict w, const float* __restrict g, float* __restrict m,
                                     float* __restrict v, std::int64_t n, float lr_t, float one_minus_b1,
                                     float one_minus_b2, float eps) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) {
    // Keras: m += (g − m)(1 − β1), v += (g² − v)(1 − β2), w −= m·lr_t / (√v + ε).
    float gi = g[i];
    float mi = flush_denormal(m[i] + (gi - m[i]) * one_minus_b1);
    float vi = flush_denormal(v[i] + (gi * gi - v[i]) * one_minus_b2);
    m[i] = mi;
    v[i] = vi;
    w[i] -= (mi * lr_t) / (std::sqrt(vi) + eps);
  }
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
      float v = flush_denormal(pv[i] * momentum - pg[i] * lr);
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
    adam_block(pw + b, pg + b, pm + b, pv + b, e - b, lr_t, one_minus_b1, one_minus_b2, eps);
  });
}

void CpuBackend::nadam_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v, float lr, float beta_1, float beta_2,
                              float eps, float u, float u_next, float u_product, float beta_2_power) {
  enter();
  const char* op = "nadam_update";
  require_float(w, op, "w");
  require_slot(g, w, op, "gradient");
  require_slot(m, w, op, "m");
  require_slot(v, w, op, "v");
  float* pw = w.data<float>();
  const float* pg = g.data<float>();
  float* pm = m.data<float>();
  float* pv = v.data<float>();
  const float one_minus_b1 = 1.f - beta_1, one_minus_b2 = 1.f - beta_2;
  // Keras' scalars, rounded to float32 as its update_step does.
  const float m_den = 1.f - u_product * u_next, g_num = 1.f - u, g_den = 1.f - u_product, v_den = 1.f - beta_2_power;
  parallel_for(w.numel(), kElementGrain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      float gi = pg[i];
      float mi = flush_denormal(pm[i] + (gi - pm[i]) * one_minus_b1);
      float vi = flush_denormal(pv[i] + (gi * gi - pv[i]) * one_minus_b2);
      pm[i] = mi;
      pv[i] = vi;
      float m_hat = (u_next * mi) / m_den + (g_num * gi) / g_den;
      pw[i] -= (m_hat * lr) / (std::sqrt(vi / v_den) + eps);
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
      float vi = flush_denormal(rho * pv[i] + one_minus_rho * (gi * gi));
      pv[i] = vi;
      pw[i] -= (lr * gi) / std::sqrt(vi + eps);
    }
  });
}

void CpuBackend::weight_decay_update(Tensor& w, float lr, float weight_decay) {
  enter();
  require_float(w, "weight_decay_update", "w");
  float* pw = w.data<float>();
  parallel_for(w.numel(), kElementGrain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) pw[i] = pw[i] - (pw[i] * weight_decay) * lr;  // Keras: w - w*wd*lr
  });
}

void CpuBackend::adagrad_update(Tensor& w, const Tensor& g, Tensor& accumulator, float lr, float eps) {
  enter();
  const char* op = "adagrad_update";
  require_float(w, op, "w");
  require_slot(g, w, op, "gradient");
  require_slot(accumulator, w, op, "accumulator");
  float* pw = w.data<float>();
  const float* pg = g.data<float>();
  float* pa = accumulator.data<float>();
  parallel_for(w.numel(), kElementGrain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      float gi = pg[i];
      float ai = pa[i] + gi * gi;
      pa[i] = ai;
      pw[i] -= (lr * gi) / std::sqrt(ai + eps);
    }
  });
}

void CpuBackend::optimizer_update(const UpdateParams& params, Tensor& w, const Tensor& g,
                                  const std::vector<Tensor*>& slots) {
  enter();
  const char* op = "optimizer_update";
  require_float(w, op, "w");
  const bool reads_gradient = optimizer_rules::reads_gradient(params.rule);
  if (reads_gradient) require_slot(g, w, op, "gradient");
  const int needed = optimizer_rules::slot_count(params.rule);
  KERASCPP_CHECK_VALUE(static_cast<int>(slots.size()) >= needed, "{}: rule {} updates {} slots but {} were passed", op,
                       static_cast<int>(params.rule), needed, slots.size());
  float* s[3] = {nullptr, nullptr, nullptr};
  for (int k = 0; k < needed; ++k) {
    require_slot(*slots[static_cast<std::size_t>(k)], w, op, "slot");
    s[k] = slots[static_cast<std::size_t>(k)]->data<float>();
  }
  float* pw = w.data<float>();
  const float* pg = reads_gradient ? g.data<float>() : nullptr;
  optimizer_rules::dispatch_rule(params.rule, [&](auto tag) {
    parallel_for(w.numel(), kElementGrain, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i)
        optimizer_rules::apply_rule<decltype(tag)::value>(params, i, pw, pg, s[0], s[1], s[2]);
    });
  });
}

double CpuBackend::sum_squares(const Tensor& x) {
  enter();
  require_float(x, "sum_squares", "x");
  const float* p = x.data<float>();
  return chunked_sum(x.numel(), partials_, [&](std::int64_t b, std::int64_t e) {
    double s = 0.0;
    for (std::int64_t i = b; i < e; ++i) s += static_cast<double>(p[i]) * static_cast<double>(p[i]);
    return s;
  });
}

}  // namespace kerascpp::cpu
