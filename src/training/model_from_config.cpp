// model_from_json: a Keras 3 model config (what Model::to_json and Keras' model.to_json() write,
// and the config.json of a .keras archive) rebuilt as a kerascpp Model: Sequential models layer
// by layer, functional models by replaying each layer's calls (inbound_nodes) on the tensors
// their keras_history names, in an order where every input exists before it is used.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/layer_registry.hpp"
#include "kerascpp/error.hpp"
#include "kerascpp/io/saving.hpp"
#include "kerascpp/layers/attention.hpp"
#include "kerascpp/layers/input_layer.hpp"
#include "kerascpp/layers/multi_head_attention.hpp"
#include "kerascpp/training/model.hpp"

namespace kerascpp {

namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void fail(const std::string& what) { throw ValueError("model config: " + what); }

DType dtype_of(const Json& config) {
  const Json d = config.value("dtype", Json("float32"));
  const std::string name = d.is_string() ? d.get<std::string>() : d.value("config", Json::object()).value("name", "");
  static const std::map<std::string, DType> known = {
      {"float32", DType::float32}, {"int32", DType::int32}, {"int64", DType::int64}, {"uint8", DType::uint8}};
  auto it = known.find(name);
  if (it == known.end())
    fail(fmt::format("input '{}' has dtype {}; kerascpp inputs are float32, int32, int64 or uint8",
                     config.value("name", "?"), d.dump()));
  return it->second;
}

// (None, d1, ...) -> (d1, ...): Keras 3 writes batch_shape, older configs batch_input_shape.
Shape example_shape(const Json& config) {
  const Json* s = nullptr;
  for (const char* key : {"batch_shape", "batch_input_shape"})
    if (config.contains(key) && config[key].is_array()) s = &config[key];
  if (!s || s->empty()) fail(fmt::format("input '{}' has no batch_shape", config.value("name", "?")));
  Shape shape;
  for (std::size_t i = 1; i < s->size(); ++i) {
    if (!(*s)[i].is_number_integer())
      fail(fmt::format("input '{}' has an unknown dimension {} in {}; kerascpp needs every dimension but the batch's",
                       config.value("name", "?"), i, s->dump()));
    shape.push_back((*s)[i].get<std::int64_t>());
  }
  return shape;
}

struct Entry {
  std::string class_name;
  Json config;
};

Entry entry_of(const Json& layer) {
  if (!layer.is_object() || !layer.contains("class_name") || !layer.contains("config"))
    fail("a layer entry lacks class_name or config: " + layer.dump().substr(0, 200));
  return {layer["class_name"].get<std::string>(), layer["config"]};
}

Model sequential_from_config(const Json& config) {
  std::vector<LayerRef> layers;
  const Json& entries = config.at("layers");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry e = entry_of(entries[i]);
    if (detail::is_input_layer_class(e.class_name)) {
      layers.push_back(layers::InputLayer(example_shape(e.config),
                                          {.dtype = dtype_of(e.config), .name = e.config.value("name", "")}));
      continue;
    }
    if (i == 0 && config.contains("build_input_shape") && config["build_input_shape"].is_array())
      layers.push_back(layers::InputLayer(example_shape(Json{{"batch_shape", config["build_input_shape"]}})));
    layers.push_back(detail::layer_from_config(e.class_name, e.config));
  }
  return Sequential(std::move(layers), config.value("name", ""));
}

// Every layer name in a keras_history found anywhere in `j` (a call's arguments).
void histories_in(const Json& j, std::set<std::string>& names) {
  if (j.is_object()) {
    if (j.contains("keras_history") && j["keras_history"].is_array() && !j["keras_history"].empty() &&
        j["keras_history"][0].is_string())
      names.insert(j["keras_history"][0].get<std::string>());
    for (const auto& [key, value] : j.items()) histories_in(value, names);
  } else if (j.is_array()) {
    for (const Json& v : j) histories_in(v, names);
  }
}

// The op entries (module keras.src.ops...: not_equal, any, ...) that only compute masks: Keras 3
// writes the masks it propagated (Masking's, Embedding's) as "mask" keywords of the calls, with
// the ops that made them as entries of the config. kerascpp propagates the same masks itself
// (the "mask" keywords are left out in try_call), so those entries are skipped; an op whose
// output is data still fails, naming its class.
std::set<std::string> mask_only_ops(const Json& config) {
  std::set<std::string> ops, data;
  histories_in(config.value("output_layers", Json::array()), data);
  for (const Json& layer : config.at("layers")) {
    const std::string module = layer.is_object() && layer.contains("module") && layer["module"].is_string()
                                   ? layer["module"].get<std::string>()
                                   : "";
    const bool op = module.rfind("keras.src.ops", 0) == 0;
    if (op) ops.insert(layer.value("name", ""));
    if (op || !layer.contains("inbound_nodes")) continue;
    for (const Json& call : layer["inbound_nodes"]) {
      histories_in(call.value("args", Json::array()), data);
      const Json kwargs = call.value("kwargs", Json::object());
      for (const auto& [key, value] : kwargs.items())
        if (key != "mask") histories_in(value, data);
    }
  }
  std::set<std::string> out;
  for (const std::string& name : ops)
    if (!data.count(name)) out.insert(name);
  return out;
}

