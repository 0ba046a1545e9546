// Discretization: bin ids by binary search over the boundaries (numpy's digitize, right=False),
// on the host, then encode_categorical for the encoded modes. adapt() follows Keras 3's
// summarize / merge_summaries / compress_summary step by step (float32 summaries, float64
// interpolation) so the boundaries equal Keras' for the same batches.
#include "kerascpp/layers/discretization.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "categorical_encoding.hpp"
#include "check.hpp"
#include "kerascpp/core/layer_config.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {
namespace {

// Keras' summary: values (increasing) and their weights, both float32.
struct Summary {
  std::vector<float> values, weights;
};

// numpy.interp(x, xp, fp) for increasing xp: fp clamped at both ends, linear between.
double interp(double x, const std::vector<double>& xp, const std::vector<double>& fp) {
  if (x > xp.back()) return fp.back();
  if (x < xp.front()) return fp.front();
  const auto j = static_cast<std::size_t>(std::upper_bound(xp.begin(), xp.end(), x) - xp.begin()) - 1;
  if (j == xp.size() - 1 || xp[j] == x) return fp[j];
  const double slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
  return slope * (x - xp[j]) + fp[j];
}

// Keras' compress_summary: about 1 / epsilon points at evenly spaced cumulative weights.
Summary compress(const Summary& s, double epsilon) {
  if (static_cast<double>(s.values.size()) * epsilon < 1.0) return s;
  const auto n = static_cast<std::size_t>(std::ceil(1.0 / epsilon));  // numpy.arange(0, 1, epsilon)
  std::vector<double> cum(s.weights.size()), cum_percent(s.weights.size()), values(s.values.begin(), s.values.end());
  float running = 0.f;  // float32 cumsum, as numpy's on a float32 row
  for (std::size_t i = 0; i < s.weights.size(); ++i) cum[i] = running += s.weights[i];
  for (std::size_t i = 0; i < cum.size(); ++i)
    cum_percent[i] = static_cast<float>(static_cast<float>(cum[i]) / static_cast<float>(cum.back()));
  Summary out;
  double previous = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double percent = epsilon + static_cast<double>(i) * epsilon;
    out.values.push_back(static_cast<float>(interp(percent, cum_percent, values)));
    const double weight = interp(percent, cum_percent, cum);
    out.weights.push_back(static_cast<float>(weight - previous));
    previous = weight;
  }
  return out;
}

// Keras' summarize: every step-th of the sorted values, each weighing step.
Summary summarize(std::vector<float> values, double epsilon) {
  std::sort(values.begin(), values.end());
  const double increment = static_cast<double>(values.size()) / (1.0 / epsilon);
  const double step = std::max(increment, 1.0);
  Summary s;
  const auto stride = static_cast<std::size_t>(step);
  for (auto i = static_cast<std::size_t>(step - 1); i < values.size(); i += stride) {
    s.values.push_back(values[i]);
    s.weights.push_back(static_cast<float>(step));
  }
  return s;
}

// Keras' merge_summaries(next, previous): both, sorted by value, compressed.
Summary merge(const Summary& next, const Summary& previous, double epsilon) {
  Summary all = next;
  all.values.insert(all.values.end(), previous.values.begin(), previous.values.end());
  all.weights.insert(all.weights.end(), previous.weights.begin(), previous.weights.end());
  std::vector<std::size_t> order(all.values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return all.values[a] < all.values[b]; });
  Summary sorted;
  for (std::size_t i : order) {
    sorted.values.push_back(all.values[i]);
    sorted.weights.push_back(all.weights[i]);
  }
  return compress(sorted, epsilon);
}

}  // namespace

DiscretizationLayer::DiscretizationLayer(DiscretizationOptions options)
    : Layer(options.name), options_(std::move(options)) {
  KERASCPP_CHECK_VALUE(options_.output_mode == "int" || detail::is_encoding_mode(options_.output_mode),
                       "Discretization '{}': output_mode must be \"int\", \"one_hot\", \"multi_hot\" or \"count\", "
                       "got \"{}\"",
                       name(), options_.output_mode);
  KERASCPP_CHECK_VALUE(options_.bin_boundaries.has_value() != options_.num_bins.has_value(),
                       "Discretization '{}': give either bin_boundaries or num_bins (then call adapt()), not {}",
                       name(), options_.num_bins ? "both" : "neither");
  KERASCPP_CHECK_VALUE(!options_.num_bins || *options_.num_bins >= 0,
                       "Discretization '{}': num_bins must be >= 0, got {}", name(), options_.num_bins.value_or(0));
  KERASCPP_CHECK_VALUE(options_.epsilon > 0.0 && options_.epsilon <= 1.0,
                       "Discretization '{}': epsilon must be in (0, 1], got {}", name(), options_.epsilon);
  if (options_.bin_boundaries) {
    boundaries_ = *options_.bin_boundaries;
    KERASCPP_CHECK_VALUE(std::is_sorted(boundaries_.begin(), boundaries_.end()),
                         "Discretization '{}': bin_boundaries must be increasing", name());
  }
  const bool folds = options_.output_mode == "multi_hot" || options_.output_mode == "count";
  set_input_spec({.min_ndim = folds ? 2 : 1,
                  .max_ndim = options_.output_mode == "int" ? std::optional<int>() : std::optional<int>(2),
                  .layout = folds ? "(batch, k) values" : "(batch, ...) values"});
}

