#include "kerascpp/core/layer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "check.hpp"
#include "core/session_state.hpp"
#include "core/sublayers.hpp"
#include "kerascpp/core/initializers.hpp"

namespace kerascpp {

std::string to_snake_case(const std::string& s) {
  // Keras: insert '_' before an upper-case letter that follows a lower-case one or precedes one,
  // so "BatchNormalization" -> "batch_normalization", "Conv2D" -> "conv2d", "MaxPooling2D" -> "max_pooling2d".
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool upper = std::isupper(static_cast<unsigned char>(c));
    if (upper && i > 0) {
      char prev = s[i - 1];
      bool next_lower = i + 1 < s.size() && std::islower(static_cast<unsigned char>(s[i + 1]));
      if (std::islower(static_cast<unsigned char>(prev)) ||
          (std::isupper(static_cast<unsigned char>(prev)) && next_lower))
        out += '_';
    }
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

namespace {
// How many automatic names each base has handed out; clear_session() starts them again.
std::mutex g_names_mu;
std::map<std::string, int>& name_counts() {
  static std::map<std::string, int> counts;
  return counts;
}
}  // namespace

std::string unique_layer_name(const std::string& base) {
  std::lock_guard lock(g_names_mu);
  int n = name_counts()[base]++;
  return n == 0 ? base : fmt::format("{}_{}", base, n);
}

void detail::reset_unique_names() {
  std::lock_guard lock(g_names_mu);
  name_counts().clear();
}

namespace {
const KerasTensor& check_defined(const KerasTensor& t) {
  KERASCPP_CHECK_STATE(t.defined(), "KerasTensor is empty: create inputs with kerascpp::Input(shape)");
  return t;
}
}  // namespace

const Shape& KerasTensor::shape() const {
  return check_defined(*this).node_->output_shapes.at(static_cast<std::size_t>(index_));
}

DType KerasTensor::dtype() const { return check_defined(*this).node_->output_dtype; }

Layer::Layer(std::string name) : name_(std::move(name)) {}

const std::string& Layer::name() const {
  if (name_.empty()) name_ = unique_layer_name(to_snake_case(class_name()));
  return name_;
}

void Layer::set_dtype_policy(const std::string& policy) {
  try {
    dtype_policy_ = mixed_precision::DTypePolicy(policy);
  } catch (const ValueError& e) { throw ValueError(fmt::format("{}: {}", where(), e.what())); }
}

std::string Layer::snake_name() const { return to_snake_case(class_name()); }

Json Layer::get_config() const { return Json{{"name", name()}}; }

std::string Layer::where() const { return fmt::format("Layer '{}' ({})", name(), class_name()); }

std::vector<Tensor> Layer::compute_output_masks(ReplicaContext& /*ctx*/, const std::vector<Tensor>& /*inputs*/,
                                                const std::vector<Tensor>& outputs, const LayerState& state) {
  std::vector<Tensor> masks(outputs.size());
  if (supports_masking() && !state.input_masks.empty())
    for (auto& m : masks) m = state.input_masks.front();
  return masks;
}

std::vector<Variable*> Layer::variables() {
  std::vector<Variable*> out;
  for (auto& v : variables_)
    if (v->trainable()) out.push_back(v.get());
  for (auto& v : variables_)
    if (!v->trainable()) out.push_back(v.get());
  for (const auto& sub : detail::tracked_sublayers(*this))
    for (Variable* v : sub->variables()) out.push_back(v);
  return out;
}

std::vector<Variable*> Layer::trainable_variables() {
  std::vector<Variable*> out;
  if (!trainable_) return out;
  for (auto& v : variables_)
    if (v->trainable()) out.push_back(v.get());
  for (const auto& sub : detail::tracked_sublayers(*this))
    for (Variable* v : sub->trainable_variables()) out.push_back(v);
  return out;
}

std::int64_t Layer::count_params() const {
  std::int64_t n = 0;
  for (auto& v : variables_) n += shape_numel(v->shape());
  for (const auto& sub : detail::tracked_sublayers(*this)) n += sub->count_params();
  return n;
}

Variable& Layer::add_weight(const std::string& name, const Shape& shape, const initializers::Initializer& initializer,
                            bool trainable, std::uint64_t seed, regularizers::Regularizer regularizer,
                            constraints::Constraint constraint) {
  // Axes over every dimension (a bias with Keras' default axis 0) take one norm of the whole weight.
  KERASCPP_CHECK_VALUE(!constraint || constraint.axis().size() <= shape.size(),
                       "{}: {} over axes {} of the {} weight '{}': the weight has only {} axes (e.g. use axis {{0}})",
                       where(), constraint.class_name(), fmt::join(constraint.axis(), ", "), shape_str(shape), name,
                       shape.size());
  Tensor t(shape, DType::float32, Device{});  // initialised on the host; mirror() places the copies
  initializer(t, seed, where());
  variables_.push_back(std::make_unique<Variable>(name, std::move(t), trainable));
  Variable& v = *variables_.back();
  v.set_path(fmt::format("{}/{}", this->name(), name));
  v.set_regularizer(std::move(regularizer));
  v.set_constraint(std::move(constraint));
  return v;
}

KerasTensor Layer::operator()(const KerasTensor& x) { return call_multi({x}).at(0); }

KerasTensor Layer::operator()(const std::vector<KerasTensor>& xs) {
  auto outs = call_multi(xs);
  KERASCPP_CHECK_VALUE(outs.size() == 1, "{} has {} outputs; use call_multi", where(), outs.size());
  return outs[0];
}

void Layer::set_input_spec(InputSpec spec) {
  input_spec_ = {std::move(spec)};
  input_spec_for_each_ = false;
}

void Layer::set_input_specs(std::vector<InputSpec> specs) {
  input_spec_ = std::move(specs);
  input_spec_for_each_ = false;
}

void Layer::set_input_spec_for_each(InputSpec spec) {
  input_spec_ = {std::move(spec)};
  input_spec_for_each_ = true;
}

void Layer::check_input_spec(const std::vector<KerasTensor>& xs) const {
  KERASCPP_CHECK_VALUE(input_spec_for_each_ || xs.size() == input_spec_.size(),
                       "{} expects {} input(s) but was called on {}", where(), input_spec_.size(), xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const InputSpec& spec = input_spec_for_each_ ? input_spec_.at(0) : input_spec_[i];
    Shape shape = xs[i].shape();
    shape.insert(shape.begin(), -1);  // the batch axis, unknown when called symbolically
    std::string why = spec.mismatch(shape, xs[i].dtype());
    KERASCPP_CHECK_SHAPE(why.empty(), "{}: {}{}", where(), xs.size() > 1 ? fmt::format("input {}: ", i) : "", why);
  }
}

std::vector<KerasTensor> Layer::call_multi(const std::vector<KerasTensor>& xs) {
  for (auto& x : xs) check_defined(x);
  check_input_spec(xs);  // once per call, so compute_output_shapes may assume the spec holds
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (auto& x : xs) {
    shapes.push_back(x.shape());
    dtypes.push_back(x.dtype());
  }
  auto node = std::make_shared<Node>();
  node->output_shapes = compute_output_shapes_for(shapes, dtypes);
  if (!built_) {
    build(shapes);
    built_ = true;
  }
  node->layer = shared_from_this();
  node->inputs = xs;
  std::vector<KerasTensor> outs;
  for (std::size_t i = 0; i < node->output_shapes.size(); ++i) outs.emplace_back(node, static_cast<int>(i));
  return outs;
}

}  // namespace kerascpp
