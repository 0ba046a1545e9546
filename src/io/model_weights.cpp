#include "io/model_weights.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "io/h5_weights.hpp"

namespace kerascpp::io {
namespace {

constexpr const char* kStatePrefix = "training_state_";  // entries of the file's kerascpp group

// Keras names each layer's group by its snake_case class name, made unique within the model.
std::vector<std::string> keras_layer_paths(const Model& model) {
  std::map<std::string, int> seen;
  std::vector<std::string> out;
  for (auto& layer : model.layers()) {
    std::string base = layer->snake_name();
    int n = seen[base]++;
    out.push_back(n == 0 ? base : fmt::format("{}_{}", base, n));
  }
  return out;
}

void check_suffix(const std::string& path) {
  const std::string suffix = ".weights.h5";
  if (path.size() < suffix.size() || path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0)
    throw Error(fmt::format("weights file '{}' must end in '.weights.h5' (the Keras 3 weights format)", path));
}

Tensor scalar_i64(std::int64_t v) { return Tensor::from_vector({}, std::vector<std::int64_t>{v}); }
Tensor scalar_f32(double v) { return Tensor::from_vector({}, std::vector<float>{static_cast<float>(v)}); }
Tensor vector_f64_as_f32(const std::vector<double>& v) {
  std::vector<float> f(v.begin(), v.end());
  return Tensor::from_vector({static_cast<std::int64_t>(f.size())}, f);
}

std::int64_t as_int(const Tensor& t) {
  if (t.numel() != 1) throw Error("checkpoint state: expected a scalar");
  return static_cast<std::int64_t>(t.to_vector()[0]);
}

}  // namespace

void save_model_weights(const Model& model, const std::string& path,
                        const std::optional<TrainingCheckpoint>& checkpoint) {
  check_suffix(path);
  WeightsFile file;
  file.model_name = model.name();
  auto layers = model.layers();
  auto paths = keras_layer_paths(model);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    WeightsGroup g;
    g.name = paths[i];
    g.layer_name = layers[i]->name();
    for (Variable* v : layers[i]->variables()) g.vars.push_back(v->value(0));  // one copy: they are identical
    file.layers.push_back(std::move(g));
  }
  if (model.compiled()) {
    auto& opt = model.optimizer();
    file.has_optimizer = true;
    file.optimizer_name = to_snake_case(opt.class_name());
    file.optimizer_vars.push_back(scalar_i64(opt.iterations()));
    if (!opt.has_schedule()) file.optimizer_vars.push_back(scalar_f32(opt.learning_rate()));
    for (Tensor* t : opt.slot_tensors(0)) file.optimizer_vars.push_back(*t);
  }
  if (checkpoint) {
    const auto& p = checkpoint->position;
    file.extra.emplace_back(std::string(kStatePrefix) + "epoch", scalar_i64(p.epoch));
    file.extra.emplace_back(std::string(kStatePrefix) + "step", scalar_i64(p.step));
    // The epoch's running sums (for exact logs after resume) as float32 value + float32 remainder.
    std::vector<double> sums{p.totals.loss_sum, p.totals.examples};
    for (std::size_t i = 0; i < p.totals.metric_sums.size(); ++i) {
      sums.push_back(p.totals.metric_sums[i]);
      sums.push_back(p.totals.metric_counts[i]);
    }
    std::vector<double> hi(sums.size()), lo(sums.size());
    for (std::size_t i = 0; i < sums.size(); ++i) {
      hi[i] = static_cast<float>(sums[i]);
      lo[i] = sums[i] - hi[i];
    }
    file.extra.emplace_back(std::string(kStatePrefix) + "totals_hi", vector_f64_as_f32(hi));
    file.extra.emplace_back(std::string(kStatePrefix) + "totals_lo", vector_f64_as_f32(lo));
  }
  write_weights_file(path, file);
}

