#include "kerascpp/losses.hpp"

#include <fmt/format.h>

namespace kerascpp::losses {

LossRef::LossRef(const char* name) : LossRef(std::string(name)) {}

LossRef::LossRef(const std::string& name) {
  if (name == "sparse_categorical_crossentropy") loss_ = std::make_shared<SparseCategoricalCrossentropy>();
  else if (name == "categorical_crossentropy") loss_ = std::make_shared<CategoricalCrossentropy>();
  else if (name == "binary_crossentropy") loss_ = std::make_shared<BinaryCrossentropy>();
  else if (name == "mean_squared_error" || name == "mse") loss_ = std::make_shared<MeanSquaredError>();
  else
    throw ValueError(
        fmt::format("unknown loss '{}'; use sparse_categorical_crossentropy, categorical_crossentropy, "
                    "binary_crossentropy or mean_squared_error",
                    name));
}

}  // namespace kerascpp::losses