std::vector<Shape> DiscretizationLayer::compute_output_shapes(const std::vector<Shape>& in) {
  if (options_.output_mode == "int") return {in[0]};
  // A num_bins layer not adapted yet encodes into num_bins classes, as Keras' shape says.
  const std::int64_t classes = boundaries_.empty() && options_.num_bins ? *options_.num_bins : depth();
  return {detail::encoded_shape(in[0], options_.output_mode, classes)};
}

std::vector<Tensor> DiscretizationLayer::forward(ReplicaContext&, const std::vector<Tensor>& in, LayerState&) {
  KERASCPP_CHECK_STATE(options_.bin_boundaries || adapted_,
                       "Discretization '{}': call adapt(dataset) before using a layer made with num_bins", name());
  const std::vector<float> x = in[0].to_vector();
  std::vector<std::int64_t> bins(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    bins[i] = std::upper_bound(boundaries_.begin(), boundaries_.end(), x[i]) - boundaries_.begin();
  if (options_.output_mode != "int") {
    return {detail::encode_categorical(bins, in[0].shape(), options_.output_mode, depth(), in[0].device())};
  }
  // The ids as float32: kerascpp's graph types every layer output float32 (Keras: int32). The
  // values are exact, and CategoryEncoding reads them as ids.
  std::vector<float> ids(bins.begin(), bins.end());
  return {Tensor::from_vector(in[0].shape(), ids).to(in[0].device())};
}

std::vector<Tensor> DiscretizationLayer::backward(ReplicaContext&, const std::vector<Tensor>& in,
                                                  const std::vector<Tensor>&, const std::vector<Tensor>&,
                                                  LayerState& st) {
  // Piecewise constant: the gradient is zero almost everywhere.
  if (!st.need_input_grads) return {Tensor()};
  return {Tensor::zeros(in[0].shape(), DType::float32, in[0].device())};
}

Json DiscretizationLayer::get_config() const {
  nlohmann::json bounds = nullptr;
  if (options_.bin_boundaries || adapted_) {
    bounds = nlohmann::json::array();
    for (float b : boundaries_) bounds.push_back(detail::json_float(b));
  }
  return detail::Json({{"bin_boundaries", bounds},
                       {"num_bins", options_.num_bins ? nlohmann::json(*options_.num_bins) : nlohmann::json(nullptr)},
                       {"epsilon", options_.epsilon},
                       {"output_mode", options_.output_mode},
                       {"sparse", false},
                       {"name", name()}});
}

void DiscretizationLayer::adapt(const Dataset& data) {
  KERASCPP_CHECK_VALUE(options_.num_bins.has_value(),
                       "Discretization '{}': adapt() needs a layer made with num_bins, not bin_boundaries", name());
  Summary summary;
  bool any = false;
  auto it = data.make_iterator();
  for (Example e; it->next(e);) {
    KERASCPP_CHECK_VALUE(!e.empty(), "Discretization '{}': adapt() got an element with no tensors", name());
    std::vector<float> values = e[0].to_vector();
    if (values.empty()) continue;
    summary = merge(summarize(std::move(values), options_.epsilon), summary, options_.epsilon);
    any = true;
  }
  KERASCPP_CHECK_VALUE(any, "Discretization '{}': adapt() got a dataset with no values", name());
  // Keras' get_bin_boundaries: the summary compressed to num_bins points, the last dropped.
  Summary bins = compress(summary, 1.0 / static_cast<double>(*options_.num_bins));
  bins.values.pop_back();
  boundaries_ = bins.values;
  adapted_ = true;
}

void DiscretizationLayer::set_bin_boundaries(std::vector<float> boundaries) {
  KERASCPP_CHECK_VALUE(std::is_sorted(boundaries.begin(), boundaries.end()),
                       "Discretization '{}': bin_boundaries must be increasing", name());
  boundaries_ = std::move(boundaries);
  adapted_ = true;
}

std::shared_ptr<DiscretizationLayer> Discretization(DiscretizationOptions options) {
  return std::make_shared<DiscretizationLayer>(std::move(options));
}

KERASCPP_REGISTER_LAYER("Discretization", [](const LayerConfig& c) {
  c.expect("sparse", false, "a dense encoding");
  layers::DiscretizationOptions o{
      .epsilon = c.get<double>("epsilon", 0.01), .output_mode = c.str("output_mode", "int"), .name = c.name()};
  const Json* bounds = c.find("bin_boundaries");
  const Json* bins = c.find("num_bins");
  const bool has_bounds = bounds && !bounds->is_null(), has_bins = bins && !bins->is_null();
  if (has_bins) o.num_bins = bins->get<std::int64_t>();
  else if (has_bounds) o.bin_boundaries = bounds->get<std::vector<float>>();
  auto layer = layers::Discretization(std::move(o));
  // Adapted: both are saved, and the boundaries go on the num_bins layer, as in Keras' from_config.
  if (has_bins && has_bounds) layer->set_bin_boundaries(bounds->get<std::vector<float>>());
  return LayerRef(layer);
});

}  // namespace kerascpp::layers
