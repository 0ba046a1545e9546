#include "training/loss_mask.hpp"

#include <fmt/format.h>

#include <vector>

#include "check.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::detail {

LossMask make_loss_mask(ReplicaContext& ctx, const Tensor& mask, const Tensor& pred, const Tensor& sample_weight_host,
                        std::int64_t batch_rows_global, const std::string& model) {
  LossMask m;
  m.batch_rows_global = static_cast<double>(batch_rows_global);
  double valid = 0;
  if (mask.defined() && pred.dim(0) > 0) {
    const Shape& ps = pred.shape();
    const Shape expected(ps.begin(), ps.end() - 1);
    KERASCPP_CHECK_VALUE(
        mask.shape() == expected,
        "Model '{}': the output's mask has shape {} but the loss needs one of the output's shape {} less its "
        "last axis ({}); a layer between Embedding(mask_zero) and the output changed the step axes without "
        "dropping the mask. Drop it (e.g. with a layer that does not support masking) or pass "
        "sample_weight instead",
        model, shape_str(mask.shape()), shape_str(ps), shape_str(expected));
    m.active = true;
    m.rows = mask.numel();
    const Tensor host = mask.to(Device{});
    const std::uint8_t* mk = host.data<std::uint8_t>();
    m.mask_host = Tensor({m.rows}, DType::float32, Device{});
    m.row_weights_host = Tensor({m.rows}, DType::float32, Device{});
    float* only = m.mask_host.data<float>();
    float* w = m.row_weights_host.data<float>();
    const std::int64_t steps = m.rows / pred.dim(0);
    const float* sw = sample_weight_host.defined() ? sample_weight_host.data<float>() : nullptr;
    for (std::int64_t i = 0; i < m.rows; ++i) {
      only[i] = mk[i] ? 1.f : 0.f;
      w[i] = sw ? only[i] * sw[i / steps] : only[i];
      valid += only[i];
    }
  }
  if (ctx.cross && ctx.num_replicas > 1) {
    // Counts below 2^24 are exact in float32, in any summation order.
    std::vector<Tensor> count{
        Tensor::from_vector({1}, std::vector<float>{static_cast<float>(valid)}).to(ctx.backend->device())};
    ctx.cross->all_reduce_sum(ctx.replica_id, count);
    valid = count[0].to(Device{}).data<float>()[0];
  }
  m.valid_global = valid;
  return m;
}

}  // namespace kerascpp::detail
