#include "kerascpp/losses.hpp"

#include <fmt/format.h>

#include <cmath>

#include "check.hpp"

namespace kerascpp::losses {

LossRef::LossRef(const char* name) : LossRef(std::string(name)) {}

LossRef::LossRef(const std::string& name) {
  if (name == "sparse_categorical_crossentropy") loss_ = std::make_shared<SparseCategoricalCrossentropy>();
  else if (name == "categorical_crossentropy") loss_ = std::make_shared<CategoricalCrossentropy>();
  else if (name == "binary_crossentropy") loss_ = std::make_shared<BinaryCrossentropy>();
  else if (name == "mean_squared_error" || name == "mse") loss_ = std::make_shared<MeanSquaredError>();
  else if (name == "huber") loss_ = std::make_shared<Huber>();
  else
    throw ValueError(
        fmt::format("unknown loss '{}'; use sparse_categorical_crossentropy, categorical_crossentropy, "
                    "binary_crossentropy, mean_squared_error or huber",
                    name));
}

Huber::Huber(double delta) : delta_(delta) {
  KERASCPP_CHECK(std::isfinite(delta) && delta > 0, ValueError,
                 "Huber: delta must be a finite number > 0 (where the loss turns from quadratic to linear; Keras' "
                 "default 1.0), got {}",
                 delta);
}

}  // namespace kerascpp::losses
