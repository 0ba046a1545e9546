// CudaBackend's losses and metric helpers. Losses stay on the stream except the sparse one,
// which waits once to learn whether a label was out of range; metric helpers wait once for
// their double result.
#include "backend/cuda/kernel_common.hpp"
#include "backend/row_loss_formulas.hpp"

namespace kerascpp::cuda {

using ops::RowLayout;

namespace {

// Prepares loss [N] and, when defined, grad (pred's shape). Returns the grad pointer or null.
float* prepare_loss_outputs(const Tensor& pred, Tensor& loss, Tensor& grad, std::int64_t examples, Device device,
                            const char* op) {
  prepare_output_on(loss, {examples}, device, op, "loss");
  if (!grad.defined()) return nullptr;
  prepare_output_on(grad, pred.shape(), device, op, "grad");
  return grad.data<float>();
}

void require_class_target(const Tensor& target, const Tensor& pred, Device device, const char* op) {
  require_float_on(target, device, op, "target");
  op_shapes::check_one_hot_target(target, pred, op);
}

// The fields both crossentropies fill alike; the caller adds labels or target and the status.
kern::CrossentropyArgs crossentropy_args(const Tensor& pred, const RowLayout& l, bool from_logits, Tensor& loss,
                                         float* grad, float grad_scale, KernelState& ks) {
  kern::CrossentropyArgs a{};
  a.pred = pred.data<float>();
  a.from_logits = from_logits;
  a.rows = l.rows;
  a.classes = l.width;
  a.examples = l.examples;
  a.per_example = l.per_example;
  a.loss = loss.data<float>();
  a.grad = grad;
  a.grad_scale = l.per_example ? grad_scale / static_cast<float>(l.per_example) : 0.f;
  a.row_loss = l.per_example != 1 ? ks.scratch_doubles(static_cast<std::size_t>(l.rows)) : nullptr;
  a.status = ks.status();
  return a;
}

// Binary crossentropy and MSE: per-element losses averaged per example. `grad_factor` is the
// loss's derivative constant (2 for MSE), applied with grad_scale / width.
void element_loss(kern::ElementLossKind kind, float grad_factor, const Tensor& pred, const Tensor& target, Tensor& loss,
                  Tensor& grad, float grad_scale, Device device, KernelState& ks, cudaStream_t stream, const char* op,
                  float delta = 0.f) {
  const RowLayout l = ops::element_rows(pred, device, op);
  ops::require_target(target, pred, device, op);
  kern::ElementLossArgs a{};
  a.kind = kind;
  a.grad = prepare_loss_outputs(pred, loss, grad, l.examples, device, op);
  a.pred = pred.data<float>();
  a.target = target.data<float>();
  a.examples = l.examples;
  a.width = l.width;
  a.loss = loss.data<float>();
  a.grad_scale = l.width ? grad_factor * grad_scale / static_cast<float>(l.width) : 0.f;
  const std::size_t partials = kern::element_loss_scratch(l.examples, l.width);
  a.partials = partials ? ks.scratch_doubles(partials) : nullptr;
  a.delta = delta;
  kern::element_loss(a, stream);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

// ------------------------------------------------------------------------------------ losses

void CudaBackend::sparse_categorical_crossentropy(const Tensor& pred, const Tensor& labels, bool from_logits,
                                                  Tensor& loss, Tensor& grad, float grad_scale) {
  DeviceGuard guard(device_);
  const char* op = "sparse_categorical_crossentropy";
  const RowLayout l = ops::class_rows(pred, device(), op);
  const int label_type = ops::require_labels(labels, pred, l.rows, device(), op);
  float* pg = prepare_loss_outputs(pred, loss, grad, l.examples, device(), op);
  kern::CrossentropyArgs a = crossentropy_args(pred, l, from_logits, loss, pg, grad_scale, *kernels_);
  a.labels = labels.raw();
  a.label_type = label_type;
  kernels_->reset_status();
  kern::crossentropy(a, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
  const kern::Status& st = kernels_->fetch_status();
  if (st.bad_row != kern::kNoBadRow) ops::throw_bad_label(labels, st.bad_row, l.width, pred, stream_, op);
}

void CudaBackend::categorical_crossentropy(const Tensor& pred, const Tensor& target, bool from_logits, Tensor& loss,
                                           Tensor& grad, float grad_scale) {
  DeviceGuard guard(device_);
  const char* op = "categorical_crossentropy";
  const RowLayout l = ops::class_rows(pred, device(), op);
  require_class_target(target, pred, device(), op);
  float* pg = prepare_loss_outputs(pred, loss, grad, l.examples, device(), op);
  kern::CrossentropyArgs a = crossentropy_args(pred, l, from_logits, loss, pg, grad_scale, *kernels_);
  a.target = target.data<float>();
  kern::crossentropy(a, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::binary_crossentropy(const Tensor& pred, const Tensor& target, bool from_logits, Tensor& loss,
                                      Tensor& grad, float grad_scale) {
  DeviceGuard guard(device_);
  element_loss(from_logits ? kern::kBinaryCrossentropyLogits : kern::kBinaryCrossentropyProbs, 1.f, pred, target, loss,
               grad, grad_scale, device(), *kernels_, stream_, "binary_crossentropy");
}

void CudaBackend::mean_squared_error(const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                                     float grad_scale) {
  DeviceGuard guard(device_);
  element_loss(kern::kMeanSquaredError, 2.f, pred, target, loss, grad, grad_scale, device(), *kernels_, stream_,
               "mean_squared_error");
}

void CudaBackend::huber(const Tensor& pred, const Tensor& target, float delta, Tensor& loss, Tensor& grad,
                        float grad_scale) {
  DeviceGuard guard(device_);
  element_loss(kern::kHuber, 1.f, pred, target, loss, grad, grad_scale, device(), *kernels_, stream_, "huber", delta);
}

void CudaBackend::row_loss(RowLoss kind, const RowLossParams& params, const Tensor& pred, const Tensor& target,
                           Tensor& loss, Tensor& grad, float grad_scale) {
  DeviceGuard guard(device_);
  const char* op = op_shapes::row_loss_name(kind);
  require_float_on(pred, device(), op, "pred");
  const bool labelled = row_losses::takes_labels(kind);
  kern::RowLossArgs a{};
  if (!labelled) require_float_on(target, device(), op, "target");  // labels: require_labels below
  const RowLayout l = op_shapes::row_loss_rows_of(kind, pred, target, grad.defined());
  if (labelled) a.label_type = ops::require_labels(target, pred, l.rows, device(), op);
  a.kind = kind;
  a.params = params;
  a.grad = prepare_loss_outputs(pred, loss, grad, l.examples, device(), op);
  a.pred = pred.data<float>();
  a.target = labelled ? nullptr : target.data<float>();
  a.labels = labelled ? target.raw() : nullptr;
  a.rows = l.rows;
  a.width = l.width;
  a.examples = l.examples;
  a.per_example = l.per_example;
  a.loss = loss.data<float>();
  a.grad_scale = l.per_example ? static_cast<double>(grad_scale) / static_cast<double>(l.per_example) : 0.0;
  a.row_loss = l.per_example != 1 ? kernels_->scratch_doubles(static_cast<std::size_t>(l.rows)) : nullptr;
  a.status = kernels_->status();
  if (labelled) kernels_->reset_status();
  kern::row_loss(a, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
  if (!labelled) return;
  const kern::Status& st = kernels_->fetch_status();  // one wait, to learn whether a label was out of range
  if (st.bad_row != kern::kNoBadRow) ops::throw_bad_label(target, st.bad_row, l.width, pred, stream_, op);
}

// ----------------------------------------------------------------------------------- metrics
// Accuracies of class rows are per example (hits averaged over the rows of one example); the
// sum over examples of hits_n / rows_per_example is the total hit count / rows_per_example.

double CudaBackend::sparse_categorical_accuracy_sum(const Tensor& pred, const Tensor& labels) {
  DeviceGuard guard(device_);
  const char* op = "sparse_categorical_accuracy";
  const RowLayout l = ops::class_rows(pred, device(), op);
  const int label_type = ops::require_labels(labels, pred, l.rows, device(), op);
  if (l.examples == 0) return 0.0;
  kernels_->reset_status();
  kern::class_accuracy_hits(pred.data<float>(), nullptr, labels.raw(), label_type, l.rows, l.width, kernels_->status(),
                            stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
  const kern::Status& st = kernels_->fetch_status();
  if (st.bad_row != kern::kNoBadRow) ops::throw_bad_label(labels, st.bad_row, l.width, pred, stream_, op);
  return static_cast<double>(st.count) / static_cast<double>(l.per_example);
}

double CudaBackend::sparse_top_k_accuracy_sum(const Tensor& pred, const Tensor& labels, int k) {
  DeviceGuard guard(device_);
  const char* op = "sparse_top_k_categorical_accuracy";
  const RowLayout l = ops::class_rows(pred, device(), op);
  const int label_type = ops::require_labels(labels, pred, l.rows, device(), op);
  if (l.examples == 0) return 0.0;
  kernels_->reset_status();
  kern::top_k_hits(pred.data<float>(), labels.raw(), label_type, l.rows, l.width, k, kernels_->status(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
  const kern::Status& st = kernels_->fetch_status();
  if (st.bad_row != kern::kNoBadRow) ops::throw_bad_label(labels, st.bad_row, l.width, pred, stream_, op);
  return static_cast<double>(st.count) / static_cast<double>(l.per_example);
}

double CudaBackend::categorical_accuracy_sum(const Tensor& pred, const Tensor& target) {
  DeviceGuard guard(device_);
  const char* op = "categorical_accuracy";
  const RowLayout l = ops::class_rows(pred, device(), op);
  require_float_on(target, device(), op, "target");
  ops::require_same_shape(target, "target", pred, "pred", op);
  if (l.examples == 0) return 0.0;
  kernels_->reset_status();
  kern::class_accuracy_hits(pred.data<float>(), target.data<float>(), nullptr, 0, l.rows, l.width, kernels_->status(),
                            stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
  const kern::Status& st = kernels_->fetch_status();
  return static_cast<double>(st.count) / static_cast<double>(l.per_example);
}

double CudaBackend::binary_accuracy_sum(const Tensor& pred, const Tensor& target, float threshold) {
  DeviceGuard guard(device_);
  const char* op = "binary_accuracy";
  require_float_on(pred, device(), op, "pred");
  ops::require_target(target, pred, device(), op);
  kernels_->reset_status();
  kern::binary_accuracy_hits(pred.data<float>(), target.data<float>(), pred.numel(), threshold, kernels_->status(),
                             stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
  return static_cast<double>(kernels_->fetch_status().count);
}

double CudaBackend::absolute_error_sum(const Tensor& pred, const Tensor& target) {
  DeviceGuard guard(device_);
  const char* op = "absolute_error";
  require_float_on(pred, device(), op, "pred");
  ops::require_target(target, pred, device(), op);
  const std::int64_t n = pred.numel();
  double* scratch = kernels_->scratch_doubles(kern::reduce_scratch(n));
  kern::reduce_to_double(kern::kReduceAbsDiff, pred.data<float>(), target.data<float>(), n, scratch, kernels_->status(),
                         stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
  return kernels_->fetch_status().value;
}

double CudaBackend::sum(const Tensor& x) {
  DeviceGuard guard(device_);
  require_float_on(x, device(), "sum", "x");
  const std::int64_t n = x.numel();
  double* scratch = kernels_->scratch_doubles(kern::reduce_scratch(n));
  kern::reduce_to_double(kern::kReduceSum, x.data<float>(), nullptr, n, scratch, kernels_->status(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
  return kernels_->fetch_status().value;
}

}  // namespace kerascpp::cuda
