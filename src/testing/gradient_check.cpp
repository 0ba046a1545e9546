// The public gradient checker (kerascpp/testing/gradient_check.hpp): central differences in
// double of an objective computed in float32, compared element by element.
#include "kerascpp/testing/gradient_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "check.hpp"
#include "kerascpp/layers/input_layer.hpp"

namespace kerascpp::testing {
namespace {

std::vector<Tensor> clone_all(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (auto& t : ts) out.push_back(t.clone());
  return out;
}

void require_host_float(const Tensor& t, const std::string& what) {
  KERASCPP_CHECK_VALUE(t.defined(), "gradient check: {} is an undefined tensor", what);
  KERASCPP_CHECK_DEVICE(t.on_host(), "gradient check: {} is on {}; the checker runs on the CPU, pass .to(cpu)", what,
                        t.device().str());
  KERASCPP_CHECK_VALUE(t.dtype() == DType::float32, "gradient check: {} is {}, not float32", what,
                       dtype_name(t.dtype()));
}

// A layer the user made but never called has no variables yet: build it the way the
// functional API does, on Input()s of the per-example shapes.
void build_if_needed(const LayerRef& layer, const std::vector<Tensor>& inputs) {
  if (layer->built()) return;
  std::vector<KerasTensor> symbolic;
  for (auto& x : inputs) {
    KERASCPP_CHECK_SHAPE(x.rank() >= 1, "gradient check of layer '{}': inputs need a leading batch axis, got shape {}",
                         layer->name(), shape_str(x.shape()));
    symbolic.push_back(Input(Shape(x.shape().begin() + 1, x.shape().end())));
  }
  if (symbolic.size() == 1) (void)layer(symbolic[0]);
  else (void)layer(symbolic);
}

double element_error(double analytic, double numeric) {
  return std::fabs(analytic - numeric) / std::max({1.0, std::fabs(analytic), std::fabs(numeric)});
}

}  // namespace

bool GradientCheckResult::passed() const {
  return problems.empty() && checked > 0 && worst_error <= tolerance &&
         static_cast<double>(skipped) <= max_skipped_fraction * static_cast<double>(checked + skipped);
}

std::string GradientCheckResult::summary() const {
  std::string s = fmt::format(
      "gradient check {}: worst relative error {:.3g} (tolerance {:.3g}) at {}; {} elements "
      "checked, {} skipped at kinks",
      passed() ? "passed" : "FAILED", worst_error, tolerance, worst_at.empty() ? "-" : worst_at, checked, skipped);
  for (auto& p : problems) s += "; " + p;
  return s;
}

Tensor uniform_tensor(const Shape& shape, std::uint32_t seed, float low, float high) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (auto& x : v) x = dist(gen);
  return Tensor::from_vector(shape, v);
}

double weighted_sum(const std::vector<Tensor>& outputs, const std::vector<Tensor>& weights) {
  KERASCPP_CHECK_VALUE(outputs.size() == weights.size(), "weighted_sum: {} outputs but {} weights", outputs.size(),
                       weights.size());
  double l = 0.0;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    KERASCPP_CHECK_SHAPE(outputs[k].shape() == weights[k].shape(),
                         "weighted_sum: output {} has shape {} but its weights {}", k, shape_str(outputs[k].shape()),
                         shape_str(weights[k].shape()));
    const float* o = outputs[k].data<float>();
    const float* r = weights[k].data<float>();
    for (std::int64_t i = 0; i < outputs[k].numel(); ++i) l += static_cast<double>(o[i]) * static_cast<double>(r[i]);
  }
  return l;
}

void append_relu_kinks(std::vector<char>& kinks, const Tensor& relu_output) {
  const float* p = relu_output.data<float>();
  for (std::int64_t i = 0; i < relu_output.numel(); ++i) kinks.push_back(p[i] > 0.f ? 1 : 0);
}

