#include "kerascpp/layers/permute.hpp"
#include "kerascpp/core/layer_config.hpp"

#include <fmt/ranges.h>

#include <algorithm>

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

namespace {
// The Backend's transpose permutation of the full tensor: the batch axis, then dims (0-based).
std::vector<int> with_batch_axis(const std::vector<int>& dims) {
  std::vector<int> perm{0};
  perm.insert(perm.end(), dims.begin(), dims.end());
  return perm;
}
}  // namespace

PermuteLayer::PermuteLayer(std::vector<int> dims, PermuteOptions options)
    : Layer(std::move(options.name)), dims_(std::move(dims)) {
  std::vector<int> sorted = dims_;
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = !sorted.empty();
  for (std::size_t i = 0; i < sorted.size(); ++i)
    is_permutation = is_permutation && sorted[i] == static_cast<int>(i) + 1;
  KERASCPP_CHECK_VALUE(
      is_permutation,
      "Permute '{}': dims must be a permutation of 1..n over the per-example axes (the batch axis is not "
      "counted), e.g. Permute({{2, 1}}); got [{}]",
      name(), fmt::join(dims_, ", "));
  KERASCPP_CHECK_VALUE(dims_.size() <= 5, "Permute '{}': at most 5 per-example axes are supported, got {}", name(),
                       dims_.size());
  set_input_spec({.ndim = static_cast<int>(dims_.size()) + 1,
                  .layout = "(batch, " + std::to_string(dims_.size()) + " axes to permute)"});
}

std::vector<Shape> PermuteLayer::compute_output_shapes(const std::vector<Shape>& in) {
  Shape out;
  for (int d : dims_) out.push_back(in[0][static_cast<std::size_t>(d - 1)]);
  return {out};
}

std::vector<Tensor> PermuteLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  Tensor y;
  ctx.backend->transpose(in[0], with_batch_axis(dims_), y);
  return {y};
}

std::vector<Tensor> PermuteLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>&, const std::vector<Tensor>&,
                                           const std::vector<Tensor>& grads, LayerState&) {
  std::vector<int> inverse(dims_.size());  // input axis dims[i] came from output axis i
  for (std::size_t i = 0; i < dims_.size(); ++i)
    inverse[static_cast<std::size_t>(dims_[i] - 1)] = static_cast<int>(i) + 1;
  Tensor dx;
  ctx.backend->transpose(grads[0], with_batch_axis(inverse), dx);
  return {dx};
}

Json PermuteLayer::get_config() const { return detail::Json({{"name", name()}, {"dims", dims_}}); }

LayerRef Permute(std::vector<int> dims, PermuteOptions options) {
  return std::make_shared<PermuteLayer>(std::move(dims), std::move(options));
}

KERASCPP_REGISTER_LAYER("Permute", [](const LayerConfig& c) {
  return layers::Permute(c.required<std::vector<int>>("dims"), {.name = c.name()});
});

}  // namespace kerascpp::layers
