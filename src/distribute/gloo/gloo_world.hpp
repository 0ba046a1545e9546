// GlooWorld: the training workers of a TF_CONFIG cluster (no MPI launcher). The coordinator task
// (chief:0, or worker:0 without a chief) serves the coordination service on its TF_CONFIG address;
// every worker meets the others there through Gloo's rendezvous::Store interface, and Gloo's TCP
// transport then carries the collectives (ring all-reduce, all-gather, broadcast). Gloo's calls
// block, so a communication thread runs them one at a time in the order they were started (every
// worker starts the same sequence), which lets gradient buckets reduce while backward goes on.
// Every wait is bounded by the collective timeout; on a failure the tasks' heartbeats at the
// coordinator name the task that died or stalled, and the world is poisoned for good.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "distribute/cluster/coordination_service.hpp"
#include "distribute/worker_group.hpp"
#include "kerascpp/distribute/cluster_resolver.hpp"

namespace gloo {
class Context;
}

namespace kerascpp::distribute {

class GlooWorld final : public WorkerGroup, public std::enable_shared_from_this<GlooWorld> {
 public:
  // Once per process (later calls return the same world with the newer timeout).
  static std::shared_ptr<GlooWorld> join(const TFConfigClusterResolver& resolver, std::chrono::milliseconds timeout);
  ~GlooWorld() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int workers_on_this_machine() const override { return on_this_machine_; }
  std::unique_ptr<detail::DeviceCollectives> make_cpu_collective(int local_replicas) override;
  std::vector<double> all_gather(const std::vector<double>& mine, const char* what) override;
  void all_reduce_sum(float* data, std::int64_t count, const char* what) override;
  void broadcast(std::vector<char>& bytes, const char* what) override;
  std::unique_ptr<PendingReduction> start_all_reduce_sum(float* data, std::int64_t count,
                                                         const std::string& what) override;
  void wait(PendingReduction& pending, const std::string& what) override;
  void poison(const std::string& why) override;
  const char* transport() const override { return "Gloo"; }

 private:
  struct Job;
  GlooWorld(const TFConfigClusterResolver& resolver, std::chrono::milliseconds timeout);
  std::shared_ptr<Job> enqueue(std::function<void()> op, std::string what);
  void stop();         // ends the threads (at exit)
  void communicate();  // the communication thread
  void send_heartbeats();
  // The tasks whose heartbeats stopped (or the coordinator, when it no longer answers).
  std::string lost_tasks();
  [[noreturn]] void fail(const std::string& what, std::int64_t seq, const std::string& cause);
  void check_usable();

  TFConfigClusterResolver resolver_;
  int rank_, size_, on_this_machine_ = 1;
  std::atomic<std::int64_t> timeout_ms_;
  std::unique_ptr<CoordinationServer> server_;  // on the coordinator task only
  std::unique_ptr<CoordinationClient> client_;
  std::shared_ptr<gloo::Context> context_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::int64_t started_ = 0;  // collectives started (numbers them in reports)
  std::string failure_;       // set once poisoned
  bool stopping_ = false;
  std::thread communicator_, heartbeat_;
};

}  // namespace kerascpp::distribute
