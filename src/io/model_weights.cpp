#include "io/model_weights.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>

#include "check.hpp"
#include "io/h5_weights.hpp"
#include "kerascpp/training/loss_scale_optimizer.hpp"

namespace kerascpp::io {
namespace {

constexpr const char* kStatePrefix = "training_state_";  // entries of the file's kerascpp group

// One group of variables in the file: "layers/<path>/vars".
struct GroupRef {
  std::string path;
  const Layer* layer;
  std::vector<Variable*> vars;
};

// Keras names each layer's group by its snake_case class name, made unique within the model;
// a layer made of sublayers adds one group below it per sublayer (Layer::weight_groups).
std::vector<GroupRef> keras_weight_groups(const Model& model) {
  std::map<std::string, int> seen;
  std::vector<GroupRef> out;
  for (auto& layer : model.layers()) {
    std::string base = layer->snake_name();
    int n = seen[base]++;
    const std::string path = n == 0 ? base : fmt::format("{}_{}", base, n);
    for (auto& [sub, vars] : layer->weight_groups())
      out.push_back({sub.empty() ? path : path + "/" + sub, layer.get(), std::move(vars)});
  }
  return out;
}

void check_suffix(const std::string& path) {
  const std::string suffix = ".weights.h5";
  KERASCPP_CHECK_VALUE(
      path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0,
      "weights file '{}' must end in '.weights.h5' (the Keras 3 weights format)", path);
}

Tensor scalar_i64(std::int64_t v) { return Tensor::from_vector({}, std::vector<std::int64_t>{v}); }
Tensor scalar_f32(double v) { return Tensor::from_vector({}, std::vector<float>{static_cast<float>(v)}); }
Tensor vector_f64_as_f32(const std::vector<double>& v) {
  std::vector<float> f(v.begin(), v.end());
  return Tensor::from_vector({static_cast<std::int64_t>(f.size())}, f);
}

bool is_integer(DType d) { return d == DType::int32 || d == DType::int64; }

std::int64_t scalar_int(const Tensor& t) {
  return t.dtype() == DType::int64 ? t.data<std::int64_t>()[0] : t.data<std::int32_t>()[0];
}

struct NonFiniteCount {
  std::int64_t nan = 0, inf = 0;
  bool any() const { return nan + inf > 0; }
};

NonFiniteCount count_non_finite(const Tensor& t) {
  NonFiniteCount c;
  if (!t.defined() || t.dtype() != DType::float32 || t.numel() == 0) return c;
  const Tensor host = t.to(Device{});  // GPU replicas' copies are checked on the host
  const float* p = host.data<float>();
  for (std::int64_t i = 0; i < host.numel(); ++i) {
    c.nan += std::isnan(p[i]) ? 1 : 0;
    c.inf += std::isinf(p[i]) ? 1 : 0;
  }
  return c;
}

// Keras' LossScaleOptimizer lists its own variables (optimizer_own_variables) before those of
// the optimizer it wraps, which a file stores after them: iterations, the learning rate, slots.
optimizers::LossScaleOptimizer* as_loss_scale(optimizers::Optimizer& opt) {
  return dynamic_cast<optimizers::LossScaleOptimizer*>(&opt);
}
std::vector<std::pair<const char*, Tensor*>> optimizer_own_variables(optimizers::Optimizer& opt) {
  auto* lso = as_loss_scale(opt);
  return lso ? lso->own_variables() : std::vector<std::pair<const char*, Tensor*>>{};
}

// The wrapped optimizer's variables in Keras' order: iterations, the learning rate (not for a
// schedule), the slots and optimizer-wide state (of replica 0: the copies are identical).
std::vector<Tensor> plain_optimizer_vars(optimizers::Optimizer& opt) {
  std::vector<Tensor> out{scalar_i64(opt.iterations())};
  if (!opt.has_schedule()) out.push_back(scalar_f32(opt.learning_rate()));
  for (Tensor* t : opt.slot_tensors(0)) out.push_back(*t);
  return out;
}

std::string describe_non_finite(const std::string& what, const NonFiniteCount& c, std::int64_t n) {
  return fmt::format("{} holds {} NaN and {} Inf of {} values", what, c.nan, c.inf, n);
}

}  // namespace

std::optional<std::string> find_non_finite(const Model& model) {
  for (const GroupRef& g : keras_weight_groups(model)) {
    for (std::size_t k = 0; k < g.vars.size(); ++k) {
      const Tensor& t = g.vars[k]->value(0);  // the copies are identical
      if (auto c = count_non_finite(t); c.any())
        return describe_non_finite(fmt::format("variable '{}' (layers/{}/vars/{})", g.vars[k]->path(), g.path, k), c,
                                   t.numel());
    }
  }
  if (!model.compiled()) return std::nullopt;
  // Slots are stored after the iteration count (and the learning rate), per variable in order.
  auto& opt = model.optimizer();
  auto slots = opt.slot_tensors(0);
  const std::size_t offset = optimizer_own_variables(opt).size() + (opt.has_schedule() ? 1 : 2);
  const auto trainable = model.trainable_variables();
  const std::size_t per_var = static_cast<std::size_t>(std::max(opt.slots_per_variable(), 1));
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (auto c = count_non_finite(*slots[i]); c.any()) {
      const std::size_t v = i / per_var;
      const std::string owner = v < trainable.size() ? trainable[v]->path() : "?";
      return describe_non_finite(fmt::format("optimizer slot {} of {} for variable '{}' (optimizer/vars/{})",
                                             i % per_var + 1, per_var, owner, offset + i),
                                 c, slots[i]->numel());
    }
  }
  return std::nullopt;
}

