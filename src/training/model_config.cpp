// Model::to_json: the model's architecture in the JSON that Keras 3 writes and reads
// (keras.Model.to_json / keras.models.model_from_json): each layer's class and config, and for a
// functional model the calls between layers (inbound_nodes). Built with a JSON library, so layer
// names holding quotes or backslashes stay valid JSON.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <unordered_map>

#include "check.hpp"
#include "core/layer_registry.hpp"
#include "kerascpp/layers/input_layer.hpp"
#include "training/model_impl.hpp"

namespace kerascpp {

namespace {

using Json = nlohmann::ordered_json;

// (None, d1, d2, ...) with the batch axis unknown, as Keras writes shapes.
Json batch_shape(const Shape& per_example) {
  Json shape = Json::array({nullptr});
  for (std::int64_t d : per_example) shape.push_back(d);
  return shape;
}

// {"module": "keras.layers", "class_name": "Dense", "config": {...}, "registered_name": null}:
// how Keras refers to a built-in layer.
Json layer_entry(const Layer& layer) {
  Json config = layer.get_config();
  KERASCPP_CHECK_VALUE(config.is_object(), "Layer '{}' ({}): get_config() must return a JSON object, got {}",
                       layer.name(), layer.class_name(), config.dump(-1, ' ', false, Json::error_handler_t::replace));
  if (!config.contains("name")) {  // Keras names the rebuilt layer from its config
    Json named{{"name", layer.name()}};
    named.update(config);
    config = std::move(named);
  }
  // Keras' layer configs carry `trainable`; its InputLayer's does not, nor do its SpatialDropout1D/2D/3D's
  // or Discretization's (their constructors take no **kwargs, so Keras' own from_config would refuse the key).
  const bool takes_trainable = !dynamic_cast<const layers::InputLayerImpl*>(&layer) &&
                               layer.class_name().rfind("SpatialDropout", 0) != 0 &&
                               layer.class_name() != "Discretization";
  if (takes_trainable) config["trainable"] = layer.trainable();
  // Keras 3 writes the policy object; a float32 layer leaves it out (Keras' default). An
  // InputLayer's dtype is its tensor's, written above.
  if (!dynamic_cast<const layers::InputLayerImpl*>(&layer) && layer.dtype_policy().name() != "float32")
    config["dtype"] = Json{{"module", "keras"},
                           {"class_name", "DTypePolicy"},
                           {"config", {{"name", layer.dtype_policy().name()}}},
                           {"registered_name", nullptr}};
  // A class of the user's own (register_layer_class) is written as Keras writes a registered
  // custom object: no module, its name as the registered name, which Keras' load_model looks up in
  // custom_objects.
  const bool builtin =
      dynamic_cast<const layers::InputLayerImpl*>(&layer) || detail::rebuilds_layer_class(layer.class_name());
  return Json{{"module", builtin ? Json("keras.layers") : Json()},
              {"class_name", layer.class_name()},
              {"config", std::move(config)},
              {"registered_name", builtin ? Json() : Json(layer.class_name())}};
}

// The functional graph as Keras serialises it: for every layer, each call (node) lists the
// tensors it was called on as [layer name, node index, tensor index] ("keras_history"), where the
// node index counts that layer's calls in the order they are listed here.
Json functional_config(const detail::Graph& graph, const std::string& name) {
  std::unordered_map<const Node*, int> node_index;  // position among its layer's calls
  std::unordered_map<const Layer*, int> calls;
  for (const auto& node : graph.nodes()) node_index[node.get()] = calls[node->layer.get()]++;
  auto history = [&](const KerasTensor& t) {
    return Json::array({t.node()->layer->name(), node_index.at(t.node().get()), t.index()});
  };
  auto tensor = [&](const KerasTensor& t) {
    return Json{{"class_name", "__keras_tensor__"},
                {"config",
                 {{"shape", batch_shape(t.shape())}, {"dtype", dtype_name(t.dtype())}, {"keras_history", history(t)}}}};
  };
  Json layers = Json::array();
  for (const auto& layer : graph.layers()) {
    Json entry = layer_entry(*layer);
    entry["name"] = layer->name();
    Json inbound = Json::array();
    for (const auto& node : graph.nodes()) {
      if (node->layer != layer || node->inputs.empty()) continue;  // an Input has no inbound call
      const Layer::CallArguments call = layer->call_arguments(node->inputs.size());
      Json positional = Json::array(), kwargs = Json::parse(call.extra_kwargs_json);
      for (std::size_t i = 0; i < node->inputs.size(); ++i) {
        const std::string& keyword = i < call.keywords.size() ? call.keywords[i] : std::string();
        if (keyword.empty()) positional.push_back(tensor(node->inputs[i]));
        else kwargs[keyword] = tensor(node->inputs[i]);
      }
      // One input is passed bare; several positional ones as one list (layer([a, b])) or each alone.
      Json args =
          positional.size() > 1 && call.inputs_as_list ? Json::array({std::move(positional)}) : std::move(positional);
      inbound.push_back({{"args", std::move(args)}, {"kwargs", std::move(kwargs)}});
    }
    entry["inbound_nodes"] = std::move(inbound);
    layers.push_back(std::move(entry));
  }
  // One input (output) is written as the bare [name, node, tensor], several as a list, as Keras does.
  auto endpoints = [&](const std::vector<KerasTensor>& ts) {
    if (ts.size() == 1) return history(ts[0]);
    Json list = Json::array();
    for (const auto& t : ts) list.push_back(history(t));
    return list;
  };
  return Json{{"name", name},
              {"trainable", true},
              {"layers", std::move(layers)},
              {"input_layers", endpoints(graph.inputs())},
              {"output_layers", endpoints(graph.outputs())}};
}

// A Sequential model lists its layers in order, its InputLayer first.
Json sequential_config(const detail::Graph& graph, const std::string& name) {
  Json layers = Json::array();
  for (const auto& layer : graph.layers()) layers.push_back(layer_entry(*layer));
  return Json{{"name", name},
              {"trainable", true},
              {"layers", std::move(layers)},
              {"build_input_shape", batch_shape(graph.inputs().front().shape())}};
}

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace

std::string Model::to_json() const {
  const auto& graph = impl_->require_graph("describe its config");
  if (impl_->sequential)
    return dump({{"module", "keras"},
                 {"class_name", "Sequential"},
                 {"config", sequential_config(graph, impl_->name)},
                 {"registered_name", nullptr}});
  return dump({{"module", "keras.src.models.functional"},
               {"class_name", "Functional"},
               {"config", functional_config(graph, impl_->name)},
               {"registered_name", "Functional"}});
}

}  // namespace kerascpp
