#include "engine/layer_from_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "kerascpp/constraints.hpp"
#include "kerascpp/error.hpp"
#include "kerascpp/layers/activation.hpp"
#include "kerascpp/layers/batch_normalization.hpp"
#include "kerascpp/layers/conv1d.hpp"
#include "kerascpp/layers/conv2d.hpp"
#include "kerascpp/layers/conv2d_transpose.hpp"
#include "kerascpp/layers/dense.hpp"
#include "kerascpp/layers/depthwise_conv2d.hpp"
#include "kerascpp/layers/dot.hpp"
#include "kerascpp/layers/dropout.hpp"
#include "kerascpp/layers/embedding.hpp"
#include "kerascpp/layers/layer_normalization.hpp"
#include "kerascpp/layers/merging.hpp"
#include "kerascpp/layers/multi_head_attention.hpp"
#include "kerascpp/layers/pooling.hpp"
#include "kerascpp/layers/recurrent.hpp"
#include "kerascpp/layers/reshaping.hpp"
#include "kerascpp/layers/resizing.hpp"
#include "kerascpp/layers/softmax.hpp"
#include "kerascpp/regularizers.hpp"
#include "kerascpp/saving.hpp"

namespace kerascpp::detail {

namespace {

using Json = nlohmann::json;

// One layer's config, read with messages that name the layer and the key.
class Config {
 public:
  Config(std::string class_name, const Json& j) : class_name_(std::move(class_name)), j_(j) {
    if (!j_.is_object()) fail("its config is not a JSON object");
  }
  std::string name() const { return str("name", ""); }

  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError(fmt::format("model config: layer '{}' ({}): {}", j_.is_object() ? j_.value("name", "?") : "?",
                                 class_name_, what));
  }
  const Json* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  template <class T>
  T get(const char* key, T fallback) const {
    const Json* v = find(key);
    if (!v) return fallback;
    try {
      return v->get<T>();
    } catch (const nlohmann::json::exception&) {
      fail(fmt::format("'{}' is {}, not the expected type", key, v->dump()));
    }
  }
  std::string str(const char* key, const std::string& fallback) const { return get<std::string>(key, fallback); }
  template <class T>
  T required(const char* key) const {
    if (!find(key)) fail(fmt::format("its config has no '{}'", key));
    return get<T>(key, T{});
  }
  // An int or a pair of ints (Keras writes pairs as lists).
  Size2D size2d(const char* key, std::int64_t fallback) const {
    const Json* v = find(key);
    if (!v) return fallback;
    if (v->is_number_integer()) return v->get<std::int64_t>();
    if (v->is_array() && v->size() == 2 && (*v)[0].is_number_integer() && (*v)[1].is_number_integer())
      return {(*v)[0].get<std::int64_t>(), (*v)[1].get<std::int64_t>()};
    fail(fmt::format("'{}' is {}, not an integer or a pair of integers", key, v->dump()));
  }
  // An int or a one-element list (Conv1D's sizes).
  std::int64_t size1d(const char* key, std::int64_t fallback) const {
    const Json* v = find(key);
    if (!v) return fallback;
    if (v->is_number_integer()) return v->get<std::int64_t>();
    if (v->is_array() && v->size() == 1 && (*v)[0].is_number_integer()) return (*v)[0].get<std::int64_t>();
    fail(fmt::format("'{}' is {}, not an integer", key, v->dump()));
  }
  Padding padding(bool causal_allowed = false) const {
    const std::string p = str("padding", "valid");
    if (p == "valid") return Padding::valid;
    if (p == "same") return Padding::same;
    if (p == "causal" && causal_allowed) return Padding::causal;
    fail(fmt::format("padding '{}' is not supported here (valid or same{})", p, causal_allowed ? " or causal" : ""));
  }
  // Dilation kerascpp's convolutions do not have yet: every rate must be 1.
  void expect_no_dilation() const {
    const Json* v = find("dilation_rate");
    if (!v) return;
    const bool ones = v->is_number_integer() ? v->get<int>() == 1
                                             : v->is_array() && std::all_of(v->begin(), v->end(), [](const Json& d) {
                                                 return d.is_number_integer() && d.get<int>() == 1;
                                               });
    if (!ones) fail(fmt::format("'dilation_rate' is {}; kerascpp's convolutions have no dilation yet", v->dump()));
  }
  // Settings kerascpp does not have must hold Keras' default, or the rebuilt layer would differ.
  void expect(const char* key, const Json& default_value, const std::string& why) const {
    const Json* v = find(key);
    if (v && *v != default_value)
      fail(fmt::format("'{}' is {}; kerascpp supports only {} ({})", key, v->dump(), default_value.dump(), why));
  }
  void expect_channels_last() const { expect("data_format", "channels_last", "NHWC tensors"); }
  regularizers::Regularizer regularizer(const char* key) const {
    const Json* v = find(key);
    if (!v) return {};
    const std::string cls = v->value("class_name", "");
    const Json c = v->value("config", Json::object());
    if (cls == "L1") return regularizers::L1(c.value("l1", 0.01f));
    if (cls == "L2") return regularizers::L2(c.value("l2", 0.01f));
    if (cls == "L1L2") return regularizers::L1L2(c.value("l1", 0.f), c.value("l2", 0.f));
    fail(fmt::format("'{}' is regularizer '{}'; kerascpp has L1, L2 and L1L2", key, cls));
  }
  constraints::Constraint constraint(const char* key) const {
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
  // Keras' per-axis layers (BatchNormalization, LayerNormalization, Softmax's default): the last axis.
  void expect_last_axis(std::int64_t rank_hint) const {
    const Json* v = find("axis");
    if (!v) return;
    Json a = *v;
    if (a.is_array() && a.size() == 1) a = a[0];
    if (a.is_number_integer() && (a.get<int>() == -1 || (rank_hint > 0 && a.get<int>() == rank_hint - 1))) return;
    fail(fmt::format("'axis' is {}; kerascpp normalizes over the last axis only", v->dump()));
  }

 private:
  std::string class_name_;
  const Json& j_;
};

using Factory = std::function<LayerRef(const Config&)>;

// The settings Dense and the convolutions share (activation, bias, kernel and bias regularizers and
// constraints, name), read into their options struct.
template <class Options>
Options kernel_options(const Config& c, Options o) {
  o.activation = c.str("activation", "linear");
  o.use_bias = c.get("use_bias", true);
  o.kernel_regularizer = c.regularizer("kernel_regularizer");
  o.bias_regularizer = c.regularizer("bias_regularizer");
  o.kernel_constraint = c.constraint("kernel_constraint");
  o.bias_constraint = c.constraint("bias_constraint");
  o.name = c.name();
  return o;
}

LayerRef merge(const std::string& kind, const Config& c) {
  layers::AddOptions o{.name = c.name()};
  if (kind == "Add") return layers::Add(o);
  if (kind == "Subtract") return layers::Subtract(o);
  if (kind == "Multiply") return layers::Multiply(o);
  return layers::Average(o);
}

// LSTM and GRU: Keras 3's defaults for what kerascpp does not have (dropout, state, stateful).
LayerRef recurrent(const std::string& kind, const Config& c) {
  c.expect("dropout", 0.0, "no dropout inside the recurrence yet");
  c.expect("recurrent_dropout", 0.0, "no recurrent dropout yet");
  c.expect("return_state", false, "no returned states yet");
  c.expect("stateful", false, "no stateful layers");
  if (kind == "GRU") c.expect("reset_after", true, "Keras 3's GRU (reset gate after the matmul)");
  layers::RecurrentOptions o{.activation = c.str("activation", "tanh"),
                             .recurrent_activation = c.str("recurrent_activation", "sigmoid"),
                             .use_bias = c.get("use_bias", true),
                             .unit_forget_bias = c.get("unit_forget_bias", true),
                             .kernel_regularizer = c.regularizer("kernel_regularizer"),
                             .recurrent_regularizer = c.regularizer("recurrent_regularizer"),
                             .bias_regularizer = c.regularizer("bias_regularizer"),
                             .kernel_constraint = c.constraint("kernel_constraint"),
                             .recurrent_constraint = c.constraint("recurrent_constraint"),
                             .bias_constraint = c.constraint("bias_constraint"),
                             .return_sequences = c.get("return_sequences", false),
                             .go_backwards = c.get("go_backwards", false),
                             .name = c.name()};
  const auto units = c.required<std::int64_t>("units");
  return kind == "LSTM" ? layers::LSTM(units, o) : layers::GRU(units, o);
}

const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"Dense",
       [](const Config& c) {
         c.expect("lora_rank", nullptr, "no LoRA");
         return layers::Dense(c.required<std::int64_t>("units"), kernel_options(c, layers::DenseOptions{}));
       }},
      {"Conv2D",
       [](const Config& c) {
         c.expect_channels_last();
         c.expect_no_dilation();
         c.expect("groups", 1, "no grouped convolutions");
         return layers::Conv2D(
             c.required<std::int64_t>("filters"), c.size2d("kernel_size", 0),
             kernel_options(c, layers::Conv2DOptions{.strides = c.size2d("strides", 1), .padding = c.padding()}));
       }},
      {"Conv1D",
       [](const Config& c) {
         c.expect_channels_last();
         c.expect_no_dilation();
         c.expect("groups", 1, "no grouped convolutions");
         return layers::Conv1D(
             c.required<std::int64_t>("filters"), c.size1d("kernel_size", 0),
             kernel_options(c, layers::Conv1DOptions{.strides = c.size1d("strides", 1), .padding = c.padding(true)}));
       }},
      {"DepthwiseConv2D",
       [](const Config& c) {
         c.expect_channels_last();
         c.expect_no_dilation();
         return layers::DepthwiseConv2D(c.size2d("kernel_size", 0),
                                        {.strides = c.size2d("strides", 1),
                                         .padding = c.padding(),
                                         .depth_multiplier = c.get<std::int64_t>("depth_multiplier", 1),
                                         .activation = c.str("activation", "linear"),
                                         .use_bias = c.get("use_bias", true),
                                         .depthwise_regularizer = c.regularizer("depthwise_regularizer"),
                                         .bias_regularizer = c.regularizer("bias_regularizer"),
                                         .depthwise_constraint = c.constraint("depthwise_constraint"),
                                         .bias_constraint = c.constraint("bias_constraint"),
                                         .name = c.name()});
       }},
      {"Conv2DTranspose",
       [](const Config& c) {
         c.expect_channels_last();
         c.expect_no_dilation();
         c.expect("output_padding", nullptr, "no output_padding yet");
         return layers::Conv2DTranspose(
             c.required<std::int64_t>("filters"), c.size2d("kernel_size", 0),
             kernel_options(c,
                            layers::Conv2DTransposeOptions{.strides = c.size2d("strides", 1), .padding = c.padding()}));
       }},
      {"UpSampling2D",
       [](const Config& c) {
         c.expect_channels_last();
         return layers::UpSampling2D(c.size2d("size", 2),
                                     {.interpolation = c.str("interpolation", "nearest"), .name = c.name()});
       }},
      {"Dot",
       [](const Config& c) {
         const Json* axes = c.find("axes");
         if (!axes) c.fail("its config has no 'axes'");
         layers::DotOptions o{.normalize = c.get("normalize", false), .name = c.name()};
         if (axes->is_number_integer()) return layers::Dot(axes->get<int>(), o);
         if (axes->is_array() && axes->size() == 2)
           return layers::Dot(std::pair<int, int>{(*axes)[0].get<int>(), (*axes)[1].get<int>()}, o);
         c.fail("'axes' is " + axes->dump() + ", not an integer or a pair");
       }},
      {"MultiHeadAttention",
       [](const Config& c) -> LayerRef {
         const Json* axes = c.find("attention_axes");
         if (axes && *axes != Json::array({1}) && *axes != Json(1))
           c.fail("'attention_axes' is " + axes->dump() + "; kerascpp attends over axis 1 of (batch, steps, features)");
         layers::MultiHeadAttentionOptions o{.dropout = c.get("dropout", 0.0),
                                             .use_bias = c.get("use_bias", true),
                                             .kernel_regularizer = c.regularizer("kernel_regularizer"),
                                             .bias_regularizer = c.regularizer("bias_regularizer"),
                                             .kernel_constraint = c.constraint("kernel_constraint"),
                                             .bias_constraint = c.constraint("bias_constraint"),
                                             .name = c.name()};
         if (c.find("value_dim")) o.value_dim = c.get<std::int64_t>("value_dim", 0);
         if (const Json* out = c.find("output_shape")) {
           if (out->is_number_integer()) o.output_shape = out->get<std::int64_t>();
           else if (out->is_array() && out->size() == 1) o.output_shape = (*out)[0].get<std::int64_t>();
           else c.fail("'output_shape' is " + out->dump() + "; kerascpp takes one size (the last axis)");
         }
         if (c.find("seed")) o.seed = c.get<std::uint64_t>("seed", 0);
         return layers::MultiHeadAttention(c.required<std::int64_t>("num_heads"), c.required<std::int64_t>("key_dim"),
                                           o);
       }},
      {"LSTM", [](const Config& c) { return recurrent("LSTM", c); }},
      {"GRU", [](const Config& c) { return recurrent("GRU", c); }},
      {"MaxPooling2D",
       [](const Config& c) {
         c.expect_channels_last();
         const Size2D pool = c.size2d("pool_size", 2);
         return layers::MaxPooling2D(
             pool,
             {.strides = c.find("strides") ? c.size2d("strides", 1) : pool, .padding = c.padding(), .name = c.name()});
       }},
      {"AveragePooling2D",
       [](const Config& c) {
         c.expect_channels_last();
         const Size2D pool = c.size2d("pool_size", 2);
         return layers::AveragePooling2D(
             pool,
             {.strides = c.find("strides") ? c.size2d("strides", 1) : pool, .padding = c.padding(), .name = c.name()});
       }},
      {"GlobalAveragePooling2D",
       [](const Config& c) {
         c.expect_channels_last();
         c.expect("keepdims", false, "the pooled axes are dropped");
         return layers::GlobalAveragePooling2D({.name = c.name()});
       }},
      {"GlobalMaxPooling2D",
       [](const Config& c) {
         c.expect_channels_last();
         c.expect("keepdims", false, "the pooled axes are dropped");
         return layers::GlobalMaxPooling2D({.name = c.name()});
       }},
      {"Flatten",
       [](const Config& c) {
         c.expect_channels_last();
         return layers::Flatten({.name = c.name()});
       }},
      {"Reshape",
       [](const Config& c) {
         return layers::Reshape(c.required<std::vector<std::int64_t>>("target_shape"), {.name = c.name()});
       }},
      {"Dropout",
       [](const Config& c) {
         c.expect("noise_shape", nullptr, "one mask element per input element");
         layers::DropoutOptions o{.name = c.name()};
         if (c.find("seed")) o.seed = c.get<std::uint64_t>("seed", 0);
         return layers::Dropout(c.required<float>("rate"), o);
       }},
      {"BatchNormalization",
       [](const Config& c) {
         c.expect_last_axis(4);
         c.expect("center", true, "BatchNormalization always learns beta");
         c.expect("scale", true, "BatchNormalization always learns gamma");
         return layers::BatchNormalization({.momentum = c.get("momentum", 0.99f),
                                            .epsilon = c.get("epsilon", 1e-3f),
                                            .synchronized = c.get("synchronized", false),
                                            .name = c.name()});
       }},
      {"LayerNormalization",
       [](const Config& c) {
         c.expect_last_axis(0);
         c.expect("rms_scaling", false, "mean and variance normalization");
         return layers::LayerNormalization({.epsilon = c.get("epsilon", 1e-3f),
                                            .center = c.get("center", true),
                                            .scale = c.get("scale", true),
                                            .name = c.name()});
       }},
      {"Activation",
       [](const Config& c) { return layers::Activation(c.str("activation", "linear"), {.name = c.name()}); }},
      {"Softmax", [](const Config& c) { return layers::Softmax({.axis = c.get("axis", -1), .name = c.name()}); }},
      {"Add", [](const Config& c) { return merge("Add", c); }},
      {"Subtract", [](const Config& c) { return merge("Subtract", c); }},
      {"Multiply", [](const Config& c) { return merge("Multiply", c); }},
      {"Average", [](const Config& c) { return merge("Average", c); }},
      {"Concatenate", [](const Config& c) { return layers::Concatenate(c.get("axis", -1), {.name = c.name()}); }},
      {"ZeroPadding2D",
       [](const Config& c) {
         c.expect_channels_last();
         const Json* p = c.find("padding");
         layers::Padding2D pad;
         if (p && p->is_number_integer()) pad = layers::Padding2D(p->get<std::int64_t>());
         else if (p && p->is_array() && p->size() == 2 && (*p)[0].is_array())
           pad = layers::Padding2D((*p)[0][0].get<std::int64_t>(), (*p)[0][1].get<std::int64_t>(),
                                   (*p)[1][0].get<std::int64_t>(), (*p)[1][1].get<std::int64_t>());
         else if (p && p->is_array() && p->size() == 2)
           pad = layers::Padding2D((*p)[0].get<std::int64_t>(), (*p)[1].get<std::int64_t>());
         else if (p) c.fail("'padding' is " + p->dump() + ", not an integer, a pair or a pair of pairs");
         return layers::ZeroPadding2D(pad, {.name = c.name()});
       }},
      {"Embedding",
       [](const Config& c) {
         return layers::Embedding(c.required<std::int64_t>("input_dim"), c.required<std::int64_t>("output_dim"),
                                  {.mask_zero = c.get("mask_zero", false),
                                   .embeddings_regularizer = c.regularizer("embeddings_regularizer"),
                                   .embeddings_constraint = c.constraint("embeddings_constraint"),
                                   .name = c.name()});
       }},
  };
  return table;
}