void save_model_weights(const Model& model, const std::string& path,
                        const std::optional<TrainingCheckpoint>& checkpoint) {
  check_suffix(path);
  write_weights_file(path, model_weights_file(model, path, checkpoint));
}

WeightsFile model_weights_file(const Model& model, const std::string& path,
                               const std::optional<TrainingCheckpoint>& checkpoint) {
  if (auto bad = find_non_finite(model))
    throw ValueError(
        fmt::format("save_weights('{}'): {}; refusing to write non-finite weights (any existing file "
                    "is left as it was): {}",
                    path, *bad, kNonFiniteAdvice));
  WeightsFile file;
  file.model_name = model.name();
  for (const GroupRef& ref : keras_weight_groups(model)) {
    WeightsGroup g;
    g.name = ref.path;
    g.layer_name = ref.path.substr(ref.path.rfind('/') + 1);  // Keras' "name" attribute: the (sub)layer's
    if (g.name.find('/') == std::string::npos) g.layer_name = ref.layer->name();
    for (Variable* v : ref.vars) g.vars.push_back(v->value(0));  // one copy: they are identical
    file.layers.push_back(std::move(g));
  }
  if (model.compiled()) {
    auto& opt = model.optimizer();
    file.has_optimizer = true;
    file.optimizer_name = to_snake_case(opt.class_name());
    for (auto [name, t] : optimizer_own_variables(opt)) file.optimizer_vars.push_back(*t);
    const std::vector<Tensor> plain = plain_optimizer_vars(opt);
    file.optimizer_vars.insert(file.optimizer_vars.end(), plain.begin(), plain.end());
    if (auto* lso = as_loss_scale(opt)) {
      // Keras stores the wrapped optimizer's variables a second time in its own group, and warns
      // when loading a file without it.
      file.inner_optimizer_vars = plain;
      file.inner_optimizer_name = to_snake_case(lso->inner_optimizer().class_name());
    }
  }
  if (checkpoint) {
    const auto& p = checkpoint->position;
    file.extra.emplace_back(std::string(kStatePrefix) + "epoch", scalar_i64(p.epoch));
    file.extra.emplace_back(std::string(kStatePrefix) + "step", scalar_i64(p.step));
    // The epoch's running sums (for exact logs after resume) as float32 value + float32 remainder.
    std::vector<double> sums = p.totals.flatten();
    std::vector<double> hi(sums.size()), lo(sums.size());
    for (std::size_t i = 0; i < sums.size(); ++i) {
      hi[i] = static_cast<float>(sums[i]);
      lo[i] = sums[i] - hi[i];
    }
    file.extra.emplace_back(std::string(kStatePrefix) + "totals_hi", vector_f64_as_f32(hi));
    file.extra.emplace_back(std::string(kStatePrefix) + "totals_lo", vector_f64_as_f32(lo));
  }
  return file;
}

