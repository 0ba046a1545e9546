#include "distribute/gloo/gloo_world.hpp"

#include <fmt/format.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <cstdlib>
#include <iostream>
#include <optional>

#include "check.hpp"
#include "distribute/collectives/multi_worker.hpp"

namespace kerascpp::distribute {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kHeartbeatEvery{500};
// A task whose last heartbeat is older than this is named as lost (several missed beats, so a
// busy machine's scheduling hiccup does not make a false accusation).
constexpr milliseconds kHeartbeatStale{2500};

std::string host_of(const std::string& address) {
  std::string host = address.substr(0, address.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return host;
}

// Gloo's rendezvous::Store over the coordination service, every wait bounded.
class CoordinationStore final : public gloo::rendezvous::Store {
 public:
  CoordinationStore(CoordinationClient& client, milliseconds timeout) : client_(client), timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override { client_.set(key, data, timeout_); }
  std::vector<char> get(const std::string& key) override { return client_.get(key, timeout_); }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const milliseconds& timeout) override {
    const auto bound = timeout.count() > 0 ? std::min(timeout, timeout_) : timeout_;
    for (const auto& key : keys) client_.get(key, bound);
  }

 private:
  CoordinationClient& client_;
  milliseconds timeout_;
};

std::mutex join_mu;

}  // namespace

struct GlooWorld::Job {
  std::function<void()> op;
  std::string what;
  std::int64_t seq = 0;
  bool done = false;
  std::string error;  // Gloo's exception, when it threw
};

struct GlooReduction final : PendingReduction {
  explicit GlooReduction(std::shared_ptr<void> job) : job(std::move(job)) {}
  std::shared_ptr<void> job;
};

std::shared_ptr<GlooWorld> GlooWorld::join(const TFConfigClusterResolver& resolver, milliseconds timeout) {
  std::lock_guard lock(join_mu);
  // One world per process, never destroyed: a strategy may end while another starts, and the
  // rendezvous happens once. Its threads stop at exit (stop(), registered with atexit after gRPC and
  // Gloo started, so it runs before their statics are destroyed).
  static auto* world = new std::shared_ptr<GlooWorld>();
  if (*world) {
    (*world)->timeout_ms_ = timeout.count();
    return *world;
  }
  world->reset(new GlooWorld(resolver, timeout));
  std::atexit([] { (*world)->stop(); });
  return *world;
}

void GlooWorld::stop() {
  bool failed = false;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    failed = !failure_.empty();
  }
  cv_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();  // one RPC at most, bounded
  // After a failure a Gloo operation may still be waiting on the lost peer: do not wait for it.
  if (communicator_.joinable()) failed ? communicator_.detach() : communicator_.join();
  if (!failed) server_.reset();  // the chief's service: every worker is done with it
}

GlooWorld::GlooWorld(const TFConfigClusterResolver& resolver, milliseconds timeout)
    : resolver_(resolver), timeout_ms_(timeout.count()) {
  resolver_.check_for_collective_strategy("MultiWorkerMirroredStrategy");
  rank_ = resolver_.worker_rank();
  size_ = resolver_.num_workers();
  const std::string my_address = resolver_.task_address(resolver_.task_type(), resolver_.task_id());
  const std::string my_host = host_of(my_address);
  on_this_machine_ = 0;
  for (int r = 0; r < size_; ++r) on_this_machine_ += host_of(resolver_.worker_address(r)) == my_host ? 1 : 0;
  const auto [coord_type, coord_index] = resolver_.coordinator_task();
  const std::string coordinator = resolver_.task_address(coord_type, coord_index);
  const std::string who = fmt::format("{}:{}", coord_type, coord_index);
  if (resolver_.is_chief()) server_ = std::make_unique<CoordinationServer>(coordinator, size_);
  client_ = std::make_unique<CoordinationClient>(coordinator, who);

  // Gloo listens on this task's TF_CONFIG host (an ephemeral port) and nowhere else.
  gloo::transport::tcp::attr attr(my_host.c_str());
  std::shared_ptr<gloo::transport::Device> device;
  try {
    device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    KERASCPP_CHECK_DEVICE(false,
                          "MultiWorkerMirroredStrategy: {} could not open Gloo's TCP transport on its TF_CONFIG host "
                          "'{}' ({}); the host must be an address of this machine",
                          resolver_.describe_worker(rank_), my_host, e.what());
  }
  CoordinationStore store(*client_, timeout);
  gloo::rendezvous::PrefixStore mesh("kerascpp/gloo", store);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank_, size_);
  context->setTimeout(timeout);
  try {
    context->connectFullMesh(mesh, device);
  } catch (const kerascpp::Error&) {
    throw;  // the store's own error names the coordinator
  } catch (const std::exception& e) {
    KERASCPP_CHECK_DEVICE(false,
                          "MultiWorkerMirroredStrategy: {} could not connect to the other workers within {} s ({}); "
                          "start every task of TF_CONFIG's cluster, and check that their hosts reach each other",
                          resolver_.describe_worker(rank_),
                          std::chrono::duration_cast<std::chrono::seconds>(timeout).count(), e.what());
  }
  context_ = context;
  communicator_ = std::thread([this] { communicate(); });
  heartbeat_ = std::thread([this] { send_heartbeats(); });
  std::cerr << fmt::format("MultiWorkerMirroredStrategy: {} joined {} workers of the TF_CONFIG cluster (Gloo)\n",
                           resolver_.describe_worker(rank_), size_);
}

