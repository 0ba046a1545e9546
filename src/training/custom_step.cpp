// The public per-replica step API for custom training loops (Model::forward/backward/apply_gradients).
#include <fmt/format.h>

#include "check.hpp"
#include "distribute/strategy_impl.hpp"
#include "training/model_impl.hpp"

namespace kerascpp {
namespace {

// A model only runs on the replicas of the strategy it was compiled under: its variables are
// mirrored for that strategy's replica count and devices.
void check_context(const ModelImpl& m, const ReplicaContext& ctx) {
  KERASCPP_CHECK_STATE(m.is_compiled(), "Model '{}': call compile() before running it on a replica", m.name);
  auto& impl = *detail::strategy_impl(m.strategy());
  KERASCPP_CHECK_STATE(
      !(ctx.replica_id < 0 || ctx.replica_id >= impl.num_replicas() || &impl.context(ctx.replica_id) != &ctx),
      "Model '{}' was compiled under {} but is being run on a replica of another strategy; "
      "compile it again with .distribute set to the strategy that runs it",
      m.name, m.strategy().describe());
}

}  // namespace

Tensor Model::forward(ReplicaContext& ctx, const Tensor& x, bool training) {
  return forward(ctx, std::vector<Tensor>{x}, training);
}

Tensor Model::forward(ReplicaContext& ctx, const std::vector<Tensor>& xs, bool training) {
  check_context(*impl_, ctx);
  impl_->require_graph("run forward").check_inputs(xs);
  return impl_->replica_forward(ctx, xs, training);
}

double Model::backward(ReplicaContext& ctx, const Tensor& output_grad) {
  check_context(*impl_, ctx);
  return impl_->replica_backward(ctx, output_grad)();
}

void Model::apply_gradients(ReplicaContext& ctx) {
  check_context(*impl_, ctx);
  impl_->replica_apply(ctx);
}

}  // namespace kerascpp
