// Layers that describe themselves: a layer writes its Keras config in get_config() and registers,
// next to it, the factory that rebuilds it from that config, so load_model and model_from_json
// know every layer class without a central table.
//   KERASCPP_REGISTER_LAYER("MyLayer", [](const kerascpp::LayerConfig& c) {
//     return std::make_shared<MyLayer>(c.required<std::int64_t>("units"), c.name());
//   });
// (at namespace scope in the layer's .cpp), or at run time
//   kerascpp::register_layer_class("MyLayer", factory);
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kerascpp/core/constraints.hpp"
#include "kerascpp/core/layer.hpp"
#include "kerascpp/core/regularizers.hpp"
#include "kerascpp/error.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp {

/// One layer's config, read with errors that name the layer, its class and the key: a missing or
/// mistyped key, or a setting kerascpp does not have, is a ValueError saying so.
class LayerConfig {
 public:
  /// Throws ValueError unless `config` is a JSON object.
  LayerConfig(std::string class_name, const Json& config);

  /// The raw JSON object, for keys no reader below covers.
  const Json& json() const { return j_; }
  /// The Keras class name the config is for ("Dense").
  const std::string& class_name() const { return class_name_; }
  /// The layer's "name" ("" where the config has none: the layer then picks one).
  std::string name() const { return str("name", ""); }

  /// A ValueError "model config: layer '<name>' (<class>): <what>".
  [[noreturn]] void fail(const std::string& what) const;

  /// The value of `key`, or nullptr where it is absent or null (Keras' None).
  const Json* find(const char* key) const;
  /// `key` as a T, or `fallback` where absent; a value of another type is a ValueError.
  template <class T>
  T get(const char* key, T fallback) const {
    const Json* v = find(key);
    if (!v) return fallback;
    try {
      return v->get<T>();
    } catch (const nlohmann::json::exception&) { fail_type(key, *v); }
  }
  /// `key` as a string, or `fallback` where absent.
  std::string str(const char* key, const std::string& fallback) const { return get<std::string>(key, fallback); }
  /// `key` as a T; absent is a ValueError.
  template <class T>
  T required(const char* key) const {
    if (!find(key)) fail_missing(key);
    return get<T>(key, T{});
  }

  /// An int or a pair of ints (Keras writes pairs as lists).
  Size2D size2d(const char* key, std::int64_t fallback) const;
  /// An int or a triple of ints (the 3-D layers' sizes).
  Size3D size3d(const char* key, std::int64_t fallback) const;
  /// An int or a one-element list (Conv1D's sizes).
  std::int64_t size1d(const char* key, std::int64_t fallback) const;
  /// "valid", "same", and "causal" where the layer allows it.
  Padding padding(bool causal_allowed = false) const;
  /// @{
  /// A Keras regularizer or constraint object (L1, L2, L1L2; MaxNorm), empty where absent.
  regularizers::Regularizer regularizer(const char* key) const;
  constraints::Constraint constraint(const char* key) const;
  /// @}

  /// Settings kerascpp does not have must hold Keras' default, or the rebuilt layer would differ:
  /// `key` absent or equal to `default_value`, else a ValueError giving `why`.
  void expect(const char* key, const Json& default_value, const std::string& why) const;
  /// Only "channels_last" data_format (kerascpp's tensors are NHWC).
  void expect_channels_last() const { expect("data_format", "channels_last", "NHWC tensors"); }
  /// Dilation the convolutions do not have yet: every rate must be 1.
  void expect_no_dilation() const;
  /// Keras' per-axis layers (BatchNormalization, LayerNormalization): the last axis, -1 or
  /// rank_hint - 1 (rank_hint 0: only -1).
  void expect_last_axis(std::int64_t rank_hint) const;

 private:
  [[noreturn]] void fail_type(const char* key, const Json& value) const;
  [[noreturn]] void fail_missing(const char* key) const;

  std::string class_name_;
  const Json& j_;
};

/// Rebuilds a layer of one class from its config.
using LayerFactory = std::function<LayerRef(const LayerConfig&)>;

/// Registers the factory for a layer class of your own (Keras' custom_objects): load_model and
/// model_from_json then rebuild `class_name` with it (give the layer the config's name()). Register
/// before loading; registering a class again replaces its factory. A class kerascpp registers
/// itself ("Dense", ...) is a ValueError. Trainable flags and dtype policies in the config are
/// applied after the factory returns.
void register_layer_class(const std::string& class_name, LayerFactory factory);

/// The layer classes load_model can rebuild, sorted (built-in and registered).
std::vector<std::string> registered_layer_classes();

namespace detail {
// What KERASCPP_REGISTER_LAYER expands to: registers a built-in class while the library loads.
struct BuiltinLayerRegistration {
  BuiltinLayerRegistration(const char* class_name, LayerFactory factory);
};
}  // namespace detail

}  // namespace kerascpp

#define KERASCPP_LAYER_CONCAT_INNER(a, b) a##b
#define KERASCPP_LAYER_CONCAT(a, b) KERASCPP_LAYER_CONCAT_INNER(a, b)
/// Registers a layer class of the library (in its own .cpp, at namespace scope): a class
/// registered this way cannot be replaced by register_layer_class. The factory is variadic so that
/// a lambda may hold commas (template arguments) outside parentheses. The object's name uses
/// __COUNTER__, not __LINE__, so that two layer files compiled as one unit (a unity build) do not
/// collide.
#define KERASCPP_REGISTER_LAYER(class_name, ...)                                                                     \
  static const ::kerascpp::detail::BuiltinLayerRegistration KERASCPP_LAYER_CONCAT(kerascpp_layer_reg_, __COUNTER__)( \
      class_name, __VA_ARGS__)
