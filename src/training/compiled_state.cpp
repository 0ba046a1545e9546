#include "training/compiled_state.hpp"
#include "check.hpp"

#include <fmt/format.h>

namespace kerascpp::detail {

CompiledState::CompiledState(optimizers::OptimizerRef optimizer, losses::LossRef loss, std::vector<MetricSpec> metrics,
                             distribute::Strategy strategy, std::uint64_t step_seed)
    : optimizer_(std::move(optimizer)),
      loss_(std::move(loss)),
      metrics_(std::move(metrics)),
      strategy_(std::move(strategy)),
      step_seed_(step_seed) {}

std::vector<std::string> CompiledState::metrics_names() const {
  std::vector<std::string> out{"loss"};
  for (const MetricSpec& m : metrics_) out.push_back(m.name);
  return out;
}

std::vector<std::string> CompiledState::metric_names(bool weighted) const {
  std::vector<std::string> out;
  const std::string prefix = "weighted_";  // the log key of a weighted metric whose name was taken
  for (const MetricSpec& m : metrics_)
    if (m.weighted == weighted)
      out.push_back(weighted && m.name.rfind(prefix, 0) == 0 ? m.name.substr(prefix.size()) : m.name);
  return out;
}

StepTotals CompiledState::zero_totals() const {
  StepTotals t;
  for (const MetricSpec& m : metrics_) t.metric_totals.emplace_back(m.metric->num_totals(), 0.0);
  return t;
}

StepTotals CompiledState::shard_totals(Backend& backend, const Tensor& pred, const Tensor& y,
                                       const ShardWeights& weights, Tensor* grad, float grad_scale,
                                       const LossMask* mask, float loss_scale) const {
  if (mask && mask->active) return masked_shard_totals(backend, pred, y, *mask, weights.defined(), grad, loss_scale);
  StepTotals t = zero_totals();
  Tensor per_example({pred.dim(0)});
  Tensor no_grad;
  Tensor y_here = y.to(backend.device());
  loss_->compute(backend, pred, y_here, per_example, grad ? *grad : no_grad, grad_scale * loss_scale);
  if (weights.defined()) {
    // d(w·loss)/d(pred) = w·d(loss)/d(pred): the loss's own gradient, row by row.
    backend.scale_rows(per_example, weights.device);
    if (grad) backend.scale_rows(*grad, weights.device);
  }
  t.loss_sum = backend.sum(per_example);
  t.examples = static_cast<double>(pred.dim(0));  // Keras divides by N, not by Σw
  for (std::size_t m = 0; m < metrics_.size(); ++m) {
    t.metric_totals[m] = metrics_[m].weighted && weights.defined()
                             ? weighted_metric_totals(backend, metrics_[m], pred, y_here, weights.host)
                             : metric_totals(backend, metrics_[m], pred, y_here);
  }
  return t;
}

// The output [n, ..., C] as rows [rows, C] (one per mask element), the targets likewise: sparse
// labels [n, ...] as [rows], other targets [n, ..., C] as [rows, C]. Every built-in loss reduces
// the last axis only, so row r's loss is the loss of step r.
StepTotals CompiledState::masked_shard_totals(Backend& backend, const Tensor& pred, const Tensor& y,
                                              const LossMask& mask, bool weighted, Tensor* grad,
                                              float loss_scale) const {
  StepTotals t = zero_totals();
  const std::int64_t rows = mask.rows, classes = pred.numel() / rows;
  const Tensor pred_rows = pred.reshape({rows, classes});
  const Tensor y_here = y.to(backend.device());
  const bool sparse = loss_->accuracy_kind() == losses::Loss::AccuracyKind::sparse_categorical;
  KERASCPP_CHECK_SHAPE(y_here.numel() == (sparse ? rows : rows * classes),
                       "the targets' shape {} does not fit the masked output {}: {} expected", shape_str(y.shape()),
                       shape_str(pred.shape()), sparse ? "one label per step" : "the output's shape");
  const Tensor y_rows = sparse ? y_here.reshape({rows}) : y_here.reshape({rows, classes});
  Tensor per_row({rows});
  Tensor grad_rows = grad ? grad->reshape({rows, classes}) : Tensor();
  loss_->compute(backend, pred_rows, y_rows, per_row, grad_rows, static_cast<float>(mask.scale()) * loss_scale);
  const Tensor w = mask.row_weights_host.to(backend.device());
  backend.scale_rows(per_row, w);
  if (grad) backend.scale_rows(grad_rows, w);
  // Keras logs the batch's loss once per example: the shard's share of N · Σ mask·w·loss / Σ mask.
  t.loss_sum = backend.sum(per_row) * mask.batch_rows_global * mask.scale();
  t.examples = static_cast<double>(pred.dim(0));
  for (std::size_t m = 0; m < metrics_.size(); ++m) {
    const Tensor& mw = metrics_[m].weighted && weighted ? mask.row_weights_host : mask.mask_host;
    t.metric_totals[m] = weighted_metric_totals(backend, metrics_[m], pred_rows, y_rows, mw);
  }
  return t;
}

Logs CompiledState::logs_from(const StepTotals& t, const std::string& prefix) const {
  Logs logs;
  logs.set(prefix + "loss", t.examples > 0 ? t.loss_sum / t.examples : 0.0);
  for (std::size_t i = 0; i < metrics_.size(); ++i)
    logs.set(prefix + metrics_[i].name, metrics_[i].metric->result(t.metric_totals[i]));
  return logs;
}

}  // namespace kerascpp::detail
