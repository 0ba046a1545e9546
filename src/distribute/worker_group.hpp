// WorkerGroup: the processes of a multi-worker job as a strategy sees them. Implemented over MPI
// (src/distribute/mpi/) for jobs started by an MPI launcher, and over Gloo (src/distribute/gloo/)
// for clusters described by TF_CONFIG; src/distribute/no_mpi.cpp and no_gloo.cpp stand in when
// the library is built without one and explain how to get it.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "backend/gpu_support.hpp"
#include "kerascpp/distribute/cluster_resolver.hpp"

namespace kerascpp::distribute {

// A cross-worker reduction started and not yet waited for (the transport's requests).
class PendingReduction {
 public:
  virtual ~PendingReduction() = default;
};

class WorkerGroup {
 public:
  virtual ~WorkerGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int workers_on_this_machine() const = 0;  // they share its cores
  // The collective of this worker's `local_replicas` CPU replicas that spans every worker:
  // summed inside the worker first (replica order), then across workers.
  virtual std::unique_ptr<detail::DeviceCollectives> make_cpu_collective(int local_replicas) = 0;
  // Every worker's `mine` (the same length on all), concatenated in rank order, on every worker.
  virtual std::vector<double> all_gather(const std::vector<double>& mine, const char* what) = 0;
  // Rank 0's `bytes` on every worker (the same length on all), in place.
  virtual void broadcast(std::vector<char>& bytes, const char* what) = 0;
  // Sums `data` over the workers, in place, the same on every worker.
  virtual void all_reduce_sum(float* data, std::int64_t count, const char* what) = 0;
  // Starts summing `data` over the workers, in place; `data` must stay alive and untouched until
  // wait() returns. Every worker starts the same reductions in the same order.
  virtual std::unique_ptr<PendingReduction> start_all_reduce_sum(float* data, std::int64_t count,
                                                                 const std::string& what) = 0;
  // Waits for a started reduction within the stall bound; DeviceError naming the workers that did
  // not arrive on a stall or a lost peer (and the group is poisoned).
  virtual void wait(PendingReduction& pending, const std::string& what) = 0;
  // A step failed part-way: the workers' collectives are out of step for good.
  virtual void poison(const std::string& why) = 0;
  virtual const char* transport() const = 0;  // "MPI", "Gloo": for describe()
};

// True when this process was started by an MPI launcher (mpirun, mpiexec, srun with PMI/PMIx).
bool launched_by_mpi_launcher();

// Joins the job's workers (initialises MPI once per process; the group lives until exit). Call
// only when launched_by_mpi_launcher(). `timeout`: the stall bound of every collective wait.
// Throws DeviceError when MPI cannot start, or when this build has no MPI (saying how to get it).
std::shared_ptr<WorkerGroup> join_worker_group(std::chrono::milliseconds timeout);

// Joins the training workers of the TF_CONFIG cluster `resolver` describes (the chief serves the
// rendezvous; Gloo carries the collectives). Call only when TF_CONFIG is set and no MPI launcher
// started the process. Throws ValueError for a cluster a collective strategy cannot use and
// DeviceError when a peer cannot be reached within `timeout` (naming it) or this build has no Gloo.
std::shared_ptr<WorkerGroup> join_tf_config_group(const TFConfigClusterResolver& resolver,
                                                  std::chrono::milliseconds timeout);

}  // namespace kerascpp::distribute