void compare_gradient(GradientCheckResult& res, const std::string& label, Tensor t, const Tensor& analytic,
                      const Objective& objective, const Evaluation& base, const GradientCheckOptions& o) {
  res.tolerance = o.tolerance;
  res.max_skipped_fraction = o.max_skipped_fraction;
  if (!analytic.defined() || analytic.shape() != t.shape()) {
    res.problems.push_back(fmt::format("{}: gradient shape {} differs from {}", label,
                                       analytic.defined() ? shape_str(analytic.shape()) : "(undefined)",
                                       shape_str(t.shape())));
    return;
  }
  float* p = t.data<float>();
  const float* g = analytic.data<float>();
  std::int64_t n = t.numel();
  std::int64_t stride = std::max<std::int64_t>(1, (n + o.max_elements - 1) / o.max_elements);
  for (std::int64_t i = 0; i < n; i += stride) {
    float saved = p[i];
    // A step whose two sides see another kink pattern than the base point straddles a kink;
    // retry with smaller steps (batch statistics move every relu input a little), else skip.
    double numeric = 0.0;
    bool smooth = false;
    for (double eps = o.epsilon; !smooth && eps >= o.epsilon / 100; eps /= 10) {
      p[i] = saved + static_cast<float>(eps);
      double up_step = static_cast<double>(p[i]) - saved;  // the step actually taken in float32
      Evaluation up = objective();
      p[i] = saved - static_cast<float>(eps);
      double down_step = saved - static_cast<double>(p[i]);
      Evaluation down = objective();
      p[i] = saved;
      smooth = up.kinks == base.kinks && down.kinks == base.kinks;
      numeric = (up.value - down.value) / (up_step + down_step);
    }
    if (!smooth) {
      ++res.skipped;
      continue;
    }
    double a = g[i];
    double err = element_error(a, numeric);
    ++res.checked;
    if (!(err <= res.worst_error)) {  // NaN wins
      res.worst_error = err;
      res.worst_at =
          label + "[" + std::to_string(i) + "]: analytic " + std::to_string(a) + ", numeric " + std::to_string(numeric);
    }
  }
}

LayerGradients layer_gradients(ReplicaContext& ctx, const LayerRef& layer, const std::vector<Tensor>& inputs,
                               std::uint32_t seed) {
  KERASCPP_CHECK_VALUE(ctx.backend != nullptr, "gradient check: the ReplicaContext has no backend");
  const int replica = ctx.replica_id;
  LayerGradients g;
  LayerState st;
  g.outputs = layer->forward(ctx, inputs, st);
  for (std::size_t k = 0; k < g.outputs.size(); ++k)
    g.output_weights.push_back(uniform_tensor(g.outputs[k].shape(), seed + static_cast<std::uint32_t>(k)));
  for (Variable* v : layer->variables()) v->reset_grads(replica);
  auto dx = layer->backward(ctx, inputs, g.outputs, g.output_weights, st);
  if (dx.size() != inputs.size())
    g.problems.push_back(fmt::format("layer '{}': backward returned {} input gradients for {} inputs", layer->name(),
                                     dx.size(), inputs.size()));
  g.input_grads = clone_all(dx);  // may alias R or the inputs (identity-like layers)
  for (Variable* v : layer->trainable_variables()) {
    if (!v->has_grad(replica)) {
      g.problems.push_back(
          fmt::format("{} got no gradient (backward must write it, see Variable::take_first_grad)", v->path()));
      g.variable_grads.emplace_back();
      continue;
    }
    g.variable_grads.push_back(v->grad(replica).clone());
  }
  g.outputs = clone_all(g.outputs);
  return g;
}

