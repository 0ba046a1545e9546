#include "distribute/mpi/mpi_world.hpp"

#include <fmt/format.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "check.hpp"
#include "distribute/collectives/multi_worker.hpp"

namespace kerascpp::distribute {
namespace {

std::shared_ptr<MpiWorld>& the_world() {
  static std::shared_ptr<MpiWorld> world;
  return world;
}

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, static_cast<std::size_t>(len));
}

// What this worker is waiting on, for the SIGTERM handler: mpirun ends a job whose worker died
// by sending SIGTERM to the others, which would otherwise vanish without a word.
char g_waiting_on[512] = "(not in a collective)";
int g_rank = 0;

void on_launcher_sigterm(int) {
  char msg[768];
  // snprintf is not on POSIX's async-signal-safe list, but glibc's does not allocate for %d and %s.
  int n = std::snprintf(msg, sizeof msg,
                        "MultiWorkerMirroredStrategy: worker %d was terminated by the MPI launcher while %s: another "
                        "worker failed (the launcher names it). Rerun the job to resume from the last backup "
                        "(BackupAndRestore)\n",
                        g_rank, g_waiting_on);
  if (n > 0) (void)!write(2, msg, static_cast<std::size_t>(std::min(n, static_cast<int>(sizeof msg) - 1)));
  signal(SIGTERM, SIG_DFL);
  raise(SIGTERM);
}

// Only when nobody else handles SIGTERM: a program's own handler stays in charge.
void install_sigterm_report(int rank) {
  struct sigaction old{};
  sigaction(SIGTERM, nullptr, &old);
  if (old.sa_handler != SIG_DFL) return;
  g_rank = rank;
  struct sigaction sa{};
  sa.sa_handler = &on_launcher_sigterm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
}

void set_waiting_on(const char* text) { std::strncpy(g_waiting_on, text, sizeof g_waiting_on - 1); }

// MPI counts are ints: longer buffers go as several pieces.
constexpr std::int64_t kMaxPiece = INT_MAX / 2;

struct MpiReduction final : PendingReduction {
  std::vector<MPI_Request> requests;
};

}  // namespace

MpiWorld::MpiWorld(int rank, int size, std::chrono::milliseconds timeout)
    : rank_(rank), size_(size), timeout_ms_(timeout.count()) {
  MPI_Comm_dup(MPI_COMM_WORLD, &data_comm_);
  MPI_Comm_dup(MPI_COMM_WORLD, &notice_comm_);
  MPI_Comm_set_errhandler(data_comm_, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(notice_comm_, MPI_ERRORS_RETURN);
  arrivals_ = std::make_unique<PeerArrivals>(notice_comm_, rank_, size_);
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &node_size_);
    MPI_Comm_free(&node);
  }
}

std::shared_ptr<MpiWorld> MpiWorld::join(std::chrono::milliseconds timeout) {
  static std::mutex join_mu;
  std::lock_guard lock(join_mu);
  auto& world = the_world();
  if (world) {
    world->timeout_ms_ = timeout.count();  // the newest strategy's bound applies
    return world;
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    KERASCPP_CHECK_DEVICE(rc == MPI_SUCCESS, "MultiWorkerMirroredStrategy: MPI_Init_thread failed: {}",
                          mpi_error_string(rc));
    KERASCPP_CHECK_DEVICE(provided >= MPI_THREAD_SERIALIZED,
                          "MultiWorkerMirroredStrategy: this MPI offers thread level {} but replica threads need "
                          "MPI_THREAD_SERIALIZED; use an MPI built with thread support (Debian's OpenMPI has it)",
                          provided);
    std::atexit(&MpiWorld::at_exit);  // MPI ends with the process, after the last strategy
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  world.reset(new MpiWorld(rank, size, timeout));
  install_sigterm_report(rank);
  return world;
}

void MpiWorld::at_exit() {
  auto& world = the_world();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (world && !world->failure_.empty()) {
    // A peer is gone or stuck: MPI_Finalize would wait for it. End the whole job instead.
    MPI_Abort(MPI_COMM_WORLD, 1);
    return;
  }
  if (world) {
    world->arrivals_->close();
    MPI_Comm_free(&world->notice_comm_);
    MPI_Comm_free(&world->data_comm_);
  }
  MPI_Finalize();
}

void MpiWorld::check_usable() const {
  KERASCPP_CHECK_STATE(failure_.empty(),
                       "MultiWorkerMirroredStrategy: the job failed earlier ({}); the workers are out of step and this "
                       "process must end (it does so with MPI_Abort at exit)",
                       failure_);
}

void MpiWorld::poison(const std::string& why) {
  std::lock_guard lock(mu_);
  if (failure_.empty()) failure_ = why;
}

void MpiWorld::fail(const std::string& message) {
  if (failure_.empty()) failure_ = message;
  throw DeviceError(message);
}

std::int64_t MpiWorld::announce() {
  std::int64_t seq = ++collectives_;
  arrivals_->announce(seq);
  return seq;
}

std::unique_ptr<PendingReduction> MpiWorld::start_all_reduce_sum(float* data, std::int64_t count,
                                                                 const std::string& what) {
  std::lock_guard lock(mu_);
  check_usable();
  announce();
  auto pending = std::make_unique<MpiReduction>();
  auto& requests = pending->requests;
  for (std::int64_t off = 0; off < count; off += kMaxPiece) {
    int n = static_cast<int>(std::min(kMaxPiece, count - off));
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, data + off, n, MPI_FLOAT, MPI_SUM, data_comm_, &r);
    if (rc != MPI_SUCCESS)
      fail(fmt::format("MultiWorkerMirroredStrategy: worker {} could not start the all-reduce of {}: {}", rank_, what,
                       mpi_error_string(rc)));
    requests.push_back(r);
  }
  return pending;
}

