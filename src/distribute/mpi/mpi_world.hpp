// MpiWorld: the job's workers over MPI (one per process, initialised once, alive until exit).
// Every MPI call goes through it under one lock (MPI_THREAD_SERIALIZED: replica threads take
// turns). Every wait polls against the stall bound: a peer that died or stopped makes the wait
// fail with an error naming the ranks that did not arrive, instead of hanging. After any failure
// the world is poisoned: later collectives refuse at once and the process ends with MPI_Abort
// (which takes the whole job down) rather than MPI_Finalize (which would wait for the lost peer).
#pragma once
#include <mpi.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "distribute/mpi/peer_arrivals.hpp"
#include "distribute/worker_group.hpp"

namespace kerascpp::distribute {

class MpiWorld final : public WorkerGroup, public std::enable_shared_from_this<MpiWorld> {
 public:
  static std::shared_ptr<MpiWorld> join(std::chrono::milliseconds timeout);
  ~MpiWorld() override = default;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int workers_on_this_machine() const override { return node_size_; }
  std::unique_ptr<detail::DeviceCollectives> make_cpu_collective(int local_replicas) override;
  std::vector<double> all_gather(const std::vector<double>& mine, const char* what) override;
  void all_reduce_sum(float* data, std::int64_t count, const char* what) override;
  void broadcast(std::vector<char>& bytes, const char* what) override;

  // MPI_Iallreduce (large buffers take several requests).
  std::unique_ptr<PendingReduction> start_all_reduce_sum(float* data, std::int64_t count,
                                                         const std::string& what) override;
  void wait(PendingReduction& pending, const std::string& what) override;
  void poison(const std::string& why) override;
  const char* transport() const override { return "MPI"; }

 private:
  MpiWorld(int rank, int size, std::chrono::milliseconds timeout);
  // Waits for `requests`, polling against the stall bound; throws DeviceError on a stall or an
  // MPI error (and poisons the world).
  void wait_requests(std::vector<MPI_Request>& requests, const std::string& what);
  std::int64_t announce();  // counts and announces the next collective; returns its number
  [[noreturn]] void fail(const std::string& message);
  void check_usable() const;
  static void at_exit();

  int rank_, size_, node_size_ = 1;
  std::atomic<std::int64_t> timeout_ms_;
  MPI_Comm data_comm_ = MPI_COMM_NULL;    // the collectives (errors returned, not fatal)
  MPI_Comm notice_comm_ = MPI_COMM_NULL;  // PeerArrivals' notices
  std::mutex mu_;
  std::unique_ptr<PeerArrivals> arrivals_;
  std::int64_t collectives_ = 0;
  std::string failure_;  // set once poisoned
};

}  // namespace kerascpp::distribute
