// Keras' compile_config in a `.keras` archive's config.json: the optimizer (class and
// hyperparameters), the loss and the metrics a model was compiled with, written by Model::save and
// read by load_model, which compiles the rebuilt model with them (so the archive's optimizer state
// loads too, and training goes on where it stopped).
#include "training/compile_config.hpp"

#include <fmt/format.h>

#include "check.hpp"
#include "kerascpp/core/session.hpp"
#include "kerascpp/error.hpp"
#include "kerascpp/training/loss_scale_optimizer.hpp"
#include "training/model_impl.hpp"

namespace kerascpp {

namespace {

using Json = nlohmann::ordered_json;

Json loss_object(const char* class_name, const char* name, Json extra) {
  Json config = {{"name", name}, {"reduction", "sum_over_batch_size"}};
  config.update(extra);
  return Json{{"module", "keras.losses"}, {"class_name", class_name}, {"config", config}, {"registered_name", nullptr}};
}

}  // namespace

namespace losses {

std::string SparseCategoricalCrossentropy::config_json() const {
  return loss_object("SparseCategoricalCrossentropy", "sparse_categorical_crossentropy",
                     {{"from_logits", options_.from_logits}, {"ignore_class", nullptr}})
      .dump();
}
std::string CategoricalCrossentropy::config_json() const {
  return loss_object(
             "CategoricalCrossentropy", "categorical_crossentropy",
             {{"from_logits", options_.from_logits}, {"label_smoothing", options_.label_smoothing}, {"axis", -1}})
      .dump();
}
std::string BinaryCrossentropy::config_json() const {
  return loss_object(
             "BinaryCrossentropy", "binary_crossentropy",
             {{"from_logits", options_.from_logits}, {"label_smoothing", options_.label_smoothing}, {"axis", -1}})
      .dump();
}
std::string MeanSquaredError::config_json() const {
  return loss_object("MeanSquaredError", "mean_squared_error", Json::object()).dump();
}
std::string Huber::config_json() const { return loss_object("Huber", "huber", {{"delta", delta_}}).dump(); }
std::string MeanAbsoluteError::config_json() const {
  return loss_object("MeanAbsoluteError", "mean_absolute_error", Json::object()).dump();
}
std::string MeanAbsolutePercentageError::config_json() const {
  return loss_object("MeanAbsolutePercentageError", "mean_absolute_percentage_error", Json::object()).dump();
}
std::string MeanSquaredLogarithmicError::config_json() const {
  return loss_object("MeanSquaredLogarithmicError", "mean_squared_logarithmic_error", Json::object()).dump();
}
std::string CosineSimilarity::config_json() const {
  return loss_object("CosineSimilarity", "cosine_similarity", Json::object()).dump();
}
std::string LogCosh::config_json() const { return loss_object("LogCosh", "log_cosh", Json::object()).dump(); }
std::string Poisson::config_json() const { return loss_object("Poisson", "poisson", Json::object()).dump(); }
std::string KLDivergence::config_json() const {
  return loss_object("KLDivergence", "kl_divergence", Json::object()).dump();
}
std::string Hinge::config_json() const { return loss_object("Hinge", "hinge", Json::object()).dump(); }
std::string SquaredHinge::config_json() const {
  return loss_object("SquaredHinge", "squared_hinge", Json::object()).dump();
}
std::string CategoricalHinge::config_json() const {
  return loss_object("CategoricalHinge", "categorical_hinge", Json::object()).dump();
}
std::string BinaryFocalCrossentropy::config_json() const {
  return loss_object("BinaryFocalCrossentropy", "binary_focal_crossentropy",
                     {{"from_logits", options_.from_logits},
                      {"label_smoothing", options_.label_smoothing},
                      {"axis", -1},
                      {"apply_class_balancing", options_.apply_class_balancing},
                      {"alpha", options_.alpha},
                      {"gamma", options_.gamma}})
      .dump();
}
std::string CategoricalFocalCrossentropy::config_json() const {
  return loss_object("CategoricalFocalCrossentropy", "categorical_focal_crossentropy",
                     {{"from_logits", options_.from_logits},
                      {"label_smoothing", options_.label_smoothing},
                      {"axis", -1},
                      {"alpha", options_.alpha},
                      {"gamma", options_.gamma}})
      .dump();
}
std::string CategoricalGeneralizedCrossEntropy::config_json() const {
  return loss_object("CategoricalGeneralizedCrossEntropy", "categorical_generalized_cross_entropy",
                     {{"q", static_cast<double>(params_.q)}})
      .dump();
}
std::string Tversky::config_json() const {
  return loss_object("Tversky", "tversky", {{"alpha", alpha_}, {"beta", beta_}, {"axis", nullptr}}).dump();
}
std::string Dice::config_json() const { return loss_object("Dice", "dice", {{"axis", nullptr}}).dump(); }
std::string CTC::config_json() const { return loss_object("CTC", "ctc", Json::object()).dump(); }
std::string Circle::config_json() const {
  return loss_object("Circle", "circle",
                     {{"gamma", gamma_}, {"margin", margin_}, {"remove_diagonal", remove_diagonal_}})
      .dump();
}

}  // namespace losses

namespace optimizers {

std::string SGD::config_json() const { return Json{{"momentum", o_.momentum}, {"nesterov", o_.nesterov}}.dump(); }
std::string Adam::config_json() const {
  return Json{{"beta_1", o_.beta_1}, {"beta_2", o_.beta_2}, {"epsilon", o_.epsilon}, {"amsgrad", false}}.dump();
}
std::string AdamW::config_json() const {
  return Json{{"weight_decay", o_.weight_decay},
              {"beta_1", o_.beta_1},
              {"beta_2", o_.beta_2},
              {"epsilon", o_.epsilon},
              {"amsgrad", false}}
      .dump();
}
std::string RMSprop::config_json() const {
  return Json{{"rho", o_.rho}, {"momentum", 0.0}, {"epsilon", o_.epsilon}, {"centered", false}}.dump();
}
std::string Adagrad::config_json() const {
  return Json{{"initial_accumulator_value", o_.initial_accumulator_value}, {"epsilon", o_.epsilon}}.dump();
}
std::string Nadam::config_json() const {
  return Json{{"beta_1", o_.beta_1}, {"beta_2", o_.beta_2}, {"epsilon", o_.epsilon}}.dump();
}
std::string Adamax::config_json() const {
  return Json{{"beta_1", o_.beta_1}, {"beta_2", o_.beta_2}, {"epsilon", o_.epsilon}}.dump();
}
std::string Adadelta::config_json() const { return Json{{"rho", o_.rho}, {"epsilon", o_.epsilon}}.dump(); }
std::string Ftrl::config_json() const {
  return Json{{"learning_rate_power", o_.learning_rate_power},
              {"initial_accumulator_value", o_.initial_accumulator_value},
              {"l1_regularization_strength", o_.l1_regularization_strength},
              {"l2_regularization_strength", o_.l2_regularization_strength},
              {"l2_shrinkage_regularization_strength", o_.l2_shrinkage_regularization_strength},
              {"beta", o_.beta}}
      .dump();
}
std::string Lion::config_json() const { return Json{{"beta_1", o_.beta_1}, {"beta_2", o_.beta_2}}.dump(); }
std::string ScheduleFreeAdamW::config_json() const {
  return Json{{"beta_1", o_.beta_1}, {"beta_2", o_.beta_2}, {"epsilon", o_.epsilon}, {"warmup_steps", o_.warmup_steps}}
      .dump();
}
std::string Lamb::config_json() const {
  return Json{{"beta_1", o_.beta_1}, {"beta_2", o_.beta_2}, {"epsilon", o_.epsilon}}.dump();
}

}  // namespace optimizers

namespace detail {

namespace {

// Keras' serialization of `opt` ({"module": "keras.optimizers", "class_name": ..., "config": ...}),
// or nullopt where Keras could not rebuild it (an optimizer of the user's own, a schedule, a
// fixed loss scale, which Keras 3 does not have).
std::optional<Json> optimizer_object(const optimizers::Optimizer& opt) {
  Json config;
  if (const auto* lso = dynamic_cast<const optimizers::LossScaleOptimizer*>(&opt)) {
    const auto inner = optimizer_object(lso->inner_optimizer());
    if (!inner || !lso->options().dynamic) return std::nullopt;
    config = {{"name", "loss_scale_optimizer"},
              {"inner_optimizer", *inner},
              {"initial_scale", lso->options().initial_scale},
              {"dynamic_growth_steps", lso->options().dynamic_growth_steps}};
  } else {
    const std::string own = opt.config_json();
    if (own.empty() || opt.has_schedule()) return std::nullopt;
    const optimizers::GradientClipping& clip = opt.gradient_clipping();
    const optimizers::OptimizerOptions& o = opt.common_options();
    auto optional = [](const auto& v) { return v ? Json(*v) : Json(); };
    // Keras' base get_config keys, in its order, then the optimizer's own (AdamW's weight_decay
    // replaces the base one).
    config = {{"name", to_snake_case(opt.class_name())},
              {"learning_rate", static_cast<double>(static_cast<float>(opt.learning_rate()))},
              {"weight_decay", optional(o.weight_decay)},
              {"clipnorm", optional(clip.clipnorm)},
              {"global_clipnorm", optional(clip.global_clipnorm)},
              {"clipvalue", optional(clip.clipvalue)},
              {"use_ema", o.use_ema},
              {"ema_momentum", o.ema_momentum},
              {"ema_overwrite_frequency", optional(o.ema_overwrite_frequency)},
              {"loss_scale_factor", optional(o.loss_scale_factor)},
              {"gradient_accumulation_steps", optional(o.gradient_accumulation_steps)}};
    config.update(Json::parse(own));
  }
  return Json{{"module", "keras.optimizers"},
              {"class_name", opt.class_name()},
              {"config", config},
              {"registered_name", nullptr}};
}

}  // namespace

std::optional<nlohmann::ordered_json> compile_config(const CompiledState& c) {
  const auto optimizer = optimizer_object(c.optimizer());
  const std::string loss = c.loss().config_json();
  if (!optimizer || loss.empty()) return std::nullopt;  // nothing Keras could rebuild
  Json metrics = Json::array(), weighted = Json::array();
  for (const std::string& name : c.metric_names(false)) metrics.push_back(name);
  for (const std::string& name : c.metric_names(true)) weighted.push_back(name);
  return Json{{"optimizer", *optimizer},
              {"loss", Json::parse(loss)},
              {"loss_weights", nullptr},
              {"metrics", metrics.empty() ? Json() : metrics},
              {"weighted_metrics", weighted.empty() ? Json() : weighted},
              {"run_eagerly", false},
              {"steps_per_execution", 1},
              {"jit_compile", false}};
}

namespace {

// Builds the optimizer `j` describes (one kerascpp has) and hands it, as its own type, to `use`:
// a LossScaleOptimizer must be made around the concrete inner optimizer.
template <class Use>
optimizers::OptimizerRef with_optimizer(const Json& j, Use&& use) {
  const std::string cls = j.value("class_name", "");
  const Json c = j.value("config", Json::object());
  KERASCPP_CHECK_VALUE(c.contains("learning_rate") && c["learning_rate"].is_number(),
                       "the {} optimizer's learning_rate is {}; kerascpp rebuilds constant rates only", cls,
                       c.value("learning_rate", Json()).dump());
  const double lr = c["learning_rate"].get<double>();
  auto num = [&](const char* key, double fallback) {
    return c.contains(key) && c[key].is_number() ? c[key].get<double>() : fallback;
  };
  KERASCPP_CHECK_VALUE(!c.value("amsgrad", false) && !c.value("centered", false),
                       "the {} optimizer uses AMSGrad or centering, which kerascpp does not have", cls);
  auto optional_num = [&](const char* key) {
    return c.contains(key) && c[key].is_number() ? std::optional<double>(c[key].get<double>()) : std::nullopt;
  };
  auto optional_int = [&](const char* key) {
    return c.contains(key) && c[key].is_number_integer() ? std::optional<std::int64_t>(c[key].get<std::int64_t>())
                                                         : std::nullopt;
  };
  optimizers::GradientClipping clip{.clipnorm = optional_num("clipnorm"),
                                    .global_clipnorm = optional_num("global_clipnorm"),
                                    .clipvalue = optional_num("clipvalue")};
  optimizers::OptimizerOptions options{.weight_decay = cls == "AdamW" ? std::nullopt : optional_num("weight_decay"),
                                       .use_ema = c.value("use_ema", false),
                                       .ema_momentum = num("ema_momentum", 0.99),
                                       .ema_overwrite_frequency = optional_int("ema_overwrite_frequency"),
                                       .loss_scale_factor = optional_num("loss_scale_factor"),
                                       .gradient_accumulation_steps = optional_int("gradient_accumulation_steps")};
  auto finish = [&](auto opt) {
    if (clip.clipnorm || clip.global_clipnorm || clip.clipvalue) opt.set_gradient_clipping(clip);
    opt.set_common_options(options);
    return use(std::move(opt));
  };
  if (cls == "SGD")
    return finish(optimizers::SGD(lr, {.momentum = num("momentum", 0), .nesterov = c.value("nesterov", false)}));
  if (cls == "Adam")
    return finish(optimizers::Adam(
        lr, {.beta_1 = num("beta_1", 0.9), .beta_2 = num("beta_2", 0.999), .epsilon = num("epsilon", 1e-7)}));
  if (cls == "AdamW")
    return finish(optimizers::AdamW(lr, {.weight_decay = num("weight_decay", 0.004),
                                         .beta_1 = num("beta_1", 0.9),
                                         .beta_2 = num("beta_2", 0.999),
                                         .epsilon = num("epsilon", 1e-7)}));
  if (cls == "RMSprop") {
    KERASCPP_CHECK_VALUE(num("momentum", 0) == 0,
                         "the RMSprop optimizer uses momentum, which kerascpp's does not have");
    return finish(optimizers::RMSprop(lr, {.rho = num("rho", 0.9), .epsilon = num("epsilon", 1e-7)}));
  }
  if (cls == "Adagrad")
    return finish(optimizers::Adagrad(
        lr, {.initial_accumulator_value = num("initial_accumulator_value", 0.1), .epsilon = num("epsilon", 1e-7)}));
  if (cls == "Nadam")
    return finish(optimizers::Nadam(
        lr, {.beta_1 = num("beta_1", 0.9), .beta_2 = num("beta_2", 0.999), .epsilon = num("epsilon", 1e-7)}));
  if (cls == "Adamax")
    return finish(optimizers::Adamax(
        lr, {.beta_1 = num("beta_1", 0.9), .beta_2 = num("beta_2", 0.999), .epsilon = num("epsilon", 1e-7)}));
  if (cls == "Adadelta")
    return finish(optimizers::Adadelta(lr, {.rho = num("rho", 0.95), .epsilon = num("epsilon", 1e-7)}));
  if (cls == "Ftrl")
    return finish(
        optimizers::Ftrl(lr, {.learning_rate_power = num("learning_rate_power", -0.5),
                              .initial_accumulator_value = num("initial_accumulator_value", 0.1),
                              .l1_regularization_strength = num("l1_regularization_strength", 0),
                              .l2_regularization_strength = num("l2_regularization_strength", 0),
                              .l2_shrinkage_regularization_strength = num("l2_shrinkage_regularization_strength", 0),
                              .beta = num("beta", 0)}));
  if (cls == "Lion") return finish(optimizers::Lion(lr, {.beta_1 = num("beta_1", 0.9), .beta_2 = num("beta_2", 0.99)}));
  if (cls == "Lamb")
    return finish(optimizers::Lamb(
        lr, {.beta_1 = num("beta_1", 0.9), .beta_2 = num("beta_2", 0.999), .epsilon = num("epsilon", 1e-7)}));
  if (cls == "ScheduleFreeAdamW")
    return finish(optimizers::ScheduleFreeAdamW(lr, {.beta_1 = num("beta_1", 0.9),
                                                     .beta_2 = num("beta_2", 0.999),
                                                     .epsilon = num("epsilon", 1e-8),
                                                     .warmup_steps = c.value("warmup_steps", std::int64_t{0})}));
  throw ValueError(
      fmt::format("optimizer '{}' is not one kerascpp has (SGD, Adam, AdamW, RMSprop, Adagrad, Nadam, Adamax, "
                  "Adadelta, Ftrl, Lion, Lamb, ScheduleFreeAdamW, LossScaleOptimizer)",
                  cls));
}

optimizers::OptimizerRef optimizer_from(const Json& j) {
  if (j.value("class_name", "") != "LossScaleOptimizer")
    return with_optimizer(j, [](auto opt) { return optimizers::OptimizerRef(std::move(opt)); });
  // Keras 3's LossScaleOptimizer config: the inner optimizer, initial_scale, dynamic_growth_steps.
  const Json c = j.value("config", Json::object());
  KERASCPP_CHECK_VALUE(c.contains("inner_optimizer") && c["inner_optimizer"].is_object(),
                       "the LossScaleOptimizer config has no inner_optimizer");
  const optimizers::LossScaleOptions options{
      .dynamic = true,
      .initial_scale = c.value("initial_scale", 32768.0),
      .dynamic_growth_steps = c.value("dynamic_growth_steps", std::int64_t{2000})};
  return with_optimizer(c["inner_optimizer"], [&](auto inner) {
    return optimizers::OptimizerRef(optimizers::LossScaleOptimizer(std::move(inner), options));
  });
}

losses::LossRef row_loss_from(const std::string& cls, const Json& c, const Json& j);

losses::LossRef loss_from(const Json& j) {
  if (j.is_string()) return losses::LossRef(j.get<std::string>());
  const std::string cls = j.value("class_name", "");
  const Json c = j.value("config", Json::object());
  const losses::CrossentropyOptions x{.from_logits = c.value("from_logits", false),
                                      .label_smoothing = c.value("label_smoothing", 0.0)};
  KERASCPP_CHECK_VALUE(!c.contains("ignore_class") || c["ignore_class"].is_null(),
                       "the loss sets ignore_class, which kerascpp does not have");
  // Keras writes the reduction of every loss object; training with another one than kerascpp's would
  // be silently wrong (a sum is batch-size times the mean), so such a loss is refused.
  KERASCPP_CHECK_VALUE(!c.contains("reduction") || c["reduction"] == "sum_over_batch_size",
                       "the {} loss sets reduction {}; kerascpp's losses reduce by \"sum_over_batch_size\" only", cls,
                       c.contains("reduction") ? c["reduction"].dump() : std::string());
  if (cls == "SparseCategoricalCrossentropy") return losses::SparseCategoricalCrossentropy(x);
  if (cls == "CategoricalCrossentropy") return losses::CategoricalCrossentropy(x);
  if (cls == "BinaryCrossentropy") return losses::BinaryCrossentropy(x);
  if (cls == "MeanSquaredError") return losses::MeanSquaredError();
  if (cls == "Huber") return losses::Huber(c.value("delta", 1.0));
  return row_loss_from(cls, c, j);
}

// The losses of kerascpp/training/losses.hpp's row formulas and the overlap losses, from Keras' config.
losses::LossRef row_loss_from(const std::string& cls, const Json& c, const Json& j) {
  auto num = [&](const char* key, double fallback) {
    return c.contains(key) && c[key].is_number() ? c[key].get<double>() : fallback;
  };
  const bool last_axis = !c.contains("axis") || c["axis"] == Json(-1);
  KERASCPP_CHECK_VALUE((cls != "Tversky" && cls != "Dice") || !c.contains("axis") || c["axis"].is_null(),
                       "the {} loss sets axis {}; kerascpp has axis=None only", cls, c["axis"].dump());
  KERASCPP_CHECK_VALUE(last_axis || cls == "Tversky" || cls == "Dice",
                       "the {} loss sets axis {}; kerascpp has axis=-1 only", cls, c["axis"].dump());
  const losses::FocalOptions focal{.apply_class_balancing = c.value("apply_class_balancing", false),
                                   .alpha = num("alpha", 0.25),
                                   .gamma = num("gamma", 2.0),
                                   .from_logits = c.value("from_logits", false),
                                   .label_smoothing = num("label_smoothing", 0.0)};
  if (cls == "MeanAbsoluteError") return losses::MeanAbsoluteError();
  if (cls == "MeanAbsolutePercentageError") return losses::MeanAbsolutePercentageError();
  if (cls == "MeanSquaredLogarithmicError") return losses::MeanSquaredLogarithmicError();
  if (cls == "CosineSimilarity") return losses::CosineSimilarity();
  if (cls == "LogCosh") return losses::LogCosh();
  if (cls == "Poisson") return losses::Poisson();
  if (cls == "KLDivergence") return losses::KLDivergence();
  if (cls == "Hinge") return losses::Hinge();
  if (cls == "SquaredHinge") return losses::SquaredHinge();
  if (cls == "CategoricalHinge") return losses::CategoricalHinge();
  if (cls == "BinaryFocalCrossentropy") return losses::BinaryFocalCrossentropy(focal);
  if (cls == "CategoricalFocalCrossentropy") return losses::CategoricalFocalCrossentropy(focal);
  if (cls == "CategoricalGeneralizedCrossEntropy") return losses::CategoricalGeneralizedCrossEntropy(num("q", 0.5));
  if (cls == "Tversky") return losses::Tversky(num("alpha", 0.5), num("beta", 0.5));
  if (cls == "Dice") return losses::Dice();
  if (cls == "CTC") return losses::CTC();
  if (cls == "Circle") return losses::Circle(num("gamma", 80.0), num("margin", 0.4), c.value("remove_diagonal", true));
  throw ValueError(fmt::format("loss {} is not one kerascpp can rebuild", j.dump().substr(0, 120)));
}

std::vector<metrics::MetricRef> metrics_from(const Json& j) {
  std::vector<metrics::MetricRef> out;
  if (j.is_null()) return out;
  for (const Json& m : j) {
    KERASCPP_CHECK_VALUE(m.is_string() || m.is_object(), "metric {} is neither a name nor a Keras metric object",
                         m.dump().substr(0, 120));
    if (m.is_string()) out.emplace_back(m.get<std::string>());
    else out.emplace_back(metric_from_object(m));
  }
  return out;
}

}  // namespace

void compile_from_config(Model& model, const nlohmann::ordered_json& config, const std::string& path) {
  try {
    model.compile({.optimizer = optimizer_from(config.at("optimizer")),
                   .loss = loss_from(config.at("loss")),
                   .metrics = metrics_from(config.value("metrics", Json())),
                   .weighted_metrics = metrics_from(config.value("weighted_metrics", Json()))});
  } catch (const std::exception& e) {
    // As Keras: a compile_config that cannot be rebuilt leaves the model uncompiled, with a warning.
    output() << fmt::format("kerascpp: load_model('{}'): the model is not compiled: {}; call compile() to train it\n",
                            path, e.what())
             << std::flush;
  }
}

}  // namespace detail
}  // namespace kerascpp

namespace kerascpp::optimizers {

std::string serialize(const Optimizer& optimizer) {
  const auto j = detail::optimizer_object(optimizer);
  return j ? j->dump() : std::string();
}

OptimizerRef deserialize(const std::string& json) {
  Json j;
  try {
    j = Json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(
        fmt::format("optimizers::deserialize: not JSON ({}); pass keras.optimizers.serialize's output", e.what()));
  }
  KERASCPP_CHECK_VALUE(j.is_object() && j.contains("class_name"),
                       "optimizers::deserialize: expected an object with class_name and config, got {}",
                       j.dump().substr(0, 80));
  return detail::optimizer_from(j);
}

}  // namespace kerascpp::optimizers