namespace {

// Refusals name the file and the entry inside it, and say what to do.
[[noreturn]] void corrupt(const std::string& path, const std::string& entry, const std::string& what) {
  throw IOError(
      fmt::format("load_weights('{}'): entry '{}' {}; the file is damaged or was not written by "
                  "Keras 3 or kerascpp for this model: use another copy or re-save it",
                  path, entry, what));
}

// What load_model_weights will do once the whole file checked out.
struct LoadPlan {
  // (layer index in model.layers(), variable index), in the order of the file's groups.
  std::vector<std::pair<Variable*, std::pair<std::size_t, std::size_t>>> weights;
  bool restore_optimizer = false;
  // Slots start here: after a LossScaleOptimizer's own variables, iterations (and the learning rate).
  std::size_t optimizer_offset = 0;
  bool has_training_state = false;
};

void expect_scalar(const std::string& path, const DatasetInfo& info, bool integer, const char* what) {
  if (!info.shape.empty())
    corrupt(path, info.entry, fmt::format("({}) has shape {} but must be a scalar", what, shape_str(info.shape)));
  if (integer != is_integer(info.dtype))
    corrupt(path, info.entry,
            fmt::format("({}) is {} but must be {}", what, dtype_name(info.dtype), integer ? "an integer" : "a float"));
}

// Checks the file's structure, shapes and dtypes against the model before any data is read.
LoadPlan check_layout(Model& model, const std::string& path, const WeightsLayout& layout) {
  LoadPlan plan;
  const std::vector<GroupRef> groups = keras_weight_groups(model);
  std::map<std::string, std::size_t> layer_of;  // group path -> index in `groups`
  for (std::size_t i = 0; i < groups.size(); ++i) layer_of[groups[i].path] = i;
  // Order of the refusals: a layer the file lacks, then a variable that does not fit, then a
  // stray group; the first says most about which model the file belongs to.
  std::vector<std::size_t> group_of(groups.size(), layout.layers.size());  // none yet
  std::string unknown_group;
  for (std::size_t g = 0; g < layout.layers.size(); ++g) {
    const auto& [name, stored] = layout.layers[g];
    auto it = layer_of.find(name);
    if (it != layer_of.end()) group_of[it->second] = g;
    else if (!stored.empty() && unknown_group.empty()) unknown_group = "layers/" + name + "/vars";
    // (Keras writes empty groups for layers without weights.)
  }
  for (std::size_t i = 0; i < groups.size(); ++i)
    KERASCPP_CHECK_IO(group_of[i] != layout.layers.size() || groups[i].vars.empty(),
                      "load_weights('{}'): the file has no entry 'layers/{}/vars' for layer '{}' ({}); "
                      "it was saved from a different architecture, or the entry was removed or "
                      "renamed: load a file saved from this model",
                      path, groups[i].path, groups[i].layer->name(), groups[i].layer->class_name());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::size_t g = group_of[i];
    if (g == layout.layers.size()) continue;
    const auto& stored = layout.layers[g].second;
    const std::string group = "layers/" + layout.layers[g].first + "/vars";
    const Layer* layer = groups[i].layer;
    const auto& vars = groups[i].vars;
    for (std::size_t k = 0; k < std::max(vars.size(), stored.size()); ++k) {
      if (k >= stored.size())
        corrupt(path, fmt::format("{}/{}", group, k),
                fmt::format("(variable '{}' of layer '{}') is missing", vars[k]->path(), layer->name()));
      if (k >= vars.size())
        corrupt(
            path, stored[k].entry,
            fmt::format("is extra: layer '{}' ({}) has {} variables", layer->name(), layer->class_name(), vars.size()));
      // Keras keeps a few integer counters among a layer's weights (Normalization's "count"); a
      // scalar integer entry is read into the float32 variable kerascpp keeps for it.
      const bool counter = stored[k].shape.empty() && is_integer(stored[k].dtype);
      KERASCPP_CHECK_SHAPE(stored[k].shape == vars[k]->shape() && (stored[k].dtype == DType::float32 || counter),
                           "load_weights('{}'): entry '{}' has shape {} {} but variable '{}' expects "
                           "{} float32; the file was saved from a different architecture: load a "
                           "file saved from this model",
                           path, stored[k].entry, shape_str(stored[k].shape), dtype_name(stored[k].dtype),
                           vars[k]->path(), shape_str(vars[k]->shape()));
      plan.weights.emplace_back(vars[k], std::make_pair(g, k));
    }
  }
  KERASCPP_CHECK_IO(unknown_group.empty(),
                    "load_weights('{}'): entry '{}' holds weights for a layer this model does not have; "
                    "the file was saved from a different architecture (or the entry was renamed): load "
                    "a file saved from this model",
                    path, unknown_group);