GlooWorld::~GlooWorld() { stop(); }

void GlooWorld::send_heartbeats() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    try {
      client_->heartbeat(rank_, milliseconds(timeout_ms_.load()));
    } catch (const kerascpp::Error&) {
      // Reported when a collective fails (lost_tasks asks the coordinator again and names it).
    }
    lock.lock();
    cv_.wait_for(lock, kHeartbeatEvery, [&] { return stopping_; });
  }
}

void GlooWorld::communicate() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping
    auto job = queue_.front();
    queue_.pop_front();
    lock.unlock();
    std::string error;
    try {
      job->op();
    } catch (const std::exception& e) {  // gloo::IoException: a peer closed or a timeout expired
      error = e.what();
    }
    lock.lock();
    job->done = true;
    job->error = std::move(error);
    cv_.notify_all();
  }
}

void GlooWorld::check_usable() {
  KERASCPP_CHECK_STATE(failure_.empty(),
                       "MultiWorkerMirroredStrategy: the job failed earlier ({}); the workers are out of step and "
                       "this process must end; rerun the job to resume from the last backup (BackupAndRestore)",
                       failure_);
}

std::shared_ptr<GlooWorld::Job> GlooWorld::enqueue(std::function<void()> op, std::string what) {
  std::lock_guard lock(mu_);
  check_usable();
  auto job = std::make_shared<Job>();
  job->op = std::move(op);
  job->what = std::move(what);
  job->seq = ++started_;
  queue_.push_back(job);
  cv_.notify_all();
  return job;
}

std::string GlooWorld::lost_tasks() {
  // A peer killed a moment ago may still look alive: give its heartbeats time to go stale.
  const auto until = Clock::now() + kHeartbeatStale + kHeartbeatEvery;
  for (;;) {
    std::vector<std::int64_t> ages;
    try {
      ages = client_->liveness(std::chrono::seconds(2));
    } catch (const kerascpp::Error&) {
      const auto [type, index] = resolver_.coordinator_task();
      return fmt::format("{}:{} ({}, the coordinator: it no longer answers)", type, index,
                         resolver_.task_address(type, index));
    }
    std::string lost;
    for (int r = 0; r < static_cast<int>(ages.size()); ++r)
      if (r != rank_ &&
          (ages[static_cast<std::size_t>(r)] < 0 || ages[static_cast<std::size_t>(r)] > kHeartbeatStale.count()))
        lost += fmt::format("{}{}", lost.empty() ? "" : ", ", resolver_.describe_worker(r));
    if (!lost.empty()) return lost;
    if (Clock::now() > until) return "(none known: every task still sends heartbeats, so the collective itself failed)";
    std::this_thread::sleep_for(kHeartbeatEvery);
  }
}

