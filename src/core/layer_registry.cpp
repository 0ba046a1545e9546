#include "core/layer_registry.hpp"
#include "check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

namespace kerascpp {

// ---- LayerConfig -----------------------------------------------------------------------------

LayerConfig::LayerConfig(std::string class_name, const Json& config) : class_name_(std::move(class_name)), j_(config) {
  if (!j_.is_object()) fail("its config is not a JSON object");
}

void LayerConfig::fail(const std::string& what) const {
  const std::string name = j_.is_object() && j_.contains("name") && j_["name"].is_string()
                               ? j_["name"].get<std::string>()
                               : std::string("?");
  throw ValueError(fmt::format("model config: layer '{}' ({}): {}", name, class_name_, what));
}

void LayerConfig::fail_type(const char* key, const Json& value) const {
  fail(fmt::format("'{}' is {}, not the expected type", key, value.dump()));
}

void LayerConfig::fail_missing(const char* key) const { fail(fmt::format("its config has no '{}'", key)); }

const Json* LayerConfig::find(const char* key) const {
  auto it = j_.find(key);
  return it == j_.end() || it->is_null() ? nullptr : &*it;
}

Size2D LayerConfig::size2d(const char* key, std::int64_t fallback) const {
  const Json* v = find(key);
  if (!v) return fallback;
  if (v->is_number_integer()) return v->get<std::int64_t>();
  if (v->is_array() && v->size() == 2 && (*v)[0].is_number_integer() && (*v)[1].is_number_integer())
    return {(*v)[0].get<std::int64_t>(), (*v)[1].get<std::int64_t>()};
  fail(fmt::format("'{}' is {}, not an integer or a pair of integers", key, v->dump()));
}

Size3D LayerConfig::size3d(const char* key, std::int64_t fallback) const {
  const Json* v = find(key);
  if (!v) return fallback;
  if (v->is_number_integer()) return v->get<std::int64_t>();
  if (v->is_array() && v->size() == 3 && (*v)[0].is_number_integer() && (*v)[1].is_number_integer() &&
      (*v)[2].is_number_integer())
    return {(*v)[0].get<std::int64_t>(), (*v)[1].get<std::int64_t>(), (*v)[2].get<std::int64_t>()};
  fail(fmt::format("'{}' is {}, not an integer or three integers", key, v->dump()));
}

std::int64_t LayerConfig::size1d(const char* key, std::int64_t fallback) const {
  const Json* v = find(key);
  if (!v) return fallback;
  if (v->is_number_integer()) return v->get<std::int64_t>();
  if (v->is_array() && v->size() == 1 && (*v)[0].is_number_integer()) return (*v)[0].get<std::int64_t>();
  fail(fmt::format("'{}' is {}, not an integer", key, v->dump()));
}

Padding LayerConfig::padding(bool causal_allowed) const {
  const std::string p = str("padding", "valid");
  if (p == "valid") return Padding::valid;
  if (p == "same") return Padding::same;
  if (p == "causal" && causal_allowed) return Padding::causal;
  fail(fmt::format("padding '{}' is not supported here (valid or same{})", p, causal_allowed ? " or causal" : ""));
}

void LayerConfig::expect_no_dilation() const {
  const Json* v = find("dilation_rate");
  if (!v) return;
  const bool ones = v->is_number_integer() ? v->get<int>() == 1
                                           : v->is_array() && std::all_of(v->begin(), v->end(), [](const Json& d) {
                                               return d.is_number_integer() && d.get<int>() == 1;
                                             });
  if (!ones) fail(fmt::format("'dilation_rate' is {}; kerascpp's convolutions have no dilation yet", v->dump()));
}

void LayerConfig::expect(const char* key, const Json& default_value, const std::string& why) const {
  const Json* v = find(key);
  if (v && *v != default_value)
    fail(fmt::format("'{}' is {}; kerascpp supports only {} ({})", key, v->dump(), default_value.dump(), why));
}

regularizers::Regularizer LayerConfig::regularizer(const char* key) const {
  const Json* v = find(key);
  if (!v) return {};
  const std::string cls = v->value("class_name", "");
  const Json c = v->value("config", Json::object());
  if (cls == "L1") return regularizers::L1(c.value("l1", 0.01f));
  if (cls == "L2") return regularizers::L2(c.value("l2", 0.01f));
  if (cls == "L1L2") return regularizers::L1L2(c.value("l1", 0.f), c.value("l2", 0.f));
  fail(fmt::format("'{}' is regularizer '{}'; kerascpp has L1, L2 and L1L2", key, cls));
}

constraints::Constraint LayerConfig::constraint(const char* key) const {
  const Json* v = find(key);
  if (!v) return {};
  const std::string cls = v->value("class_name", "");
  if (cls != "MaxNorm") fail(fmt::format("'{}' is constraint '{}'; kerascpp has MaxNorm", key, cls));
  const Json c = v->value("config", Json::object());
  std::vector<int> axis;
  const Json a = c.value("axis", Json(0));
  if (a.is_array())
    for (const auto& x : a) axis.push_back(x.get<int>());
  else axis.push_back(a.get<int>());
  return constraints::MaxNorm(c.value("max_value", 2.f), axis);
}

void LayerConfig::expect_last_axis(std::int64_t rank_hint) const {
  const Json* v = find("axis");
  if (!v) return;
  Json a = *v;
  if (a.is_array() && a.size() == 1) a = a[0];
  if (a.is_number_integer() && (a.get<int>() == -1 || (rank_hint > 0 && a.get<int>() == rank_hint - 1))) return;
  fail(fmt::format("'axis' is {}; kerascpp normalizes over the last axis only", v->dump()));
}

// ---- the registry ----------------------------------------------------------------------------

namespace {

struct Registered {
  LayerFactory factory;
  bool builtin = false;  // KERASCPP_REGISTER_LAYER: the library's own, never replaced
};

struct Registry {
  std::mutex mu;
  std::map<std::string, Registered> classes;
};

// Built-in layers register from static initializers in other translation units, so the registry
// is made on first use (never destroyed: a layer may be loaded while the process exits).
Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

// The registered entry for class_name, copied out under the lock (empty factory: none).
Registered lookup(const std::string& class_name) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.classes.find(class_name);
  return it == r.classes.end() ? Registered{} : it->second;
}

}  // namespace

