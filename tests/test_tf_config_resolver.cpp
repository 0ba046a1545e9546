// TFConfigClusterResolver: TF_CONFIG parsed with TensorFlow's semantics (task, worker count, chief,
// master address) and every malformed or unsuitable cluster refused with a ValueError that names
// the mistake. The multi-process TF_CONFIG runs are tests/cluster/test_tf_config_cluster.py.
#include <doctest/doctest.h>

#include "kerascpp/distribute/cluster_resolver.hpp"
#include "kerascpp/kerascpp.hpp"
#include "scoped_test_state.hpp"

namespace K = kerascpp;
namespace D = kerascpp::distribute;

namespace {

const char* kFull = R"({"cluster": {"chief": ["h0:2222"], "worker": ["h1:2222", "h2:2222"], "ps": ["h3:2222"],
                                     "evaluator": ["h4:2222"]},
                        "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc", "environment": "cloud"})";

}  // namespace

TEST_CASE("TF_CONFIG: every role, the task, rpc_layer and environment") {
  D::TFConfigClusterResolver r(kFull);
  CHECK(r.cluster_spec().size() == 4);
  CHECK(r.cluster_spec().at("worker") == std::vector<std::string>{"h1:2222", "h2:2222"});
  CHECK(r.cluster_spec().at("evaluator") == std::vector<std::string>{"h4:2222"});
  CHECK(r.task_type() == "worker");
  CHECK(r.task_id() == 1);
  CHECK(r.rpc_layer() == "grpc");
  CHECK(r.environment() == "cloud");
  CHECK(r.num_workers() == 3);  // the chief trains too
  CHECK_FALSE(r.is_chief());
  CHECK(r.worker_rank() == 2);  // chief 0, worker:0 1, worker:1 2
  CHECK(r.worker_address(0) == "h0:2222");
  CHECK(r.worker_address(2) == "h2:2222");
  CHECK(r.describe_worker(1) == "worker:0 (h1:2222)");
  CHECK(r.master() == "grpc://h2:2222");
  CHECK(r.master("ps", 0) == "grpc://h3:2222");
  CHECK(r.master("chief", 0, "http") == "http://h0:2222");
  CHECK(r.coordinator_task() == std::pair<std::string, int>{"chief", 0});
}

TEST_CASE("TF_CONFIG: without a chief, worker 0 coordinates; without rpc_layer, master is host:port") {
  D::TFConfigClusterResolver r(R"({"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 0}})");
  CHECK(r.is_chief());
  CHECK(r.worker_rank() == 0);
  CHECK(r.num_workers() == 2);
  CHECK(r.master() == "a:1");
  CHECK(r.coordinator_task() == std::pair<std::string, int>{"worker", 0});
  CHECK_NOTHROW(r.check_for_collective_strategy("MultiWorkerMirroredStrategy"));
  D::TFConfigClusterResolver chief(R"({"cluster": {"chief": ["c:1"], "worker": ["a:1"]}, "task": {"type": "chief"}})");
  CHECK(chief.is_chief());
  CHECK(chief.task_id() == 0);
  CHECK(chief.worker_rank() == 0);
  D::TFConfigClusterResolver no_task(R"({"cluster": {"worker": ["a:1"]}})");
  CHECK(no_task.task_type().empty());
  CHECK(no_task.master().empty());
  CHECK_FALSE(no_task.is_chief());
}