void MpiWorld::wait(PendingReduction& pending, const std::string& what) {
  wait_requests(static_cast<MpiReduction&>(pending).requests, what);
}

void MpiWorld::wait_requests(std::vector<MPI_Request>& requests, const std::string& what) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto bound = std::chrono::milliseconds(timeout_ms_.load());
  std::unique_lock lock(mu_);
  const std::int64_t seq = collectives_;  // the newest collective this worker started
  set_waiting_on(fmt::format("waiting for {} (collective #{})", what, seq).c_str());
  struct Done {
    ~Done() { set_waiting_on("computing between collectives"); }
  } done_waiting;
  for (int polls = 0;; ++polls) {
    int done = 0;
    int rc = MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS)
      fail(
          fmt::format("MultiWorkerMirroredStrategy: worker {} lost a peer while waiting for {}: {} (ranks not "
                      "arrived: {}); a worker died. The job stops; rerun it to resume from the last backup "
                      "(BackupAndRestore)",
                      rank_, what, mpi_error_string(rc), [&] {
                        std::string s;
                        for (auto [p, at] : arrivals_->behind(seq)) s += (s.empty() ? "" : ", ") + std::to_string(p);
                        return s.empty() ? std::string("unknown") : s;
                      }()));
    if (done) return;
    arrivals_->poll();
    auto waited = clock::now() - start;
    if (waited > bound) {
      std::string missing;
      for (auto [p, at] : arrivals_->behind(seq))
        missing += fmt::format("{}{} (last at collective #{})", missing.empty() ? "" : ", ", p, at);
      fail(fmt::format(
          "MultiWorkerMirroredStrategy: worker {} waited {} s for {} (collective #{}) and worker(s) {} did not "
          "arrive: a worker died or is stalled (stopped, swapping, deadlocked). The job stops; rerun it to resume "
          "from the last backup (BackupAndRestore). If steps legitimately take longer, raise "
          "StrategyOptions::collective_timeout or KERASCPP_COLLECTIVE_TIMEOUT (seconds)",
          rank_, std::chrono::duration_cast<std::chrono::seconds>(bound).count(), what, seq,
          missing.empty() ? std::string("(none known: the collective itself stalled)") : missing));
    }
    // Spin briefly (a reduction over shared memory finishes in microseconds), then sleep so a
    // long wait does not steal the cores the other replicas compute on.
    lock.unlock();
    if (polls < 200) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(polls < 2000 ? 20 : 200));
    lock.lock();
  }
}

void MpiWorld::all_reduce_sum(float* data, std::int64_t count, const char* what) {
  auto pending = start_all_reduce_sum(data, count, what);
  wait(*pending, what);
}

std::vector<double> MpiWorld::all_gather(const std::vector<double>& mine, const char* what) {
  std::vector<double> all(mine.size() * static_cast<std::size_t>(size_));
  std::vector<MPI_Request> requests(1, MPI_REQUEST_NULL);
  {
    std::lock_guard lock(mu_);
    check_usable();
    announce();
    int rc = MPI_Iallgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                            static_cast<int>(mine.size()), MPI_DOUBLE, data_comm_, &requests[0]);
    if (rc != MPI_SUCCESS)
      fail(fmt::format("MultiWorkerMirroredStrategy: worker {} could not gather {}: {}", rank_, what,
                       mpi_error_string(rc)));
  }
  wait_requests(requests, what);
  return all;
}

void MpiWorld::broadcast(std::vector<char>& bytes, const char* what) {
  std::vector<MPI_Request> requests(1, MPI_REQUEST_NULL);
  {
    std::lock_guard lock(mu_);
    check_usable();
    announce();
    int rc = MPI_Ibcast(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, 0, data_comm_, &requests[0]);
    if (rc != MPI_SUCCESS)
      fail(fmt::format("MultiWorkerMirroredStrategy: worker {} could not broadcast {}: {}", rank_, what,
                       mpi_error_string(rc)));
  }
  wait_requests(requests, what);
}

std::unique_ptr<detail::DeviceCollectives> MpiWorld::make_cpu_collective(int local_replicas) {
  return std::make_unique<MultiWorkerCollective>(local_replicas, shared_from_this());
}

std::shared_ptr<WorkerGroup> join_worker_group(std::chrono::milliseconds timeout) { return MpiWorld::join(timeout); }

}  // namespace kerascpp::distribute
