#include "kerascpp/layers/input_layer.hpp"

#include <fmt/format.h>

namespace kerascpp {

InputLayer::InputLayer(Shape shape, DType dtype, std::string name)
    : Layer(std::move(name)), shape_(std::move(shape)), dtype_(dtype) {
  for (auto d : shape_)
    if (d <= 0)
      throw ValueError(fmt::format("Input: every dimension of the per-example shape must be positive, got {}; the batch "
                              "axis is implicit and must not be given",
                              shape_str(shape_)));
}

KerasTensor InputLayer::output() {
  std::shared_ptr<Node> node = output_node_.lock();
  if (!node) {
    node = std::make_shared<Node>();
    node->layer = shared_from_this();
    node->output_shapes = {shape_};
    node->output_dtype = dtype_;
    output_node_ = node;
  }
  return KerasTensor(node, 0);
}

std::string InputLayer::config_json() const {
  Shape batch_shape = shape_;
  batch_shape.insert(batch_shape.begin(), -1);
  std::string dims;
  for (std::size_t i = 0; i < batch_shape.size(); ++i)
    dims += (i ? ", " : "") + (batch_shape[i] < 0 ? std::string("null") : std::to_string(batch_shape[i]));
  return fmt::format(R"({{"batch_shape": [{}], "dtype": "{}", "name": "{}"}})", dims, dtype_name(dtype_), name());
}

KerasTensor Input(Shape shape, DType dtype, std::string name) {
  return std::make_shared<InputLayer>(std::move(shape), dtype, std::move(name))->output();
}

namespace layers {
LayerRef InputLayer(Shape shape, DType dtype, std::string name) {
  return std::make_shared<kerascpp::InputLayer>(std::move(shape), dtype, std::move(name));
}
}  // namespace layers

}  // namespace kerascpp