// One call of a layer from the config: the layer, which of its calls, and its arguments.
struct PendingCall {
  std::string layer;
  std::size_t node;
  const Json* call;
};

class FunctionalBuilder {
 public:
  Model build(const Json& config) {
    std::vector<PendingCall> pending;
    const std::set<std::string> skipped = mask_only_ops(config);
    for (const Json& layer : config.at("layers")) {
      const Entry e = entry_of(layer);
      const std::string name = layer.value("name", e.config.value("name", ""));
      if (skipped.count(name)) continue;
      if (detail::is_input_layer_class(e.class_name)) {
        outputs_[name] = {std::vector<KerasTensor>{Input(example_shape(e.config), dtype_of(e.config), name)}};
        continue;
      }
      layers_.emplace(name, detail::layer_from_config(e.class_name, e.config));
      static const Json kNoCalls = Json::array();
      // Pointers into the config (which outlives the build) for the calls still to replay.
      const Json& nodes = layer.contains("inbound_nodes") ? layer["inbound_nodes"] : kNoCalls;
      outputs_[name].resize(nodes.size());
      for (std::size_t n = 0; n < nodes.size(); ++n) pending.push_back({name, n, &nodes[n]});
    }
    // Calls whose inputs exist run; repeat until none is left (a shared layer's later call may
    // need a layer listed after it).
    while (!pending.empty()) {
      std::vector<PendingCall> waiting;
      for (const PendingCall& p : pending)
        if (!try_call(p)) waiting.push_back(p);
      if (waiting.size() == pending.size())
        fail(fmt::format("the call of layer '{}' needs a tensor no layer makes (a cycle or a missing layer)",
                         waiting.front().layer));
      pending = std::move(waiting);
    }
    return Model(endpoints(config.at("input_layers")), endpoints(config.at("output_layers")), config.value("name", ""));
  }

 private:
  std::optional<KerasTensor> tensor(const Json& history) const {
    if (!history.is_array() || history.size() != 3)
      fail("a keras_history is not [layer, node, tensor]: " + history.dump());
    const std::string layer = history[0].get<std::string>();
    auto it = outputs_.find(layer);
    if (it == outputs_.end()) fail(fmt::format("a call names layer '{}', which the config does not have", layer));
    const auto node = history[1].get<std::size_t>(), index = history[2].get<std::size_t>();
    if (node >= it->second.size())
      fail(fmt::format("a call names call {} of layer '{}', which has {}", node, layer, it->second.size()));
    const auto& outs = it->second[node];
    if (!outs) return std::nullopt;  // not made yet
    if (index >= outs->size()) fail(fmt::format("a call names output {} of layer '{}'", index, layer));
    return (*outs)[index];
  }

  static const Json& history_of(const Json& arg, const std::string& layer) {
    if (!arg.is_object() || arg.value("class_name", "") != "__keras_tensor__")
      fail(fmt::format("layer '{}' is called on {}, not a tensor; kerascpp rebuilds calls on tensors only", layer,
                       arg.dump().substr(0, 200)));
    return arg.at("config").at("keras_history");
  }

