// CategoryEncoding: the ids are read on the host, checked against [0, num_tokens) (TensorFlow's
// Keras raises on them; numpy's would silently drop them) and encoded by encode_categorical.
// No gradient flows to integer ids.
#include "kerascpp/layers/category_encoding.hpp"

#include "categorical_encoding.hpp"
#include "check.hpp"
#include "kerascpp/core/layer_config.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

CategoryEncodingLayer::CategoryEncodingLayer(std::int64_t num_tokens, std::string output_mode, std::string name)
    : Layer(std::move(name)), num_tokens_(num_tokens), output_mode_(std::move(output_mode)) {
  if (output_mode_ == "binary") output_mode_ = "multi_hot";  // Keras' older name
  KERASCPP_CHECK_VALUE(detail::is_encoding_mode(output_mode_),
                       "CategoryEncoding '{}': output_mode must be \"one_hot\", \"multi_hot\" or \"count\", got \"{}\"",
                       this->name(), output_mode_);
  KERASCPP_CHECK_VALUE(num_tokens_ >= 1, "CategoryEncoding '{}': num_tokens must be >= 1, got {}", this->name(),
                       num_tokens_);
  // multi_hot and count fold the last axis of (batch, k): Keras supports ranks up to 2.
  set_input_spec(
      {.min_ndim = output_mode_ == "one_hot" ? 1 : 2,
       .max_ndim = 2,
       .dtype = std::nullopt,
       .layout = output_mode_ == "one_hot" ? "(batch,) or (batch, k) integer ids" : "(batch, k) integer ids"});
}

std::vector<Shape> CategoryEncodingLayer::compute_output_shapes(const std::vector<Shape>& in) {
  return {detail::encoded_shape(in[0], output_mode_, num_tokens_)};
}

std::vector<Tensor> CategoryEncodingLayer::forward(ReplicaContext&, const std::vector<Tensor>& in, LayerState&) {
  const std::vector<std::int64_t> ids = detail::host_int64(in[0]);
  for (std::int64_t id : ids)
    KERASCPP_CHECK_VALUE(id >= 0 && id < num_tokens_,
                         "CategoryEncoding '{}': input id {} is outside [0, num_tokens={}); raise num_tokens or map "
                         "the ids first (IntegerLookup)",
                         name(), id, num_tokens_);
  return {detail::encode_categorical(ids, in[0].shape(), output_mode_, num_tokens_, in[0].device())};
}

std::vector<Tensor> CategoryEncodingLayer::backward(ReplicaContext&, const std::vector<Tensor>& in,
                                                    const std::vector<Tensor>&, const std::vector<Tensor>&,
                                                    LayerState& st) {
  // Ids have no gradient; a float input (ids held as floats) gets zeros.
  if (!st.need_input_grads || in[0].dtype() != DType::float32) return {Tensor()};
  return {Tensor::zeros(in[0].shape(), DType::float32, in[0].device())};
}

Json CategoryEncodingLayer::get_config() const {
  // Keras 3.15's CategoryEncoding config has no "sparse" key.
  return detail::Json({{"name", name()}, {"num_tokens", num_tokens_}, {"output_mode", output_mode_}});
}

LayerRef CategoryEncoding(std::int64_t num_tokens, std::string output_mode, std::string name) {
  return std::make_shared<CategoryEncodingLayer>(num_tokens, std::move(output_mode), std::move(name));
}

KERASCPP_REGISTER_LAYER("CategoryEncoding", [](const LayerConfig& c) {
  c.expect("sparse", false, "a dense encoding");
  const Json* n = c.find("num_tokens");
  if (!n || !n->is_number_integer()) c.fail("'num_tokens' must be set to an integer (Keras requires it)");
  return layers::CategoryEncoding(n->get<std::int64_t>(), c.str("output_mode", "multi_hot"), c.name());
});

}  // namespace kerascpp::layers
