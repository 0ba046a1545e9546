// ParameterServerStrategy's StrategyImpl: one local replica (cpu:0) that computes a worker's
// steps, plus this task's role in the cluster (ps_task.hpp). Checks the cluster and the token
// before anything listens.
#include <fmt/format.h>

#include "check.hpp"
#include "core/knobs.hpp"
#include "distribute/parameter_server/ps_task.hpp"
#include "distribute/replica_pool.hpp"
#include "distribute/strategy_options.hpp"

namespace kerascpp::distribute {
namespace {

class ParameterServerPool : public ReplicaPool {
 public:
  ParameterServerPool(StrategyOptions options, std::unique_ptr<ParameterServerTask> task, int rank)
      : ReplicaPool("ParameterServerStrategy", {Device{}}, CrossDeviceOpsKind::automatic, options),
        task_(std::move(task)),
        rank_(rank) {}
  std::string name() const override { return task_->describe(); }
  // The chief is 0 (it alone writes checkpoints and logs); worker i is i + 1. Steps are not
  // all-reduced between workers (the ps tasks combine them), so num_workers() stays 1.
  int worker_index() const override { return rank_; }
  ParameterServerTask* parameter_server() override { return task_.get(); }

 private:
  std::unique_ptr<ParameterServerTask> task_;
  int rank_;
};

}  // namespace

std::vector<Tensor*> variable_state(optimizers::Optimizer& optimizer, std::size_t variable, std::size_t variables) {
  const std::vector<Tensor*> all = optimizer.slot_tensors(0);
  const auto& o = optimizer.common_options();
  const std::size_t groups = (o.use_ema ? 1 : 0) + (o.gradient_accumulation_steps ? 1 : 0);
  const auto k = static_cast<std::size_t>(optimizer.slots_per_variable());
  std::vector<Tensor*> out;
  if (optimizer.slot_replicas() == 0 || all.size() < (groups + k) * variables) return out;  // not built
  for (std::size_t g = 0; g < groups; ++g) out.push_back(all[g * variables + variable]);
  for (std::size_t j = 0; j < k; ++j) out.push_back(all[groups * variables + variable * k + j]);
  return out;
}

std::shared_ptr<StrategyImpl> make_parameter_server_impl(const TFConfigClusterResolver& resolver,
                                                         VariablePartitioner partitioner, StrategyOptions options) {
  check_strategy_options(options, "ParameterServerStrategy");
  check_thread_environment();
  const ClusterSpec& cluster = resolver.cluster_spec();
  const auto count = [&](const char* job) {
    auto it = cluster.find(job);
    return it == cluster.end() ? 0 : static_cast<int>(it->second.size());
  };
  KERASCPP_CHECK_VALUE(count("ps") >= 1 && count("worker") >= 1 && count("chief") == 1,
                       "ParameterServerStrategy: TF_CONFIG's cluster has {} chief, {} worker and {} ps task(s); it "
                       "needs one chief (the coordinator), at least one worker and at least one ps, e.g. "
                       "{{\"chief\": [\"h0:2222\"], \"worker\": [\"h1:2222\"], \"ps\": [\"h2:2222\"]}}",
                       count("chief"), count("worker"), count("ps"));
  const std::string& type = resolver.task_type();
  KERASCPP_CHECK_VALUE(type == "chief" || type == "worker" || type == "ps",
                       "ParameterServerStrategy: this task is '{}', but only chief, worker and ps tasks take part "
                       "(the evaluator task runs SidecarEvaluator on the chief's checkpoint directory, without this "
                       "strategy); set TF_CONFIG's task type",
                       type.empty() ? "(no task)" : type);
  const char* token = ::kerascpp::detail::knob("KERASCPP_CLUSTER_TOKEN");
  KERASCPP_CHECK_VALUE(token && *token,
                       "ParameterServerStrategy: KERASCPP_CLUSTER_TOKEN is not set; every task of the job must set it "
                       "to the same secret (e.g. export KERASCPP_CLUSTER_TOKEN=$(openssl rand -hex 16) once and pass "
                       "it to each task): the ps and worker servers refuse requests without it");
  const auto timeout = collective_timeout(options);
  auto task = join_parameter_server_cluster(resolver, std::move(partitioner), token, timeout);
  const int rank = type == "chief" ? 0 : resolver.task_id() + 1;
  return std::make_shared<ParameterServerPool>(options, std::move(task), rank);
}

}  // namespace kerascpp::distribute
