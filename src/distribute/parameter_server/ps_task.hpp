// ParameterServerStrategy as the training floor sees it: this process's role in the cluster and
// the calls a step makes on it. The gRPC side (grpc_parameter_server.cpp, in kerascpp_cluster)
// implements it; no_grpc_parameter_server.cpp stands in for a build without gRPC and says so.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kerascpp/core/variable.hpp"
#include "kerascpp/distribute/parameter_server.hpp"
#include "kerascpp/training/optimizers.hpp"

namespace kerascpp::distribute {

// Where each trainable variable lives: shard s of variable v holds rows [row_begin, row_end) of its
// axis 0 on ps task `ps`. Every task computes the same layout from the same model and partitioner.
struct ShardPlacement {
  int variable = 0;  // index in the model's trainable variables
  int shard = 0;
  std::int64_t row_begin = 0, row_end = 0;
  int ps = 0;
  std::string name() const { return std::to_string(variable) + "/" + std::to_string(shard); }
};
// Whole variables round-robin over `num_ps` tasks; a variable `partitioner` splits (axis 0) has
// its shards placed round-robin too, continuing the same count (TensorFlow's placement).
std::vector<ShardPlacement> place_variables(const std::vector<Variable*>& trainable,
                                            const VariablePartitioner& partitioner, int num_ps);

// The optimizer state of trainable variable `variable` of the `variables` it was built over, in
// slot_tensors(0)'s order: its EMA average, its gradient accumulator, then its slots (the entries
// shaped like the variable; optimizer-wide state such as the step count is not included).
std::vector<Tensor*> variable_state(optimizers::Optimizer& optimizer, std::size_t variable, std::size_t variables);

// One batch the coordinator hands a worker.
struct StepBatch {
  std::vector<Tensor> inputs;
  Tensor targets, sample_weight;  // sample_weight undefined when the batch has none
};

class ParameterServerTask {
 public:
  virtual ~ParameterServerTask() = default;
  virtual bool is_coordinator() const = 0;  // the chief
  virtual std::string describe() const = 0;
  // Coordinator: creates the variables on their ps tasks (once: later calls do nothing) with
  // their current values and `optimizer_json` (optimizers::serialize), which each ps applies.
  virtual void create_variables(const std::vector<Variable*>& trainable, const std::string& optimizer_json) = 0;
  // Coordinator: runs one step on a worker; returns the step's StepTotals, flattened.
  virtual std::vector<double> run_step(const StepBatch& batch) = 0;
  // Coordinator: the end of a fit (the workers' fit returns).
  virtual void end_fit() = 0;
  // Both: copies every variable's current value from the ps tasks into copy 0 (a worker before
  // each step, the coordinator after fit); with `state`, also each variable's optimizer state into
  // that optimizer's slots (the coordinator, so that its checkpoints hold what the ps tasks hold).
  virtual void pull(const std::vector<Variable*>& trainable, optimizers::Optimizer* state = nullptr) = 0;
  // Worker: serves the coordinator's steps, running `step` for each; returns when the coordinator's
  // fit ends; DeviceError naming the task when the job stops (a lost task, or the coordinator's abort).
  virtual void serve_steps(const std::function<std::vector<double>(const StepBatch&)>& step) = 0;
  // Worker: pushes replica `replica`'s gradients of `trainable` to the ps tasks, which apply them.
  virtual void push(const std::vector<Variable*>& trainable, int replica) = 0;
};

// This process's task of the cluster (chief or worker; a ps task serves and never returns; see
// ParameterServerStrategy). `token`: the job's KERASCPP_CLUSTER_TOKEN; `timeout`: the bound on
// every wait for another task.
std::unique_ptr<ParameterServerTask> join_parameter_server_cluster(const TFConfigClusterResolver& resolver,
                                                                   VariablePartitioner partitioner,
                                                                   const std::string& token,
                                                                   std::chrono::milliseconds timeout);

}  // namespace kerascpp::distribute
