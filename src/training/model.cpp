#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "check.hpp"
#include "distribute/strategy_impl.hpp"
#include "kerascpp/core/session.hpp"
#include "kerascpp/layers/input_layer.hpp"
#include "kerascpp/training/loss_scale_optimizer.hpp"
#include "training/interrupt.hpp"
#include "training/model_impl.hpp"
#include "training/weight_penalties.hpp"

namespace kerascpp {

const detail::Graph& ModelImpl::require_graph(const char* what) const {
  KERASCPP_CHECK_STATE(graph,
                       "Model '{}': cannot {} before the model is built; give the Sequential model an "
                       "input shape with layers::InputLayer(shape) or call fit/predict on data first",
                       name, what);
  return *graph;
}

void ModelImpl::ensure_built(const Inputs& xs) {
  if (graph) return;
  KERASCPP_CHECK_STATE(sequential, "Model '{}' has no graph", name);
  KERASCPP_CHECK_STATE(!sequential_layers.empty(), "Sequential model '{}' has no layers; add some first", name);
  KERASCPP_CHECK_VALUE(xs.size() == 1, "Sequential model '{}' takes one input, got {}", name, xs.size());
  const Tensor& x = xs[0];
  KERASCPP_CHECK_SHAPE(x.rank() >= 1, "Sequential model '{}': the input batch must have a batch axis", name);
  Shape per_example(x.shape().begin() + 1, x.shape().end());
  KerasTensor in = Input(per_example, x.dtype());
  KerasTensor t = in;
  for (auto& l : sequential_layers) t = l(t);
  graph = std::make_unique<detail::Graph>(std::vector<KerasTensor>{in}, std::vector<KerasTensor>{t});
}

const detail::CompiledState& ModelImpl::require_compiled(const char* what) const {
  KERASCPP_CHECK_STATE(compiled_, "Model '{}': call compile() before {}()", name, what);
  return *compiled_;
}

void ModelImpl::compile(detail::CompiledState state) {
  replicas_.reset();  // bound to the old strategy and optimizer
  compiled_.emplace(std::move(state));
  staging.set_strategy(compiled_->strategy());
  bind();
}

const distribute::Strategy& ModelImpl::strategy() const {
  if (compiled_) return compiled_->strategy();
  if (!default_strategy_) default_strategy_.emplace();
  return *default_strategy_;
}

void ModelImpl::bind() {
  if (replicas_ || !graph || !compiled_) return;
  replicas_.emplace(*graph, compiled_->strategy(), &compiled_->optimizer());
}

void ModelImpl::prepare(const Inputs& x) {
  ensure_built(x);
  bind();
}

void ModelImpl::prepare_inference(const Inputs& x) {
  ensure_built(x);
  if (compiled_) bind();
  else if (!replicas_) replicas_.emplace(*graph, strategy(), nullptr);
}

namespace detail {
TrainingPosition& training_position(Model& model) { return model.impl_->position; }
}  // namespace detail

// ---- Model ----

Model::Model() : impl_(std::make_shared<ModelImpl>()) {}

Model::Model(const KerasTensor& input, const KerasTensor& output, std::string name)
    : Model(std::vector<KerasTensor>{input}, std::vector<KerasTensor>{output}, std::move(name)) {}

Model::Model(const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs, std::string name)
    : impl_(std::make_shared<ModelImpl>()) {
  impl_->name = name.empty() ? unique_layer_name("functional") : std::move(name);
  impl_->graph = std::make_unique<detail::Graph>(inputs, outputs);
}

Model::~Model() = default;

const std::string& Model::name() const { return impl_->name; }

std::vector<std::shared_ptr<Layer>> Model::layers() const {
  if (!impl_->graph) {
    std::vector<std::shared_ptr<Layer>> out;
    for (auto& l : impl_->sequential_layers) out.push_back(l.get());
    return out;
  }
  std::vector<std::shared_ptr<Layer>> out = impl_->graph->layers();
  // Keras' Sequential does not list its implicit InputLayer.
  if (impl_->sequential)
    out.erase(std::remove_if(out.begin(), out.end(),
                             [](auto& l) { return dynamic_cast<layers::InputLayerImpl*>(l.get()) != nullptr; }),
              out.end());
  return out;
}

std::shared_ptr<Layer> Model::get_layer(const std::string& name) const {
  std::vector<std::shared_ptr<Layer>> all = layers();
  for (auto& l : all)
    if (l->name() == name) return l;
  std::string names;
  for (auto& l : all) names += (names.empty() ? "" : ", ") + l->name();
  throw ValueError(fmt::format("Model '{}' has no layer named '{}'; its layers are: {}", impl_->name, name,
                               names.empty() ? "(none)" : names));
}

std::shared_ptr<Layer> Model::get_layer(int index) const {
  std::vector<std::shared_ptr<Layer>> all = layers();
  KERASCPP_CHECK_VALUE(index >= 0 && static_cast<std::size_t>(index) < all.size(),
                       "Model '{}': get_layer({}) is out of range; the model has {} layers (indices 0 to {})",
                       impl_->name, index, all.size(), static_cast<std::int64_t>(all.size()) - 1);
  return all[static_cast<std::size_t>(index)];
}

void Model::request_stop() { impl_->stop_flag.store(true); }

bool Model::stop_requested() const { return impl_->stop_flag.load() || detail::sigint_received(); }

std::vector<Variable*> Model::variables() const {
  std::vector<Variable*> out;
  for (auto& l : layers())
    for (Variable* v : l->variables()) out.push_back(v);
  return out;
}

std::vector<Variable*> Model::trainable_variables() const {
  std::vector<Variable*> out;
  for (auto& l : layers())
    for (Variable* v : l->trainable_variables()) out.push_back(v);
  return out;
}

std::int64_t Model::count_params() const {
  std::int64_t n = 0;
  for (auto& l : layers()) n += l->count_params();
  return n;
}

double Model::regularization_loss() const {
  std::vector<Variable*> vars = trainable_variables();
  std::vector<Variable*> host_copies;
  std::vector<std::unique_ptr<Variable>> owned;  // copy 0 brought to the host where it lives elsewhere
  for (Variable* v : vars) {
    if (!v->regularizer()) continue;
    owned.push_back(std::make_unique<Variable>(v->name(), v->value(0).to(Device{}), true));
    owned.back()->set_regularizer(v->regularizer());
    host_copies.push_back(owned.back().get());
  }
  if (host_copies.empty()) return 0.0;
  return detail::weight_penalties(*make_cpu_backend(1), 0, host_copies, false)();
}

void Model::summary() const { summary(output()); }

void Model::summary(std::ostream& out) const {
  const auto& graph = impl_->require_graph("print a summary");
  std::int64_t trainable = 0, total = 0;
  auto line = [&](char c) { out << std::string(80, c) << "\n"; };
  out << fmt::format("Model: \"{}\"\n", impl_->name);
  line('_');
  out << fmt::format("{:<34}{:<28}{:>12}\n", " Layer (type)", "Output Shape", "Param #");
  line('=');
  bool first = true;
  for (auto& node : graph.nodes()) {
    Layer& l = *node->layer;
    if (impl_->sequential && dynamic_cast<layers::InputLayerImpl*>(&l)) continue;
    if (!first) line('_');
    first = false;
    Shape s = node->output_shapes.at(0);
    s.insert(s.begin(), -1);
    out << fmt::format(" {:<33}{:<28}{:>12}\n", fmt::format("{} ({})", l.name(), l.class_name()), shape_str(s),
                       l.count_params());
  }
  for (Variable* v : variables()) total += shape_numel(v->shape());
  for (Variable* v : trainable_variables()) trainable += shape_numel(v->shape());  // frozen layers excluded
  line('=');
  out << fmt::format(" Total params: {}\n Trainable params: {}\n Non-trainable params: {}\n", total, trainable,
                     total - trainable);
  line('_');
}

void Model::compile(CompileOptions options) {
  KERASCPP_CHECK_VALUE(options.optimizer, "Model '{}': compile() needs an optimizer", impl_->name);
  KERASCPP_CHECK_VALUE(options.loss,
                       "Model '{}': compile() needs a loss, e.g. .loss = losses::SparseCategoricalCrossentropy()",
                       impl_->name);
  // The width of the (single) output's last axis sizes R2Score's and FBetaScore's totals where
  // Keras builds them on the first batch; 1 where it is not known yet (a Sequential model).
  int output_width = 1;
  if (impl_->graph && impl_->graph->outputs().size() == 1) {
    const Shape& shape = impl_->graph->outputs()[0].shape();
    if (!shape.empty() && shape.back() > 0) output_width = static_cast<int>(shape.back());
  }
  std::vector<detail::MetricSpec> metrics;
  for (auto& m : options.metrics) metrics.push_back(detail::resolve_metric(m, options.loss.get(), output_width));
  for (auto& m : options.weighted_metrics) {
    detail::MetricSpec spec = detail::resolve_metric(m, options.loss.get(), output_width);
    spec.weighted = true;
    // Keras' CompileMetrics.result(): a weighted metric whose name is taken becomes weighted_<name>.
    auto taken = [&](const std::string& n) {
      return n == "loss" || std::any_of(metrics.begin(), metrics.end(), [&](auto& s) { return s.name == n; });
    };
    if (taken(spec.name)) spec.name = "weighted_" + spec.name;
    const std::string base = spec.name;
    for (int i = 1; taken(spec.name); ++i) spec.name = fmt::format("{}_{}", base, i);
    metrics.push_back(std::move(spec));
  }
  // As Keras: a model with mixed_float16 layers trains with (dynamic) loss scaling.
  optimizers::OptimizerRef optimizer = options.optimizer;
  const auto all = layers();
  if (!dynamic_cast<optimizers::LossScaleOptimizer*>(optimizer.get()) &&
      std::any_of(all.begin(), all.end(), [](const auto& l) { return l->compute_dtype() == DType::float16; }))
    optimizer = optimizers::LossScaleOptimizer::around(options.optimizer.shared());
  distribute::Strategy strategy = options.distribute ? *options.distribute : distribute::Strategy();
  const std::uint64_t step_seed = next_random_seed();
  impl_->compile(detail::CompiledState(optimizer, options.loss, std::move(metrics), std::move(strategy), step_seed));
  impl_->position.set_zero_totals(impl_->require_compiled("compile").zero_totals());
}

bool Model::compiled() const { return impl_->is_compiled(); }

std::vector<std::string> Model::metrics_names() const {
  return impl_->is_compiled() ? impl_->require_compiled("list metrics").metrics_names() : std::vector<std::string>{};
}

optimizers::Optimizer& Model::optimizer() const {
  KERASCPP_CHECK_STATE(impl_->is_compiled(), "Model '{}' has no optimizer: call compile() first", impl_->name);
  return impl_->require_compiled("get the optimizer").optimizer();
}

const distribute::Strategy& Model::distribute_strategy() const { return impl_->strategy(); }

std::vector<Tensor> Model::get_weights() const {
  std::vector<Tensor> out;
  for (Variable* v : variables()) {
    const Tensor& w = v->value(0);
    out.push_back(w.on_host() ? w.clone() : w.to(Device{}));  // always a host copy the caller owns
  }
  return out;
}

void Model::set_weights(const std::vector<Tensor>& weights) {
  auto vars = variables();
  KERASCPP_CHECK_VALUE(weights.size() == vars.size(),
                       "Model '{}': set_weights got {} tensors but the model has {} variables", impl_->name,
                       weights.size(), vars.size());
  for (std::size_t i = 0; i < vars.size(); ++i)
    KERASCPP_CHECK_SHAPE(weights[i].shape() == vars[i]->shape(),
                         "Model '{}': weight {} ({}) expects shape {} but got {}", impl_->name, i, vars[i]->path(),
                         shape_str(vars[i]->shape()), shape_str(weights[i].shape()));
  for (std::size_t i = 0; i < vars.size(); ++i) vars[i]->assign(weights[i]);
}

// ---- Sequential ----

Sequential::Sequential(std::initializer_list<LayerRef> layers, std::string name)
    : Sequential(std::vector<LayerRef>(layers), std::move(name)) {}

Sequential::Sequential(std::vector<LayerRef> layers, std::string name) : Model() {
  impl_->sequential = true;
  impl_->name = name.empty() ? unique_layer_name("sequential") : std::move(name);
  for (auto& l : layers) add(l);
}

void Sequential::add(LayerRef layer) {
  KERASCPP_CHECK_STATE(!impl_->is_compiled(), "Sequential '{}': add layers before compile()", impl_->name);
  if (auto* input = dynamic_cast<layers::InputLayerImpl*>(layer.get().get())) {
    KERASCPP_CHECK_VALUE(impl_->sequential_layers.empty() && !impl_->graph,
                         "Sequential '{}': an InputLayer may only be the first layer", impl_->name);
    KerasTensor in = input->output();
    impl_->graph = std::make_unique<detail::Graph>(std::vector<KerasTensor>{in}, std::vector<KerasTensor>{in});
    impl_->sequential_layers.clear();
    return;
  }
  impl_->sequential_layers.push_back(layer);
  if (impl_->graph) {
    // Rebuild the graph with the new layer appended to the current output.
    KerasTensor in = impl_->graph->inputs().front();
    KerasTensor out = layer(impl_->graph->outputs().front());
    impl_->graph = std::make_unique<detail::Graph>(std::vector<KerasTensor>{in}, std::vector<KerasTensor>{out});
  }
}

}  // namespace kerascpp
