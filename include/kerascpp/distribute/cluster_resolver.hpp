// Cluster resolvers: where the tasks of a multi-process job live and which one this process is.
// TFConfigClusterResolver reads TensorFlow's TF_CONFIG variable, the cluster description that
// Kubernetes operators (TFJob) and TensorFlow users write:
//   {"cluster": {"chief": ["h0:2222"], "worker": ["h1:2222", "h2:2222"], "ps": [...], "evaluator": [...]},
//    "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc", "environment": "cloud"}
#pragma once
#include <map>
#include <string>
#include <vector>

namespace kerascpp::distribute {

/// The jobs of a cluster: job name ("chief", "worker", "ps", "evaluator") to its "host:port" addresses.
using ClusterSpec = std::map<std::string, std::vector<std::string>>;

/// TensorFlow's tf.distribute.cluster_resolver.TFConfigClusterResolver: the cluster, this task and its role.
class TFConfigClusterResolver {
 public:
  /// Parses the TF_CONFIG environment variable (ValueError when it is unset, malformed or inconsistent).
  TFConfigClusterResolver();
  /// Parses `tf_config_json` as TF_CONFIG's text (ValueError naming the mistake and the fix).
  explicit TFConfigClusterResolver(const std::string& tf_config_json);

  /// True when the TF_CONFIG environment variable is set and not empty.
  static bool environment_has_tf_config();

  /// Every job and its addresses, as TF_CONFIG lists them (jobs with no tasks are left out).
  const ClusterSpec& cluster_spec() const { return cluster_; }
  /// This task's job ("chief", "worker", "ps", "evaluator"); empty when TF_CONFIG has no "task".
  const std::string& task_type() const { return task_type_; }
  /// This task's index within its job (0 when TF_CONFIG has no "task").
  int task_id() const { return task_id_; }
  /// TF_CONFIG's "rpc_layer" (e.g. "grpc"); empty when absent.
  const std::string& rpc_layer() const { return rpc_layer_; }
  /// TF_CONFIG's "environment" (e.g. "cloud", "google"); empty when absent.
  const std::string& environment() const { return environment_; }
  /// The training workers: the chief (which also trains) plus the "worker" job.
  int num_workers() const;
  /// This task's address ("host:port"), or the address of task `task_index` of job `task_type`.
  std::string task_address(const std::string& task_type, int task_index) const;
  /// TensorFlow's master(): the address of `task_type`:`task_index` (this task's when `task_type` is
  /// empty) prefixed with "<rpc_layer>://" when an rpc layer is given or configured; "" without a task.
  std::string master(const std::string& task_type = {}, int task_index = 0, const std::string& rpc_layer = {}) const;
  /// True for the task that writes checkpoints and coordinates: the chief, or worker 0 when there is no chief.
  bool is_chief() const;
  /// The task that serves the job's coordination service: chief 0, or worker 0 when there is no chief.
  std::pair<std::string, int> coordinator_task() const;
  /// This task's rank among the training workers: the chief is 0 and worker i is i + (1 with a chief).
  int worker_rank() const;
  /// The address of the training worker of rank `rank` (see worker_rank()).
  std::string worker_address(int rank) const;
  /// "worker:1 (10.0.0.5:2222)": how errors and logs name the training worker of rank `rank`.
  std::string describe_worker(int rank) const;
  /// ValueError unless this cluster suits `strategy` (a collective strategy such as
  /// MultiWorkerMirroredStrategy): a "task", no "ps" job, and this task a chief or worker.
  void check_for_collective_strategy(const std::string& strategy) const;

 private:
  ClusterSpec cluster_;
  std::string task_type_, rpc_layer_, environment_;
  int task_id_ = 0;
};

}  // namespace kerascpp::distribute