  // Optimizer state: Keras skips it with a warning when the variable counts differ (another
  // optimizer or schedule) and fails when a variable's shape differs; so do we.
  if (model.compiled() && layout.has_optimizer && !layout.optimizer_vars.empty()) {
    auto& opt = model.optimizer();
    const auto& stored = layout.optimizer_vars;
    const auto own = optimizer_own_variables(opt);
    plan.optimizer_offset = own.size() + (opt.has_schedule() ? 1 : 2);
    auto slots = opt.slot_tensors(0);
    const bool counts_match = stored.size() == plan.optimizer_offset + slots.size();
    // Entry 0 is an iteration count in any Keras optimizer's file, whichever optimizer saved it.
    expect_scalar(path, stored[0], true, "the optimizer's iteration count");
    if (!counts_match) {
      fmt::print(stderr,
                 "kerascpp: load_weights('{}'): skipping the optimizer state: this {} has {} variables but "
                 "optimizer/vars in the file has {} (another optimizer or learning rate schedule)\n",
                 path, opt.class_name(), plan.optimizer_offset + slots.size(), stored.size());
    } else {
      for (std::size_t i = 0; i < own.size(); ++i)
        expect_scalar(path, stored[i], is_integer(own[i].second->dtype()),
                      fmt::format("{}'s {}", opt.class_name(), own[i].first).c_str());
      if (!own.empty()) expect_scalar(path, stored[own.size()], true, "the inner optimizer's iteration count");
      if (!opt.has_schedule()) expect_scalar(path, stored[own.size() + 1], false, "the learning rate");
      for (std::size_t i = 0; i < slots.size(); ++i) {
        const auto& info = stored[plan.optimizer_offset + i];
        KERASCPP_CHECK_SHAPE(info.shape == slots[i]->shape() && info.dtype == slots[i]->dtype(),
                             "load_weights('{}'): entry '{}' has shape {} {} but the {} slot it "
                             "restores has shape {} {}; the file's optimizer state belongs to a "
                             "different model: load a file saved from this model",
                             path, info.entry, shape_str(info.shape), dtype_name(info.dtype), opt.class_name(),
                             shape_str(slots[i]->shape()), dtype_name(slots[i]->dtype()));
      }
      plan.restore_optimizer = true;
    }
  }