std::optional<TrainingCheckpoint> load_model_weights(Model& model, const std::string& path) {
  WeightsFile file = read_weights_file(path);
  std::map<std::string, const WeightsGroup*> by_name;
  for (auto& g : file.layers) by_name[g.name] = &g;
  auto layers = model.layers();
  auto paths = keras_layer_paths(model);
  // Validate everything first: the model is untouched unless the whole file fits.
  std::vector<std::pair<Variable*, const Tensor*>> assignments;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    auto vars = layers[i]->variables();
    auto it = by_name.find(paths[i]);
    if (it == by_name.end()) {
      if (vars.empty()) continue;
      throw Error(fmt::format("load_weights('{}'): the file has no weights for layer '{}' ({}, stored as '{}'); it was "
                              "saved from a different architecture",
                              path, layers[i]->name(), layers[i]->class_name(), paths[i]));
    }
    const auto& stored = it->second->vars;
    if (stored.size() != vars.size())
      throw Error(fmt::format("load_weights('{}'): layer '{}' ({}) expects {} variables but the file has {}", path,
                              layers[i]->name(), layers[i]->class_name(), vars.size(), stored.size()));
    for (std::size_t k = 0; k < vars.size(); ++k) {
      if (stored[k].shape() != vars[k]->shape() || stored[k].dtype() != DType::float32)
        throw Error(fmt::format("load_weights('{}'): variable '{}' expects shape {} float32 but the file has {} {}",
                                path, vars[k]->path(), shape_str(vars[k]->shape()), shape_str(stored[k].shape()),
                                dtype_name(stored[k].dtype())));
      assignments.emplace_back(vars[k], &stored[k]);
    }
  }
  for (auto& g : file.layers)
    if (std::find(paths.begin(), paths.end(), g.name) == paths.end() && !g.vars.empty())
      throw Error(fmt::format("load_weights('{}'): the file has weights for '{}', which this model does not have; it "
                              "was saved from a different architecture",
                              path, g.name));
  // Optimizer state: restored when it matches (Keras only warns on a mismatch; so do we, by skipping).
  bool restore_optimizer = false;
  std::size_t offset = 0;
  if (model.compiled() && file.has_optimizer && !file.optimizer_vars.empty()) {
    auto& opt = model.optimizer();
    offset = opt.has_schedule() ? 1 : 2;
    auto slots = opt.slot_tensors(0);
    restore_optimizer = file.optimizer_vars.size() == offset + slots.size();
    for (std::size_t i = 0; restore_optimizer && i < slots.size(); ++i)
      restore_optimizer = file.optimizer_vars[offset + i].shape() == slots[i]->shape();
  }
  for (auto& [var, value] : assignments) var->assign(*value);
  if (restore_optimizer) {
    auto& opt = model.optimizer();
    opt.set_iterations(as_int(file.optimizer_vars[0]));
    if (!opt.has_schedule()) opt.set_learning_rate(file.optimizer_vars[1].to_vector()[0]);
    int replicas = model.distribute_strategy().num_replicas_in_sync();
    for (int r = 0; r < replicas; ++r) {
      auto slots = opt.slot_tensors(r);
      for (std::size_t i = 0; i < slots.size(); ++i) slots[i]->copy_from(file.optimizer_vars[offset + i]);
    }
  }
  std::map<std::string, Tensor> extra(file.extra.begin(), file.extra.end());
  auto get = [&](const char* key) -> const Tensor* {
    auto it = extra.find(std::string(kStatePrefix) + key);
    return it == extra.end() ? nullptr : &it->second;
  };
  if (!get("epoch")) return std::nullopt;
  TrainingCheckpoint cp;
  cp.position.epoch = static_cast<int>(as_int(*get("epoch")));
  cp.position.step = as_int(*get("step"));
  auto hi = get("totals_hi")->to_vector(), lo = get("totals_lo")->to_vector();
  std::vector<double> sums(hi.size());
  for (std::size_t i = 0; i < hi.size(); ++i) sums[i] = double(hi[i]) + double(lo[i]);
  auto& t = cp.position.totals;
  t.reset((sums.size() - 2) / 2);
  t.loss_sum = sums[0];
  t.examples = sums[1];
  for (std::size_t i = 0; i < t.metric_sums.size(); ++i) {
    t.metric_sums[i] = sums[2 + 2 * i];
    t.metric_counts[i] = sums[3 + 2 * i];
  }
  return cp;
}

}  // namespace kerascpp::io

namespace kerascpp {

void Model::save_weights(const std::string& path) const { io::save_model_weights(*this, path); }
void Model::load_weights(const std::string& path) { io::load_model_weights(*this, path); }

}  // namespace kerascpp
