// TFConfigClusterResolver: TF_CONFIG's JSON parsed and checked once, so that every later question
// (my rank, the chief's address, the worker count) is answered from a consistent cluster. Every
// refusal is a ValueError naming TF_CONFIG, what is wrong in it, and how to write it instead.
#include "kerascpp/distribute/cluster_resolver.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <set>

#include "check.hpp"

namespace kerascpp::distribute {
namespace {

using Json = nlohmann::json;

constexpr const char* kExample =
    R"(e.g. {"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222"]}, "task": {"type": "worker", "index": 0}})";
const std::set<std::string> kRoles = {"chief", "worker", "ps", "evaluator"};

// "host:port", "[v6::addr]:port": a host that is not empty and a port in [1, 65535].
void check_address(const std::string& job, std::size_t index, const std::string& address) {
  const auto colon = address.rfind(':');
  bool ok = colon != std::string::npos && colon > 0 && colon + 1 < address.size();
  long port = 0;
  if (ok) {
    const std::string digits = address.substr(colon + 1);
    ok = digits.find_first_not_of("0123456789") == std::string::npos && digits.size() <= 5;
    if (ok) port = std::strtol(digits.c_str(), nullptr, 10);
    ok = ok && port >= 1 && port <= 65535;
  }
  KERASCPP_CHECK_VALUE(ok,
                       "TF_CONFIG: cluster job '{}' task {} has address '{}', which is not \"host:port\" with a "
                       "port in [1, 65535]; write each task as e.g. \"10.0.0.5:2222\"",
                       job, index, address);
}

std::string string_field(const Json& object, const char* key, const char* where) {
  if (!object.contains(key)) return {};
  KERASCPP_CHECK_VALUE(object[key].is_string(), "TF_CONFIG: \"{}\" in {} must be a string, got {}", key, where,
                       object[key].dump());
  return object[key].get<std::string>();
}

}  // namespace

TFConfigClusterResolver::TFConfigClusterResolver()
    : TFConfigClusterResolver([] {
        // TF_CONFIG is TensorFlow's variable, not one of ours (KERASCPP_*), so it is read here rather
        // than through src/core/knobs.cpp; docs/environment.md lists it among other programs' variables.
        const char* text = std::getenv("TF_CONFIG");
        KERASCPP_CHECK_VALUE(text && *text,
                             "TFConfigClusterResolver: the TF_CONFIG environment variable is not set; set it to the "
                             "cluster and this task, {}",
                             kExample);
        return std::string(text);
      }()) {}

bool TFConfigClusterResolver::environment_has_tf_config() {
  const char* text = std::getenv("TF_CONFIG");
  return text && *text;
}

TFConfigClusterResolver::TFConfigClusterResolver(const std::string& tf_config_json) {
  Json config;
  try {
    config = Json::parse(tf_config_json);
  } catch (const Json::parse_error& e) {
    KERASCPP_CHECK_VALUE(false, "TF_CONFIG is not valid JSON ({}); write it as one JSON object, {}", e.what(),
                         kExample);
  }
  KERASCPP_CHECK_VALUE(config.is_object(), "TF_CONFIG must be a JSON object, got {}; {}", config.dump(), kExample);
  for (const auto& [key, value] : config.items())
    KERASCPP_CHECK_VALUE(
        key == "cluster" || key == "task" || key == "rpc_layer" || key == "environment" || key == "session_master",
        "TF_CONFIG has an unknown key \"{}\"; the keys are cluster, task, rpc_layer, environment", key);

  std::set<std::string> addresses;
  if (config.contains("cluster")) {
    const Json& cluster = config["cluster"];
    KERASCPP_CHECK_VALUE(cluster.is_object(), "TF_CONFIG: \"cluster\" must be an object of jobs, got {}; {}",
                         cluster.dump(), kExample);
    for (const auto& [job, tasks] : cluster.items()) {
      KERASCPP_CHECK_VALUE(kRoles.count(job),
                           "TF_CONFIG: cluster has a job '{}', which is not a role; the roles are {}", job,
                           fmt::join(kRoles, ", "));
      KERASCPP_CHECK_VALUE(tasks.is_array(),
                           "TF_CONFIG: cluster job '{}' must be a list of \"host:port\" strings, got {}", job,
                           tasks.dump());
      std::vector<std::string> list;
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        KERASCPP_CHECK_VALUE(tasks[i].is_string(),
                             "TF_CONFIG: cluster job '{}' task {} must be a \"host:port\" string, got {}", job, i,
                             tasks[i].dump());
        std::string address = tasks[i].get<std::string>();
        check_address(job, i, address);
        KERASCPP_CHECK_VALUE(addresses.insert(address).second,
                             "TF_CONFIG: address '{}' is listed twice (again as {}:{}); every task needs its own "
                             "host:port",
                             address, job, i);
        list.push_back(std::move(address));
      }
      KERASCPP_CHECK_VALUE(list.size() <= 1 || (job != "chief" && job != "evaluator"),
                           "TF_CONFIG: cluster job '{}' lists {} tasks, but there is at most one {}; make the others "
                           "\"worker\" tasks",
                           job, list.size(), job);
      if (!list.empty()) cluster_[job] = std::move(list);
    }
  }