GradientCheckResult check_layer_gradients(ReplicaContext& ctx, const LayerRef& layer, const std::vector<Tensor>& inputs,
                                          const GradientCheckOptions& o) {
  KERASCPP_CHECK_VALUE(layer.get() != nullptr, "gradient check: the LayerRef is empty");
  KERASCPP_CHECK_DEVICE(ctx.backend != nullptr && ctx.backend->device().kind == Device::Kind::cpu,
                        "gradient check of layer '{}': the checker needs a CPU backend in the ReplicaContext",
                        layer->name());
  for (std::size_t i = 0; i < inputs.size(); ++i)
    require_host_float(inputs[i], fmt::format("input {} of layer '{}'", i, layer->name()));
  build_if_needed(layer, inputs);
  // Inputs are perturbed in place: work on deep copies so the caller's tensors are never touched.
  const std::vector<Tensor> xs = clone_all(inputs);

  GradientCheckResult res;
  res.tolerance = o.tolerance;
  res.max_skipped_fraction = o.max_skipped_fraction;
  LayerGradients g = layer_gradients(ctx, layer, xs, o.seed);
  res.problems = g.problems;
  auto objective = [&]() {
    LayerState st;
    auto outs = layer->forward(ctx, xs, st);
    Evaluation e;
    e.value = weighted_sum(outs, g.output_weights);
    if (o.relu_outputs)
      for (auto& t : outs) append_relu_kinks(e.kinks, t);
    return e;
  };
  Evaluation base = objective();
  // The finite differences assume forward() is a function of the inputs and variables only.
  double first = weighted_sum(g.outputs, g.output_weights);
  if (!(std::fabs(base.value - first) <= 1e-6 * std::max(1.0, std::fabs(first))))
    res.problems.push_back(
        fmt::format("layer '{}': forward is not repeatable (objective {} then {}); a layer that "
                    "draws random numbers cannot be checked in training mode",
                    layer->name(), first, base.value));
  for (std::size_t i = 0; i < xs.size() && i < g.input_grads.size(); ++i)
    compare_gradient(res, layer->name() + " input " + std::to_string(i), xs[i], g.input_grads[i], objective, base, o);
  auto vars = layer->trainable_variables();
  for (std::size_t k = 0; k < vars.size() && k < g.variable_grads.size(); ++k) {
    if (!g.variable_grads[k].defined()) continue;  // already reported as a problem
    compare_gradient(res, vars[k]->path(), vars[k]->value(ctx.replica_id), g.variable_grads[k], objective, base, o);
  }
  return res;
}

GradientCheckResult check_layer_gradients(const LayerRef& layer, const std::vector<Tensor>& inputs,
                                          const GradientCheckOptions& options) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  ReplicaContext ctx;
  ctx.backend = backend.get();
  ctx.training = options.training;
  return check_layer_gradients(ctx, layer, inputs, options);
}

GradientCheckResult check_loss_gradients(const losses::Loss& loss, const Tensor& pred, const Tensor& target,
                                         const GradientCheckOptions& o) {
  require_host_float(pred, "the predictions");
  KERASCPP_CHECK_SHAPE(pred.rank() >= 1, "gradient check of loss '{}': pred needs a batch axis, got shape {}",
                       loss.name(), shape_str(pred.shape()));
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  const std::int64_t n = pred.dim(0);
  GradientCheckResult res;
  res.tolerance = o.tolerance;
  res.max_skipped_fraction = o.max_skipped_fraction;

  // The loss writes into tensors the caller allocated, as the engine does (see losses.hpp).
  Tensor per_example({n});
  Tensor grad(pred.shape());
  loss.compute(*backend, pred, target, per_example, grad, 1.0f);
  if (per_example.shape() != Shape{n})
    res.problems.push_back(fmt::format("loss '{}': the per-example loss has shape {}, expected ({},)", loss.name(),
                                       shape_str(per_example.shape()), n));
  Tensor analytic = grad.clone();

  // grad_scale must scale the gradient and nothing else.
  Tensor scaled(pred.shape());
  Tensor per_example_scaled({n});
  loss.compute(*backend, pred, target, per_example_scaled, scaled, 0.25f);
  if (per_example_scaled.to_vector() != per_example.to_vector())
    res.problems.push_back(fmt::format("loss '{}': the per-example loss depends on grad_scale", loss.name()));
  auto a = analytic.to_vector(), s = scaled.to_vector();
  if (a.size() == s.size()) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (element_error(0.25 * a[i], s[i]) > o.tolerance) {
        res.problems.push_back(
            fmt::format("loss '{}': grad with grad_scale 0.25 is {} at [{}], expected {} (0.25 x "
                        "the grad at scale 1)",
                        loss.name(), s[i], i, 0.25 * a[i]));
        break;
      }
  }

  Tensor p = pred.clone();  // perturbed in place
  auto objective = [&]() {
    Tensor l({n});
    Tensor no_grad;
    loss.compute(*backend, p, target, l, no_grad, 1.0f);
    Evaluation e;
    const float* pl = l.data<float>();
    for (std::int64_t i = 0; i < l.numel(); ++i) e.value += static_cast<double>(pl[i]);
    return e;
  };
  Evaluation base = objective();
  compare_gradient(res, "loss '" + loss.name() + "' d/dpred", p, analytic, objective, base, o);
  return res;
}

}  // namespace kerascpp::testing