  // kerascpp's training state: all four entries or none (plain weights files have none).
  std::map<std::string, const DatasetInfo*> state;
  for (const auto& [name, info] : layout.extra)
    if (name.rfind(kStatePrefix, 0) == 0) state[name.substr(std::string(kStatePrefix).size())] = &info;
  if (state.empty()) return plan;
  const std::string group = std::string("kerascpp/") + kStatePrefix;
  for (const char* key : {"epoch", "step", "totals_hi", "totals_lo"})
    if (!state.count(key))
      corrupt(path, group + key,
              "is missing (the file holds other training-state entries: it is incomplete or from another "
              "kerascpp version)");
  for (const auto& [key, info] : state)
    if (key != "epoch" && key != "step" && key != "totals_hi" && key != "totals_lo")
      corrupt(path, info->entry, "is not a training-state entry this kerascpp version knows");
  expect_scalar(path, *state["epoch"], true, "the epoch to resume at");
  expect_scalar(path, *state["step"], true, "the step to resume at");
  const DatasetInfo& hi = *state["totals_hi"];
  const DatasetInfo& lo = *state["totals_lo"];
  // (loss sum, examples) then each metric's totals ((sum, count) for a mean): StepTotals::flatten.
  const std::size_t metrics = model.compiled() ? model.metrics_names().size() - 1 : 0;
  const std::int64_t want =
      model.compiled() ? static_cast<std::int64_t>(detail::training_position(model).zero_totals().flat_size()) : -1;
  for (const DatasetInfo* t : {&hi, &lo}) {
    if (t->shape.size() != 1 || t->dtype != DType::float32)
      corrupt(path, t->entry,
              fmt::format("has shape {} {} but must be a float32 vector", shape_str(t->shape), dtype_name(t->dtype)));
    const std::int64_t n = t->shape[0];
    if (n < 2 || (want >= 0 && n != want) || n != hi.shape[0])
      corrupt(path, t->entry,
              fmt::format("has {} values but this model's loss and {} metric(s) need {}", n, metrics,
                          want >= 0 ? want : hi.shape[0]));
  }
  plan.has_training_state = true;
  return plan;
}

const Tensor& extra_entry(const WeightsFile& file, const std::string& key) {
  for (const auto& [name, t] : file.extra)
    if (name == kStatePrefix + key) return t;
  throw std::logic_error("checked before: " + key);  // check_layout guarantees it
}

}  // namespace

std::optional<std::int64_t> stored_iterations(Model& model, const WeightsFile& file) {
  if (!model.compiled() || !file.has_optimizer) return std::nullopt;
  const std::size_t at = optimizer_own_variables(model.optimizer()).size();
  if (at >= file.optimizer_vars.size()) return std::nullopt;
  const Tensor& t = file.optimizer_vars[at];
  if (!t.defined() || t.numel() != 1 || !is_integer(t.dtype())) return std::nullopt;
  return scalar_int(t);
}

std::optional<TrainingCheckpoint> load_model_weights(Model& model, const std::string& path) {
  return load_model_weights(model, path, [&](const LayoutCheck& check) { return read_weights_file(path, check); });
}