void GlooWorld::fail(const std::string& what, std::int64_t seq, const std::string& cause) {
  const std::string message = fmt::format(
      "MultiWorkerMirroredStrategy: {} lost its peers in {} (collective #{}): task(s) {} died or stalled (stopped, "
      "swapping, deadlocked) [{}]. The job stops; rerun it to resume from the last backup (BackupAndRestore). If "
      "steps legitimately take longer, raise StrategyOptions::collective_timeout or KERASCPP_COLLECTIVE_TIMEOUT "
      "(seconds)",
      resolver_.describe_worker(rank_), what, seq, lost_tasks(), cause);
  poison(message);
  throw DeviceError(message);
}

void GlooWorld::poison(const std::string& why) {
  std::lock_guard lock(mu_);
  if (failure_.empty()) failure_ = why;
  for (auto& job : queue_) job->done = true, job->error = "cancelled: " + why;  // never run after a failure
  queue_.clear();
  cv_.notify_all();
}

std::unique_ptr<PendingReduction> GlooWorld::start_all_reduce_sum(float* data, std::int64_t count,
                                                                  const std::string& what) {
  auto job = enqueue(
      [this, data, count] {
        gloo::AllreduceOptions opts(context_);
        opts.setOutput(data, static_cast<std::size_t>(count));
        opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
        opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, std::size_t)>(&gloo::sum<float>));
        opts.setTimeout(milliseconds(timeout_ms_.load()));
        if (count > 0) gloo::allreduce(opts);
      },
      what);
  return std::make_unique<GlooReduction>(job);
}

void GlooWorld::wait(PendingReduction& pending, const std::string& what) {
  auto job = std::static_pointer_cast<Job>(static_cast<GlooReduction&>(pending).job);
  // Gloo's own timeout ends a stalled operation; this bound is the backstop should it not.
  const auto bound = milliseconds(timeout_ms_.load()) + std::chrono::seconds(5);
  std::unique_lock lock(mu_);
  const bool done = cv_.wait_for(lock, bound, [&] { return job->done; });
  const std::string error =
      done ? job->error
           : fmt::format("no answer within {} s", std::chrono::duration_cast<std::chrono::seconds>(bound).count());
  lock.unlock();
  if (!error.empty()) fail(what, job->seq, error);
}

void GlooWorld::all_reduce_sum(float* data, std::int64_t count, const char* what) {
  auto pending = start_all_reduce_sum(data, count, what);
  wait(*pending, what);
}

std::vector<double> GlooWorld::all_gather(const std::vector<double>& mine, const char* what) {
  // The buffers are the job's own: a job abandoned after a failure may still be running.
  auto input = std::make_shared<std::vector<double>>(mine);
  auto all = std::make_shared<std::vector<double>>(mine.size() * static_cast<std::size_t>(size_));
  auto job = enqueue(
      [this, input, all] {
        gloo::AllgatherOptions opts(context_);
        opts.setInput(input->data(), input->size());
        opts.setOutput(all->data(), all->size());
        opts.setTimeout(milliseconds(timeout_ms_.load()));
        if (!input->empty()) gloo::allgather(opts);
      },
      what);
  GlooReduction pending(job);
  wait(pending, what);
  return *all;
}

void GlooWorld::broadcast(std::vector<char>& bytes, const char* what) {
  auto buffer = std::make_shared<std::vector<char>>(bytes);  // the job's own (see all_gather)
  auto job = enqueue(
      [this, buffer] {
        gloo::BroadcastOptions opts(context_);
        opts.setOutput(buffer->data(), buffer->size());
        opts.setRoot(0);
        opts.setTimeout(milliseconds(timeout_ms_.load()));
        if (!buffer->empty()) gloo::broadcast(opts);
      },
      what);
  GlooReduction pending(job);
  wait(pending, what);
  bytes = *buffer;
}

std::unique_ptr<detail::DeviceCollectives> GlooWorld::make_cpu_collective(int local_replicas) {
  return std::make_unique<MultiWorkerCollective>(local_replicas, shared_from_this());
}

std::shared_ptr<WorkerGroup> join_tf_config_group(const TFConfigClusterResolver& resolver, milliseconds timeout) {
  return GlooWorld::join(resolver, timeout);
}

}  // namespace kerascpp::distribute
