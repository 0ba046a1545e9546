#include "training/sample_weights.hpp"

#include <cmath>

#include "check.hpp"
#include "tensor/low_precision.hpp"

namespace kerascpp::detail {

Tensor checked_sample_weight(const Tensor& sw, std::int64_t rows, const std::string& model) {
  const bool samplewise = sw.rank() == 1 || (sw.rank() == 2 && sw.dim(1) == 1);
  KERASCPP_CHECK_SHAPE(
      samplewise && sw.dim(0) == rows,
      "Model '{}': sample_weight has shape {} but the batch has {} examples; give one weight per example, "
      "shape ({},) or ({}, 1) (the dataset's third component)",
      model, shape_str(sw.shape()), rows, rows, rows);
  KERASCPP_CHECK_VALUE(sw.dtype() == DType::float32, "Model '{}': sample_weight is {}; give float32 weights", model,
                       dtype_name(sw.dtype()));
  Tensor flat = sw.to(Device{}).reshape({rows});
  const float* w = flat.data<float>();
  for (std::int64_t i = 0; i < rows; ++i)
    KERASCPP_CHECK_VALUE(std::isfinite(w[i]),
                         "Model '{}': sample_weight of example {} in the batch is {}; weights must be finite numbers",
                         model, i, w[i]);
  return flat;
}

void check_class_weight(const std::map<int, double>& class_weight, std::size_t num_outputs, std::int64_t classes,
                        const std::string& loss_name, const std::string& model) {
  // Same message as Keras' data adapters.
  KERASCPP_CHECK_VALUE(num_outputs == 1,
                       "Model '{}': `class_weight` is only supported for Models with a single output; this one has {}. "
                       "Pass per-example weights as the dataset's third component instead",
                       model, num_outputs);
  KERASCPP_CHECK_VALUE(loss_name != "mean_squared_error" && loss_name != "huber",
                       "Model '{}': class_weight needs class targets, but the loss is {} (a regression loss); use "
                       "per-example weights (the dataset's third component) to weight regression targets",
                       model, loss_name);
  const std::int64_t n = classes == 1 ? 2 : classes;  // one sigmoid unit: classes 0 and 1
  for (const auto& [id, weight] : class_weight) {
    KERASCPP_CHECK_VALUE(id >= 0 && id < n,
                         "Model '{}': class_weight has class {} but the model's output has {} classes (0..{}); remove "
                         "it or fix the class id",
                         model, id, n, n - 1);
    KERASCPP_CHECK_VALUE(std::isfinite(weight), "Model '{}': class_weight for class {} is {}; give a finite weight",
                         model, id, weight);
  }
}

Tensor class_weight_to_sample_weight(const Tensor& y_any, const std::map<int, double>& class_weight,
                                     const std::string& model) {
  Tensor y = y_any.to(Device{});
  const std::int64_t rows = y.rank() ? y.dim(0) : 0;
  const std::int64_t width = rows ? y.numel() / rows : 0;
  // [N] or [N, 1]: labels; [N, C]: one-hot rows (Keras' argmax over the last axis).
  const bool one_hot = y.rank() >= 2 && y.dim(-1) != 1;
  auto value = [&](std::int64_t i) -> double {
    switch (y.dtype()) {
      case DType::float32:
        return y.data<float>()[i];
      case DType::int32:
        return y.data<std::int32_t>()[i];
      case DType::int64:
        return static_cast<double>(y.data<std::int64_t>()[i]);
      case DType::uint8:
        return y.data<std::uint8_t>()[i];
      case DType::bfloat16:
        return low_precision::bfloat16_to_float(static_cast<const std::uint16_t*>(y.raw())[i]);
      case DType::float16:
        return low_precision::half_to_float(static_cast<const std::uint16_t*>(y.raw())[i]);
    }
    return 0;
  };
  Tensor out({rows}, DType::float32, Device{});
  float* w = out.data<float>();
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t cls = 0;
    if (one_hot) {
      const std::int64_t per_row = y.dim(-1);
      KERASCPP_CHECK_SHAPE(
          width == per_row,
          "Model '{}': class_weight needs targets of shape (N,), (N, 1) or one-hot (N, classes); got {}", model,
          shape_str(y.shape()));
      for (std::int64_t c = 1; c < per_row; ++c)
        if (value(r * per_row + c) > value(r * per_row + cls)) cls = c;
    } else {
      const double label = value(r * width);
      // Keras rounds; a label far from an integer means regression targets, a mistake here.
      KERASCPP_CHECK_VALUE(
          std::abs(label - std::round(label)) < 1e-3,
          "Model '{}': class_weight: target {} of example {} is not a class id; class_weight needs integer "
          "labels or one-hot targets",
          model, label, r);
      cls = static_cast<std::int64_t>(std::llround(label));
    }
    auto it = class_weight.find(static_cast<int>(cls));
    w[r] = it == class_weight.end() ? 1.f : static_cast<float>(it->second);
  }
  return out;
}

std::vector<double> weighted_metric_totals(Backend& backend, const MetricSpec& spec, const Tensor& pred,
                                           const Tensor& target, const Tensor& host_weights) {
  std::vector<double> out(spec.metric->num_totals(), 0.0);
  const float* w = host_weights.data<float>();
  const std::int64_t rows = host_weights.numel();
  for (std::int64_t begin = 0; begin < rows;) {
    std::int64_t end = begin + 1;
    while (end < rows && w[end] == w[begin]) ++end;
    if (w[begin] != 0.f) {  // a zero weight adds nothing (Keras: 0·v)
      std::vector<double> t = metric_totals(backend, spec, pred.slice(begin, end), target.slice(begin, end));
      for (std::size_t k = 0; k < t.size(); ++k) out[k] += static_cast<double>(w[begin]) * t[k];
    }
    begin = end;
  }
  return out;
}

}  // namespace kerascpp::detail
