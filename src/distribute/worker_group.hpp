// WorkerGroup: the processes of a multi-worker job as a strategy sees them. Implemented over MPI
// (src/distribute/mpi/) when the library is built with it; src/distribute/no_mpi.cpp stands in
// otherwise and explains how to get MPI.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "backend/gpu_support.hpp"

namespace kerascpp::distribute {

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
};

// True when this process was started by an MPI launcher (mpirun, mpiexec, srun with PMI/PMIx).
bool launched_by_mpi_launcher();

// Joins the job's workers (initialises MPI once per process; the group lives until exit). Call
// only when launched_by_mpi_launcher(). `timeout`: the stall bound of every collective wait.
// Throws DeviceError when MPI cannot start, or when this build has no MPI (saying how to get it).
std::shared_ptr<WorkerGroup> join_worker_group(std::chrono::milliseconds timeout);

}  // namespace kerascpp::distribute