detail::BuiltinLayerRegistration::BuiltinLayerRegistration(const char* class_name, LayerFactory factory) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.classes[class_name] = Registered{std::move(factory), true};
}

void register_layer_class(const std::string& class_name, LayerFactory factory) {
  KERASCPP_CHECK_VALUE(
      !class_name.empty() && !detail::is_input_layer_class(class_name) && !detail::rebuilds_layer_class(class_name),
      "register_layer_class: '{}' is {}; register a class of your own under its own "
      "class_name()",
      class_name, class_name.empty() ? "empty" : "a class kerascpp rebuilds itself");
  KERASCPP_CHECK_VALUE(factory, "register_layer_class: the factory for '{}' is empty", class_name);
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.classes[class_name] = Registered{std::move(factory), false};
}

std::vector<std::string> registered_layer_classes() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  std::vector<std::string> names;
  for (const auto& [name, entry] : r.classes) names.push_back(name);
  return names;  // std::map: sorted
}

}  // namespace kerascpp

namespace kerascpp::detail {

bool is_input_layer_class(const std::string& class_name) { return class_name == "InputLayer"; }

bool rebuilds_layer_class(const std::string& class_name) { return lookup(class_name).builtin; }

LayerRef layer_from_config(const std::string& class_name, const Json& config) {
  const LayerConfig c(class_name, config);
  const Registered entry = lookup(class_name);
  if (!entry.factory) {
    std::string known;
    for (const auto& name : registered_layer_classes()) known += (known.empty() ? "" : ", ") + name;
    c.fail(
        fmt::format("kerascpp cannot rebuild a '{}' from a config (it can: InputLayer, {}); for a layer class of "
                    "your own, call kerascpp::register_layer_class(\"{}\", factory) first",
                    class_name, known, class_name));
  }
  LayerRef layer;
  if (entry.builtin) {
    layer = entry.factory(c);
  } else {
    try {
      layer = entry.factory(c);
    } catch (const std::exception& e) { c.fail(fmt::format("its registered factory failed: {}", e.what())); }
    if (!layer.get()) c.fail("its registered factory returned no layer");
    if (layer->class_name() != class_name)
      c.fail(fmt::format("its registered factory made a '{}'; it must make a '{}'", layer->class_name(), class_name));
  }
  if (!c.get("trainable", true)) layer->set_trainable(false);
  // Keras writes a layer's dtype policy as a name or as {"class_name": "DTypePolicy", "config":
  // {"name": ...}}.
  if (const Json* d = c.find("dtype")) {
    const Json* policy = d->is_object() && d->contains("config") ? &(*d)["config"] : d;
    const std::string name = policy->is_string()   ? policy->get<std::string>()
                             : policy->is_object() ? policy->value("name", "")
                                                   : "";
    if (name.empty()) c.fail(fmt::format("'dtype' is {}, not a dtype policy", d->dump()));
    try {
      layer->set_dtype_policy(name);
    } catch (const ValueError& e) { c.fail(e.what()); }
  }
  return layer;
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
  // or Discretization's (their constructors take no **kwargs, so Keras' own from_config would refuse
  // the key).
  const bool input_layer = is_input_layer_class(layer.class_name());
  const bool takes_trainable =
      !input_layer && layer.class_name().rfind("SpatialDropout", 0) != 0 && layer.class_name() != "Discretization";
  if (takes_trainable) config["trainable"] = layer.trainable();
  // Keras 3 writes the policy object; a float32 layer leaves it out (Keras' default). An
  // InputLayer's dtype is its tensor's, written above.
  if (!input_layer && layer.dtype_policy().name() != "float32")
    config["dtype"] = Json{{"module", "keras"},
                           {"class_name", "DTypePolicy"},
                           {"config", {{"name", layer.dtype_policy().name()}}},
                           {"registered_name", nullptr}};
  // A class of the user's own (register_layer_class) is written as Keras writes a registered
  // custom object: no module, its name as the registered name, which Keras' load_model looks up in
  // custom_objects.
  const bool builtin = input_layer || rebuilds_layer_class(layer.class_name());
  return Json{{"module", builtin ? Json("keras.layers") : Json()},
              {"class_name", layer.class_name()},
              {"config", std::move(config)},
              {"registered_name", builtin ? Json() : Json(layer.class_name())}};
}

LayerRef layer_from_entry(const LayerConfig& wrapper, const char* key) {
  const Json* entry = wrapper.find(key);
  if (!entry || !entry->is_object() || !entry->contains("class_name") || !(*entry)["class_name"].is_string() ||
      !entry->contains("config"))
    wrapper.fail(
        fmt::format("'{}' must be a layer entry {{\"class_name\": ..., \"config\": {{...}}}} (the wrapped "
                    "layer), got {}",
                    key, entry ? entry->dump() : "nothing"));
  return layer_from_config((*entry)["class_name"].get<std::string>(), (*entry)["config"]);
}

}  // namespace kerascpp::detail
