// CudaBackend's optimizer updates: one fused elementwise kernel per step, in place on the
// variable and its slots (kernels/optimizers.cu).
#include <algorithm>
#include <utility>

#include "backend/cuda/kernel_common.hpp"
#include "backend/optimizer_rules.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

namespace {

void require_slot(const Tensor& slot, const Tensor& w, Device device, const char* op, const char* arg) {
  require_float_on(slot, device, op, arg);
  KERASCPP_CHECK_SHAPE(slot.shape() == w.shape(),
                       "{}: {} has shape {} but the variable has shape {}; optimizer slots must match their "
                       "variable",
                       op, arg, shape_str(slot.shape()), shape_str(w.shape()));
}

}  // namespace

void CudaBackend::sgd_update(Tensor& w, const Tensor& g, Tensor& velocity, float lr, float momentum, bool nesterov) {
  DeviceGuard guard(device_);
  const char* op = "sgd_update";
  require_float_on(w, device(), op, "w");
  require_slot(g, w, device(), op, "gradient");
  float* pv = nullptr;
  if (momentum != 0.f) {
    require_slot(velocity, w, device(), op, "velocity");
    pv = velocity.data<float>();
  }
  kern::sgd_update(w.data<float>(), g.data<float>(), pv, w.numel(), lr, momentum, nesterov, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::adam_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v, float lr_t, float beta_1, float beta_2,
                              float eps) {
  DeviceGuard guard(device_);
  const char* op = "adam_update";
  require_float_on(w, device(), op, "w");
  require_slot(g, w, device(), op, "gradient");
  require_slot(m, w, device(), op, "m");
  require_slot(v, w, device(), op, "v");
  kern::adam_update(w.data<float>(), g.data<float>(), m.data<float>(), v.data<float>(), w.numel(), lr_t, beta_1, beta_2,
                    eps, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::rmsprop_update(Tensor& w, const Tensor& g, Tensor& v, float lr, float rho, float eps) {
  DeviceGuard guard(device_);
  const char* op = "rmsprop_update";
  require_float_on(w, device(), op, "w");
  require_slot(g, w, device(), op, "gradient");
  require_slot(v, w, device(), op, "velocity");
  kern::rmsprop_update(w.data<float>(), g.data<float>(), v.data<float>(), w.numel(), lr, rho, eps, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::weight_decay_update(Tensor& w, float lr, float weight_decay) {
  DeviceGuard guard(device_);
  require_float_on(w, device(), "weight_decay_update", "w");
  kern::weight_decay_update(w.data<float>(), w.numel(), lr, weight_decay, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::adagrad_update(Tensor& w, const Tensor& g, Tensor& accumulator, float lr, float eps) {
  DeviceGuard guard(device_);
  const char* op = "adagrad_update";
  require_float_on(w, device(), op, "w");
  require_slot(g, w, device(), op, "gradient");
  require_slot(accumulator, w, device(), op, "accumulator");
  kern::adagrad_update(w.data<float>(), g.data<float>(), accumulator.data<float>(), w.numel(), lr, eps, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::nadam_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v, float lr, float beta_1, float beta_2,
                               float eps, float u, float u_next, float u_product, float beta_2_power) {
  DeviceGuard guard(device_);
  const char* op = "nadam_update";
  require_float_on(w, device(), op, "w");
  require_slot(g, w, device(), op, "gradient");
  require_slot(m, w, device(), op, "m");
  require_slot(v, w, device(), op, "v");
  kern::nadam_update(w.data<float>(), g.data<float>(), m.data<float>(), v.data<float>(), w.numel(), lr, beta_1, beta_2,
                     eps, u, u_next, u_product, beta_2_power, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::optimizer_update(const UpdateParams& params, Tensor& w, const Tensor& g,
                                   const std::vector<Tensor*>& slots) {
  DeviceGuard guard(device_);
  const char* op = "optimizer_update";
  require_float_on(w, device(), op, "w");
  const bool reads_gradient = optimizer_rules::reads_gradient(params.rule);
  if (reads_gradient) require_slot(g, w, device(), op, "gradient");
  const int needed = optimizer_rules::slot_count(params.rule);
  KERASCPP_CHECK_VALUE(static_cast<int>(slots.size()) >= needed, "{}: rule {} updates {} slots but {} were passed", op,
                       static_cast<int>(params.rule), needed, slots.size());
  float* s[3] = {nullptr, nullptr, nullptr};
  for (int k = 0; k < needed; ++k) {
    require_slot(*slots[static_cast<std::size_t>(k)], w, device(), op, "slot");
    s[k] = slots[static_cast<std::size_t>(k)]->data<float>();
  }
  kern::optimizer_update(params, w.data<float>(), reads_gradient ? g.data<float>() : nullptr, s[0], s[1], s[2],
                         w.numel(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

double CudaBackend::sum_squares(const Tensor& x) {
  DeviceGuard guard(device_);
  require_float_on(x, device(), "sum_squares", "x");
  const std::int64_t n = x.numel();
  double* scratch = kernels_->scratch_doubles(kern::reduce_scratch(n));
  kern::reduce_to_double(kern::kReduceSumSquares, x.data<float>(), nullptr, n, scratch, kernels_->status(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
  return kernels_->fetch_status().value;
}

bool CudaBackend::all_finite(const std::vector<Tensor>& xs) {
  DeviceGuard guard(device_);
  for (const Tensor& x : xs) require_float_on(x, device(), "all_finite", "x");
  kernels_->reset_status();
  for (const Tensor& x : xs) {
    kern::count_non_finite(x.data<float>(), x.numel(), kernels_->status(), stream_);
    KCPP_CUDA_CHECK(cudaGetLastError());
  }
  return kernels_->fetch_status().count == 0;  // one wait for every gradient
}

double CudaBackend::weight_penalty(const Tensor& w, float l1, float l2, Tensor& grad, float grad_scale) {
  return weight_penalties({{&w, l1, l2, &grad}}, grad_scale)();
}

std::function<double()> CudaBackend::weight_penalties(const std::vector<PenaltyTerm>& terms, float grad_scale) {
  if (terms.empty()) return [] { return 0.0; };  // nothing to wait for
  DeviceGuard guard(device_);
  const char* op = "weight_penalties";
  for (const PenaltyTerm& t : terms) {
    require_float_on(*t.w, device(), op, "w");
    if (t.grad && t.grad->defined()) require_slot(*t.grad, *t.w, device(), op, "grad");
  }
  // Slot 2i holds term i's Σ|w|, slot 2i+1 its Σw²: two exact double reductions per weight,
  // combined as the CPU backend combines them, read back together once the caller asks.
  kern::Status* slots = kernels_->result_slots(2 * terms.size());
  std::size_t largest = 1;
  for (const PenaltyTerm& t : terms) largest = std::max(largest, kern::reduce_scratch(t.w->numel()));
  double* scratch = kernels_->scratch_doubles(largest);
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const PenaltyTerm& t = terms[i];
    const std::int64_t n = t.w->numel();
    if (t.grad && t.grad->defined())
      kern::weight_penalty_grad(t.w->data<float>(), t.grad->data<float>(), n, t.l1, t.l2, grad_scale, stream_);
    if (t.l1 != 0.f)
      kern::reduce_to_double(kern::kReduceSumAbs, t.w->data<float>(), nullptr, n, scratch, &slots[2 * i], stream_);
    if (t.l2 != 0.f)
      kern::reduce_to_double(kern::kReduceSumSquares, t.w->data<float>(), nullptr, n, scratch, &slots[2 * i + 1],
                             stream_);
    KCPP_CUDA_CHECK(cudaGetLastError());
  }
  kernels_->queue_results();
  std::vector<std::pair<float, float>> factors;
  for (const PenaltyTerm& t : terms) factors.emplace_back(t.l1, t.l2);
  return [this, factors = std::move(factors), generation = kernels_->results_generation()] {
    DeviceGuard guard(device_);
    const kern::Status* r = kernels_->wait_results(generation);
    double total = 0.0;
    for (std::size_t i = 0; i < factors.size(); ++i) {
      const double abs_sum = factors[i].first != 0.f ? r[2 * i].value : 0.0;
      const double square_sum = factors[i].second != 0.f ? r[2 * i + 1].value : 0.0;
      total += static_cast<double>(factors[i].first) * abs_sum + static_cast<double>(factors[i].second) * square_sum;
    }
    return total;
  };
}

void CudaBackend::max_norm(Tensor& w, std::int64_t rows, float max_value) {
  DeviceGuard guard(device_);
  require_float_on(w, device(), "max_norm", "w");
  KERASCPP_CHECK_SHAPE(rows > 0 && w.numel() % rows == 0,
                       "max_norm: {} rows do not divide the {} elements of a {} tensor", rows, w.numel(),
                       shape_str(w.shape()));
  kern::max_norm(w.data<float>(), rows, w.numel() / rows, max_value, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace kerascpp::cuda