  bool try_call(const PendingCall& p) {
    const Json args = p.call->value("args", Json::array());
    const Json kwargs = p.call->value("kwargs", Json::object());
    const LayerRef& layer = layers_.at(p.layer);
    if (auto* mha = dynamic_cast<layers::MultiHeadAttentionLayer*>(layer.get().get()))
      return try_attention_call(p, *mha, args, kwargs);
    // Attention's use_causal_mask is a call keyword. Keras 3 also writes the mask it propagated into
    // a call as a "mask" keyword (a tensor of an op such as not_equal, which is not a layer of the
    // config); kerascpp propagates the same masks along the graph itself, so that one is left to it.
    auto* attention = dynamic_cast<layers::AttentionLayer*>(layer.get().get());
    layers::AttentionCall attention_call;
    for (const auto& [key, value] : kwargs.items()) {
      if (attention && key == "use_causal_mask" && value.is_boolean()) {
        attention_call.use_causal_mask = value.get<bool>();
        continue;
      }
      if (attention && key == "return_attention_scores" && value.is_boolean() && !value.get<bool>()) continue;
      if (!value.is_null() && key != "training" && key != "mask")
        fail(
            fmt::format("layer '{}' is called with '{}'; kerascpp rebuilds calls on positional tensors only "
                        "for now",
                        p.layer, key));
    }
    const bool as_list = args.size() == 1 && args[0].is_array();
    const Json& tensors = as_list ? args[0] : args;
    if (tensors.empty() || (!as_list && tensors.size() != 1))
      fail(fmt::format("layer '{}' is called on {} positional arguments; kerascpp rebuilds one tensor or one list",
                       p.layer, tensors.size()));
    std::vector<KerasTensor> inputs;
    for (const Json& arg : tensors) {
      std::optional<KerasTensor> t = tensor(history_of(arg, p.layer));
      if (!t) return false;
      inputs.push_back(*t);
    }
    // Every output (an RNN's return_state, Bidirectional with merge_mode None): call_multi.
    outputs_[p.layer][p.node] =
        attention ? std::vector<KerasTensor>{attention->call(inputs, attention_call)} : layer->call_multi(inputs);
    return true;
  }

  // MultiHeadAttention(query, value, key=None, attention_mask=None, use_causal_mask=False): query
  // and value positional or by keyword, the rest by keyword.
  bool try_attention_call(const PendingCall& p, layers::MultiHeadAttentionLayer& mha, const Json& args,
                          const Json& kwargs) {
    static const char* kTensorArgs[] = {"query", "value", "key", "attention_mask"};
    std::map<std::string, const Json*> given;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (i >= 4) fail(fmt::format("layer '{}' is called with {} positional arguments", p.layer, args.size()));
      given[kTensorArgs[i]] = &args[i];
    }
    bool causal = false;
    for (const auto& [key, value] : kwargs.items()) {
      if (value.is_null() || key == "training") continue;
      if (key == "use_causal_mask") causal = value.get<bool>();
      else if (key == "return_attention_scores" && !value.get<bool>()) continue;
      else if (std::find(std::begin(kTensorArgs), std::end(kTensorArgs), key) != std::end(kTensorArgs))
        given[key] = &kwargs[key];
      else
        fail(fmt::format("layer '{}' (MultiHeadAttention) is called with '{}', which kerascpp does not have", p.layer,
                         key));
    }
    std::map<std::string, KerasTensor> t;
    for (const auto& [name, arg] : given) {
      std::optional<KerasTensor> x = tensor(history_of(*arg, p.layer));
      if (!x) return false;
      t[name] = *x;
    }
    if (!t.count("query") || !t.count("value"))
      fail(fmt::format("layer '{}' (MultiHeadAttention) is called without a query and a value", p.layer));
    layers::MultiHeadAttentionCall call{.use_causal_mask = causal};
    if (t.count("key")) call.key = t["key"];
    if (t.count("attention_mask")) call.attention_mask = t["attention_mask"];
    outputs_[p.layer][p.node] = std::vector<KerasTensor>{mha.call(t["query"], t["value"], call)};
    return true;
  }

  // One [layer, node, tensor] or a list of them.
  std::vector<KerasTensor> endpoints(const Json& j) const {
    std::vector<KerasTensor> out;
    const bool single = j.is_array() && !j.empty() && j[0].is_string();
    for (const Json& h : single ? Json::array({j}) : j) {
      std::optional<KerasTensor> t = tensor(h);
      if (!t) fail("a model input or output is never computed: " + h.dump());
      out.push_back(*t);
    }
    return out;
  }

  std::map<std::string, LayerRef> layers_;
  std::map<std::string, std::vector<std::optional<std::vector<KerasTensor>>>> outputs_;
};

}  // namespace

Model model_from_json(const std::string& json) {
  Json j;
  try {
    j = Json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(fmt::format("model_from_json: the text is not JSON ({})", e.what()));
  }
  try {
    if (!j.is_object() || !j.contains("config")) fail("no top-level class_name/config object");
    const std::string cls = j.value("class_name", "");
    if (cls == "Sequential") return sequential_from_config(j["config"]);
    if (cls == "Functional" || cls == "Model") return FunctionalBuilder().build(j["config"]);
    fail(fmt::format("the model's class is '{}'; kerascpp rebuilds Functional and Sequential models", cls));
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(fmt::format("model config: malformed ({})", e.what()));
  }
}

}  // namespace kerascpp
