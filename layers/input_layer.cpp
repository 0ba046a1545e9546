#include "kerascpp/layers/input_layer.hpp"

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

InputLayerImpl::InputLayerImpl(Shape shape, InputLayerOptions options)
    : Layer(std::move(options.name)), shape_(std::move(shape)), dtype_(options.dtype) {
  for (auto d : shape_)
    KERASCPP_CHECK_VALUE(d > 0,
                         "Input: every dimension of the per-example shape must be positive, got {}; the batch "
                         "axis is implicit and must not be given",
                         shape_str(shape_));
  set_input_specs({});  // a source: it is never called on inputs
}

KerasTensor InputLayerImpl::output() {
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

Json InputLayerImpl::get_config() const {
  detail::Json batch_shape = detail::Json::array({nullptr});  // the batch axis: unknown
  for (std::int64_t d : shape_) batch_shape.push_back(d);
  return detail::Json({{"batch_shape", batch_shape}, {"dtype", dtype_name(dtype_)}, {"name", name()}});
}

LayerRef InputLayer(Shape shape, InputLayerOptions options) {
  return std::make_shared<InputLayerImpl>(std::move(shape), std::move(options));
}

}  // namespace kerascpp::layers

namespace kerascpp {

KerasTensor Input(Shape shape, DType dtype, std::string name) {
  return std::make_shared<layers::InputLayerImpl>(std::move(shape), layers::InputLayerOptions{dtype, std::move(name)})
      ->output();
}

}  // namespace kerascpp
