// Validation and Keras serialization of regularizers and constraints.
#include "kerascpp/core/regularizers.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "check.hpp"
#include "kerascpp/core/constraints.hpp"

namespace kerascpp {
namespace {

using Json = nlohmann::ordered_json;

// Keras writes floats as Python floats: the shortest decimal of the float32 value, so 1e-4
// appears as 0.0001 and not as 9.999999747378752e-05.
double python_float(float v) { return std::stod(fmt::format("{}", v)); }

std::string keras_object(const char* module, const std::string& class_name, Json config) {
  Json j = {
      {"module", module}, {"class_name", class_name}, {"config", std::move(config)}, {"registered_name", nullptr}};
  return j.dump();
}

}  // namespace

namespace regularizers {

Regularizer::Regularizer(const char* name) : Regularizer(std::string(name)) {}

Regularizer::Regularizer(const std::string& name) {
  if (name.empty()) return;
  if (name == "l1") *this = L1();
  else if (name == "l2") *this = L2();
  else if (name == "l1_l2") *this = L1L2(0.01f, 0.01f);
  else
    throw ValueError(
        fmt::format("unknown regularizer '{}'; use \"l1\", \"l2\", \"l1_l2\" or regularizers::L1(f), "
                    "L2(f), L1L2(f1, f2)",
                    name));
}

Regularizer::Regularizer(std::string class_name, float l1, float l2)
    : class_name_(std::move(class_name)), l1_(l1), l2_(l2) {
  for (auto [v, what] : {std::pair{l1, "l1"}, std::pair{l2, "l2"}})
    KERASCPP_CHECK_VALUE(std::isfinite(v) && v >= 0.f, "{} regularizer: {} must be a finite number >= 0, got {}",
                         class_name_, what, v);
}

std::string Regularizer::config_json() const {
  Json config = Json::object();
  if (class_name_ != "L2") config["l1"] = python_float(l1_);
  if (class_name_ != "L1") config["l2"] = python_float(l2_);
  return keras_object("keras.regularizers", class_name_, std::move(config));
}

}  // namespace regularizers

namespace constraints {

Constraint Constraint::max_norm(float max_value, std::vector<int> axis) {
  KERASCPP_CHECK_VALUE(std::isfinite(max_value) && max_value > 0.f,
                       "MaxNorm: max_value must be a finite number > 0, got {}", max_value);
  KERASCPP_CHECK_VALUE(!axis.empty(), "MaxNorm: axis must name at least one axis, e.g. {{0}}");
  for (std::size_t i = 0; i < axis.size(); ++i)
    KERASCPP_CHECK_VALUE(
        axis[i] == static_cast<int>(i),
        "MaxNorm: axis must be the leading axes in order (0, 1, ...), got axis[{}] = {}; kerascpp takes "
        "the norms over leading axes only (Keras' default axis=0, or [0, 1, 2] for a Conv2D kernel)",
        i, axis[i]);
  Constraint c;
  c.class_name_ = "MaxNorm";
  c.max_value_ = max_value;
  c.axis_ = std::move(axis);
  return c;
}

std::string Constraint::config_json() const {
  Json axis = axis_.size() == 1 ? Json(axis_[0]) : Json(axis_);
  return keras_object("keras.constraints", class_name_, {{"max_value", python_float(max_value_)}, {"axis", axis}});
}

}  // namespace constraints
}  // namespace kerascpp
