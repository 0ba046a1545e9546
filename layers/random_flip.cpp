// RandomFlip: in training each image is flipped on its own draw; the batch is put back together
// from its rows with the Backend's split and concat (a flip is a reversed concatenation of an
// axis' slices), so the result is the input's exact values, moved. Identity in inference.
#include "kerascpp/layers/random_flip.hpp"

#include <algorithm>

#include "check.hpp"
#include "kerascpp/core/layer_config.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {
namespace {

// x with its slices along `axis` in reverse order.
Tensor reverse_axis(Backend& be, const Tensor& x, int axis) {
  const std::int64_t n = x.dim(axis);
  if (n <= 1) return x;
  Shape slice_shape = x.shape();
  slice_shape[static_cast<std::size_t>(axis)] = 1;
  std::vector<Tensor> slices;
  for (std::int64_t i = 0; i < n; ++i) slices.emplace_back(slice_shape, DType::float32, x.device());
  be.split(x, axis, slices);
  std::reverse(slices.begin(), slices.end());
  Tensor y(x.shape(), DType::float32, x.device());
  be.concat(slices, axis, y);
  return y;
}

// Row n of x flipped left-right where flips[2n] is set and upside down where flips[2n + 1] is.
Tensor flip_rows(Backend& be, const Tensor& x, const std::vector<float>& flips) {
  std::vector<Tensor> rows;
  bool any = false;
  for (std::int64_t n = 0; n < x.dim(0); ++n) {
    Tensor row = x.slice(n, n + 1);
    const bool horizontal = flips[static_cast<std::size_t>(2 * n)] != 0.f;
    const bool vertical = flips[static_cast<std::size_t>(2 * n + 1)] != 0.f;
    if (horizontal) row = reverse_axis(be, row, 2);
    if (vertical) row = reverse_axis(be, row, 1);
    any = any || horizontal || vertical;
    rows.push_back(row);
  }
  if (!any) return x;
  Tensor y(x.shape(), DType::float32, x.device());
  be.concat(rows, 0, y);
  return y;
}

}  // namespace

RandomFlipLayer::RandomFlipLayer(std::string mode, RandomFlipOptions options)
    : Layer(std::move(options.name)),
      mode_(std::move(mode)),
      seed_(options.seed ? *options.seed : next_random_seed()),
      seed_given_(options.seed.has_value()) {
  KERASCPP_CHECK_VALUE(mode_ == "horizontal" || mode_ == "vertical" || mode_ == "horizontal_and_vertical",
                       "RandomFlip '{}': mode must be \"horizontal\", \"vertical\" or \"horizontal_and_vertical\", got "
                       "\"{}\"",
                       name(), mode_);
  set_input_spec(detail::nhwc_image_spec());
}

std::vector<Tensor> RandomFlipLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  st.saved.clear();
  if (!ctx.training || in[0].dim(0) == 0) return {in[0]};
  // The replica's stream advances every step: draws differ per step and replica yet replay exactly.
  Rng rng(seed_ ^ ctx.rng.next_u64());
  const std::int64_t batch = in[0].dim(0);
  std::vector<float> flips(static_cast<std::size_t>(2 * batch), 0.f);
  for (std::int64_t n = 0; n < batch; ++n) {
    if (mode_ != "vertical") flips[static_cast<std::size_t>(2 * n)] = rng.uniform() < 0.5f ? 1.f : 0.f;
    if (mode_ != "horizontal") flips[static_cast<std::size_t>(2 * n + 1)] = rng.uniform() < 0.5f ? 1.f : 0.f;
  }
  st.saved.push_back(Tensor::from_vector({batch, 2}, flips));  // the draws, on the host, for backward
  return {flip_rows(*ctx.backend, in[0], flips)};
}

std::vector<Tensor> RandomFlipLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>&,
                                              const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                              LayerState& st) {
  if (st.saved.empty()) return {grads[0]};
  return {flip_rows(*ctx.backend, grads[0], st.saved[0].to_vector())};  // a flip is its own inverse
}

Json RandomFlipLayer::get_config() const {
  return detail::Json({{"name", name()},
                       {"mode", mode_},
                       {"seed", seed_given_ ? nlohmann::json(seed_) : nlohmann::json(nullptr)},
                       {"data_format", "channels_last"}});
}

LayerRef RandomFlip(std::string mode, RandomFlipOptions options) {
  return std::make_shared<RandomFlipLayer>(std::move(mode), std::move(options));
}

KERASCPP_REGISTER_LAYER("RandomFlip", [](const LayerConfig& c) {
  c.expect_channels_last();
  layers::RandomFlipOptions o{.name = c.name()};
  if (c.find("seed")) o.seed = c.get<std::uint64_t>("seed", 0);
  return layers::RandomFlip(c.str("mode", "horizontal_and_vertical"), o);
});

}  // namespace kerascpp::layers