std::optional<TrainingCheckpoint> load_model_weights(Model& model, const std::string& path, const WeightsReader& read) {
  // 1. Structure, shapes and dtypes against the model, before any data is read.
  LoadPlan plan;
  WeightsFile file = read([&](const WeightsLayout& layout) { plan = check_layout(model, path, layout); });

  // 2. Values, still before anything changes.
  std::int64_t iterations = 0;
  double learning_rate = 0;
  std::vector<double> own_values;  // a LossScaleOptimizer's own scalars
  if (plan.restore_optimizer) {
    const auto own = optimizer_own_variables(model.optimizer());
    for (std::size_t i = 0; i < own.size(); ++i) {
      const Tensor& t = file.optimizer_vars[i];
      const double v = is_integer(t.dtype()) ? static_cast<double>(scalar_int(t)) : t.data<float>()[0];
      // Counters in [0, int32 max], floats finite and >= 0, and a loss scale > 0.
      const bool integer = own[i].second->dtype() == DType::int32;
      const bool scale = std::string(own[i].first) == "dynamic_scale";
      const double max = integer ? std::numeric_limits<std::int32_t>::max() : std::numeric_limits<float>::max();
      if (!std::isfinite(v) || v < 0 || v > max || (scale && v == 0))
        corrupt(path, fmt::format("optimizer/vars/{}", i), fmt::format("({}) is {}", own[i].first, v));
      own_values.push_back(v);
    }
    const std::size_t at = own.size();
    iterations = scalar_int(file.optimizer_vars[at]);
    if (iterations < 0)
      corrupt(path, fmt::format("optimizer/vars/{}", at), fmt::format("(the iteration count) is {}", iterations));
    if (!model.optimizer().has_schedule()) {
      learning_rate = file.optimizer_vars[at + 1].data<float>()[0];
      if (!std::isfinite(learning_rate) || learning_rate < 0)
        corrupt(path, fmt::format("optimizer/vars/{}", at + 1),
                fmt::format("(the learning rate) is {}", learning_rate));
    }
  }
  std::optional<TrainingCheckpoint> cp;
  if (plan.has_training_state) {
    const std::int64_t epoch = scalar_int(extra_entry(file, "epoch"));
    const std::int64_t step = scalar_int(extra_entry(file, "step"));
    if (epoch < 0 || epoch > std::numeric_limits<int>::max())
      corrupt(path, std::string("kerascpp/") + kStatePrefix + "epoch", fmt::format("is {}", epoch));
    if (step < 0) corrupt(path, std::string("kerascpp/") + kStatePrefix + "step", fmt::format("is {}", step));
    const Tensor& hi = extra_entry(file, "totals_hi");
    const Tensor& lo = extra_entry(file, "totals_lo");
    std::vector<double> sums(static_cast<std::size_t>(hi.numel()));
    for (std::size_t i = 0; i < sums.size(); ++i) {
      sums[i] = double(hi.data<float>()[i]) + double(lo.data<float>()[i]);
      if (!std::isfinite(sums[i]))
        corrupt(path, std::string("kerascpp/") + kStatePrefix + "totals_hi",
                fmt::format("holds a non-finite running sum at index {}", i));
    }
    cp.emplace();
    cp->position.epoch = static_cast<int>(epoch);
    cp->position.step = step;
    auto& t = cp->position.totals;
    if (model.compiled()) {
      t = detail::training_position(model).zero_totals();
      t.unflatten(sums.data(), sums.size());  // the length was checked against these sizes
    } else {
      t.loss_sum = sums[0];  // no metrics to size: fit() needs a compiled model anyway
      t.examples = sums[1];
    }
  }

  // 3. Everything fits: change the model.
  for (auto& [var, where] : plan.weights) {
    const Tensor& stored = file.layers[where.first].vars[where.second];
    var->assign(stored.dtype() == DType::float32 ? stored : Tensor::from_vector({}, stored.to_vector()));
  }
  if (plan.restore_optimizer) {
    auto& opt = model.optimizer();
    const auto own = optimizer_own_variables(opt);
    for (std::size_t i = 0; i < own.size(); ++i) {
      Tensor& t = *own[i].second;  // int32 or float32 host scalars; Keras' TF backend writes int64
      if (t.dtype() == DType::int32) t.data<std::int32_t>()[0] = static_cast<std::int32_t>(own_values[i]);
      else t.data<float>()[0] = static_cast<float>(own_values[i]);
    }
    opt.set_iterations(iterations);
    if (!opt.has_schedule()) opt.set_learning_rate(learning_rate);
    for (int r = 0; r < opt.slot_replicas(); ++r) {  // this process's mirrors
      auto slots = opt.slot_tensors(r);
      for (std::size_t i = 0; i < slots.size(); ++i)
        slots[i]->copy_from(file.optimizer_vars[plan.optimizer_offset + i]);
    }
  }
  return cp;
}

}  // namespace kerascpp::io

namespace kerascpp {

void Model::save_weights(const std::string& path) const { io::save_model_weights(*this, path); }
void Model::load_weights(const std::string& path) { io::load_model_weights(*this, path); }

}  // namespace kerascpp