TEST_CASE("TF_CONFIG: malformed or inconsistent configurations are named") {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {R"({"cluster": {"worker": ["a:1"]}, )", "TF_CONFIG is not valid JSON"},
      {R"(["a:1"])", "TF_CONFIG must be a JSON object"},
      {R"({"cluster": {"worker": ["a:1"]}, "tasks": {}})", "unknown key \"tasks\""},
      {R"({"cluster": {"master": ["a:1"]}})", "job 'master', which is not a role"},
      {R"({"cluster": {"worker": "a:1"}})", "must be a list of \"host:port\" strings"},
      {R"({"cluster": {"worker": [5]}})", "must be a \"host:port\" string"},
      {R"({"cluster": {"worker": ["a"]}})", "is not \"host:port\""},
      {R"({"cluster": {"worker": ["a:99999"]}})", "is not \"host:port\""},
      {R"({"cluster": {"worker": [":80"]}})", "is not \"host:port\""},
      {R"({"cluster": {"worker": ["a:1", "a:1"]}})", "address 'a:1' is listed twice (again as worker:1)"},
      {R"({"cluster": {"chief": ["a:1"], "ps": ["a:1"]}})", "listed twice"},
      {R"({"cluster": {"chief": ["a:1", "b:1"]}})", "at most one chief"},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "boss", "index": 0}})", "task type 'boss' is not a role"},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"index": 0}})", "\"task\" has no \"type\""},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 1}})",
       "task index 1 is out of range: the cluster's 'worker' job has 1 task(s)"},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": -1}})", "negative"},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": "0"}})", "must be a whole number"},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "ps", "index": 0}})", "the cluster has no 'ps' job"},
      {R"({"cluster": {"worker": ["a:1"]}, "rpc_layer": 3})", "\"rpc_layer\" in TF_CONFIG must be a string"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.json);
    CHECK_THROWS_WITH_AS(D::TFConfigClusterResolver(c.json), doctest::Contains(c.message), K::ValueError);
  }
}

TEST_CASE("TF_CONFIG: a collective strategy refuses parameter servers, a missing task and the evaluator") {
  CHECK_THROWS_WITH_AS(D::TFConfigClusterResolver(kFull).check_for_collective_strategy("MultiWorkerMirroredStrategy"),
                       doctest::Contains("has a 'ps' job (h3:2222), but a collective strategy has no parameter "
                                         "servers; remove the 'ps' job"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(D::TFConfigClusterResolver(R"({"cluster": {"worker": ["a:1"]}})")
                           .check_for_collective_strategy("MultiWorkerMirroredStrategy"),
                       doctest::Contains("has a cluster but no \"task\""), K::ValueError);
  CHECK_THROWS_WITH_AS(
      D::TFConfigClusterResolver(
          R"({"cluster": {"worker": ["a:1"], "evaluator": ["e:1"]}, "task": {"type": "evaluator", "index": 0}})")
          .check_for_collective_strategy("MultiWorkerMirroredStrategy"),
      doctest::Contains("this task is the evaluator"), K::ValueError);
}

TEST_CASE("TF_CONFIG: read from the environment, and a strategy built without arguments uses it") {
  {
    test_scopes::ScopedEnv env("TF_CONFIG",
                               R"({"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 1}})");
    CHECK(D::TFConfigClusterResolver::environment_has_tf_config());
    D::TFConfigClusterResolver r;
    CHECK(r.worker_rank() == 1);
  }
  {
    test_scopes::ScopedEnv env("TF_CONFIG", "");
    CHECK_FALSE(D::TFConfigClusterResolver::environment_has_tf_config());
    CHECK_THROWS_WITH_AS(D::TFConfigClusterResolver(), doctest::Contains("TF_CONFIG environment variable is not set"),
                         K::ValueError);
  }
  // The strategy reads TF_CONFIG (not mpirun's variables): its ps job is refused before any network use.
  test_scopes::ScopedEnv env("TF_CONFIG", kFull);
  CHECK_THROWS_WITH_AS(D::MultiWorkerMirroredStrategy<>(1),
                       doctest::Contains("MultiWorkerMirroredStrategy: TF_CONFIG's cluster has a 'ps' job"),
                       K::ValueError);
}

TEST_CASE("TF_CONFIG: the evaluator task is not a training worker, and its strategy runs alone") {
  const char* cfg = R"({"cluster": {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"], "evaluator": ["127.0.0.1:3"]},
                        "task": {"type": "evaluator", "index": 0}})";
  D::TFConfigClusterResolver r(cfg);
  CHECK(r.num_workers() == 2);  // chief + worker; the evaluator is not counted
  CHECK_FALSE(r.is_chief());
  CHECK_THROWS_AS(r.worker_rank(), K::ValueError);
  // As TensorFlow: the same program run on the evaluator gets a one-worker strategy and does not
  // try to meet the chief (nothing listens at these addresses: joining would time out).
  test_scopes::ScopedEnv env("TF_CONFIG", cfg);
  D::MultiWorkerMirroredStrategy<> s(1);
  CHECK(s.num_workers() == 1);
  CHECK(s.num_replicas_in_sync() == 1);
}