// register_layer_class's factories, process-wide.
struct CustomClasses {
  std::mutex mu;
  std::map<std::string, LayerFactory> factories;
};

CustomClasses& custom_classes() {
  static auto* classes = new CustomClasses;  // lives as long as the process
  return *classes;
}

}  // namespace

bool is_input_layer_class(const std::string& class_name) { return class_name == "InputLayer"; }

bool rebuilds_layer_class(const std::string& class_name) { return factories().count(class_name) > 0; }

LayerRef layer_from_config(const std::string& class_name, const nlohmann::json& config) {
  const Config c(class_name, config);
  LayerRef layer;
  if (auto it = factories().find(class_name); it != factories().end()) {
    layer = it->second(c);
  } else {
    LayerFactory custom;
    {
      CustomClasses& classes = custom_classes();
      std::lock_guard lock(classes.mu);
      if (auto found = classes.factories.find(class_name); found != classes.factories.end()) custom = found->second;
    }
    if (!custom) {
      std::string known;
      for (const auto& [name, f] : factories()) known += (known.empty() ? "" : ", ") + name;
      c.fail(
          fmt::format("kerascpp cannot rebuild a '{}' from a config (it can: InputLayer, {}); for a layer class of "
                      "your own, call kerascpp::register_layer_class(\"{}\", factory) first",
                      class_name, known, class_name));
    }
    try {
      layer = custom(config.dump());
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

}  // namespace kerascpp::detail

namespace kerascpp {

void register_layer_class(const std::string& class_name, LayerFactory factory) {
  if (class_name.empty() || detail::is_input_layer_class(class_name) || detail::factories().count(class_name))
    throw ValueError(
        fmt::format("register_layer_class: '{}' is {}; register a class of your own under its own "
                    "class_name()",
                    class_name, class_name.empty() ? "empty" : "a class kerascpp rebuilds itself"));
  if (!factory) throw ValueError(fmt::format("register_layer_class: the factory for '{}' is empty", class_name));
  detail::CustomClasses& classes = detail::custom_classes();
  std::lock_guard lock(classes.mu);
  classes.factories[class_name] = std::move(factory);
}

}  // namespace kerascpp