  if (config.contains("task")) {
    const Json& task = config["task"];
    KERASCPP_CHECK_VALUE(task.is_object(),
                         "TF_CONFIG: \"task\" must be an object like {{\"type\": \"worker\", \"index\": 0}}, got {}",
                         task.dump());
    task_type_ = string_field(task, "type", "\"task\"");
    KERASCPP_CHECK_VALUE(!task_type_.empty(),
                         "TF_CONFIG: \"task\" has no \"type\"; write e.g. {{\"type\": \"worker\", \"index\": 0}}");
    KERASCPP_CHECK_VALUE(kRoles.count(task_type_), "TF_CONFIG: task type '{}' is not a role; the roles are {}",
                         task_type_, fmt::join(kRoles, ", "));
    if (task.contains("index")) {
      const Json& index = task["index"];
      KERASCPP_CHECK_VALUE(index.is_number_integer(), "TF_CONFIG: task \"index\" must be a whole number, got {}",
                           index.dump());
      KERASCPP_CHECK_VALUE(index.get<long long>() >= 0 && index.get<long long>() < 1 << 20,
                           "TF_CONFIG: task index {} is negative or absurdly large", index.get<long long>());
      task_id_ = index.get<int>();
    }
    auto job = cluster_.find(task_type_);
    KERASCPP_CHECK_VALUE(job != cluster_.end(),
                         "TF_CONFIG: this task is {}:{}, but the cluster has no '{}' job; add "
                         "it to \"cluster\" or fix \"task\"",
                         task_type_, task_id_, task_type_);
    KERASCPP_CHECK_VALUE(static_cast<std::size_t>(task_id_) < job->second.size(),
                         "TF_CONFIG: task index {} is out of range: the cluster's '{}' job has {} task(s) (indices 0 "
                         "to {})",
                         task_id_, task_type_, job->second.size(), job->second.size() - 1);
  }
  rpc_layer_ = string_field(config, "rpc_layer", "TF_CONFIG");
  environment_ = string_field(config, "environment", "TF_CONFIG");
}

int TFConfigClusterResolver::num_workers() const {
  int n = 0;
  for (const char* job : {"chief", "worker"})
    if (auto it = cluster_.find(job); it != cluster_.end()) n += static_cast<int>(it->second.size());
  return n;
}

std::string TFConfigClusterResolver::task_address(const std::string& task_type, int task_index) const {
  auto job = cluster_.find(task_type);
  KERASCPP_CHECK_VALUE(job != cluster_.end(), "TF_CONFIG: the cluster has no '{}' job", task_type);
  KERASCPP_CHECK_VALUE(task_index >= 0 && static_cast<std::size_t>(task_index) < job->second.size(),
                       "TF_CONFIG: task {}:{} is out of range: the '{}' job has {} task(s)", task_type, task_index,
                       task_type, job->second.size());
  return job->second[static_cast<std::size_t>(task_index)];
}

std::string TFConfigClusterResolver::master(const std::string& task_type, int task_index,
                                            const std::string& rpc_layer) const {
  std::string address;
  if (!task_type.empty()) address = task_address(task_type, task_index);
  else if (!task_type_.empty()) address = task_address(task_type_, task_id_);
  else return {};
  const std::string& layer = rpc_layer.empty() ? rpc_layer_ : rpc_layer;
  return layer.empty() ? address : layer + "://" + address;
}

std::pair<std::string, int> TFConfigClusterResolver::coordinator_task() const {
  if (cluster_.count("chief")) return {"chief", 0};
  KERASCPP_CHECK_VALUE(cluster_.count("worker"),
                       "TF_CONFIG: the cluster has neither a 'chief' nor a 'worker' job, so no task can coordinate "
                       "the job; {}",
                       kExample);
  return {"worker", 0};
}

bool TFConfigClusterResolver::is_chief() const {
  if (task_type_.empty()) return false;
  auto [type, index] = coordinator_task();
  return task_type_ == type && task_id_ == index;
}

int TFConfigClusterResolver::worker_rank() const {
  KERASCPP_CHECK_VALUE(task_type_ == "chief" || task_type_ == "worker",
                       "TF_CONFIG: this task is '{}', which is not a training worker (only chief and worker tasks "
                       "have a worker rank)",
                       task_type_.empty() ? std::string("(no task)") : task_type_);
  if (task_type_ == "chief") return 0;
  return task_id_ + (cluster_.count("chief") ? 1 : 0);
}

std::string TFConfigClusterResolver::worker_address(int rank) const {
  const bool chief = cluster_.count("chief") > 0;
  return chief && rank == 0 ? task_address("chief", 0) : task_address("worker", rank - (chief ? 1 : 0));
}

std::string TFConfigClusterResolver::describe_worker(int rank) const {
  const bool chief = cluster_.count("chief") > 0;
  if (chief && rank == 0) return fmt::format("chief:0 ({})", worker_address(0));
  return fmt::format("worker:{} ({})", rank - (chief ? 1 : 0), worker_address(rank));
}

void TFConfigClusterResolver::check_for_collective_strategy(const std::string& strategy) const {
  KERASCPP_CHECK_VALUE(!cluster_.count("ps"),
                       "{}: TF_CONFIG's cluster has a 'ps' job ({}), but a collective strategy has no parameter "
                       "servers; remove the 'ps' job from TF_CONFIG, or use ParameterServerStrategy",
                       strategy, fmt::join(cluster_.at("ps"), ", "));
  KERASCPP_CHECK_VALUE(!task_type_.empty(),
                       "{}: TF_CONFIG has a cluster but no \"task\"; every process needs its own, e.g. \"task\": "
                       "{{\"type\": \"worker\", \"index\": 0}}",
                       strategy);
  KERASCPP_CHECK_VALUE(task_type_ != "evaluator",
                       "{}: this task is the evaluator, which does not train and is not one of the workers; run "
                       "SidecarEvaluator on the chief's checkpoint directory there (docs/distributed_training.md)",
                       strategy);
  KERASCPP_CHECK_VALUE(num_workers() >= 1, "{}: TF_CONFIG's cluster has no 'chief' or 'worker' job; {}", strategy,
                       kExample);
}

}  // namespace kerascpp::distribute
