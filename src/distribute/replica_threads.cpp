#include "distribute/replica_threads.hpp"

#include "distribute/abortable_barrier.hpp"

namespace kerascpp::distribute {

ReplicaThreads::ReplicaThreads(int num_replicas, std::function<void()> abort_peers)
    : abort_peers_(std::move(abort_peers)) {
  for (int r = 0; r < num_replicas; ++r) workers_.emplace_back([this, r] { worker_loop(r); });
}

ReplicaThreads::~ReplicaThreads() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ReplicaThreads::worker_loop(int replica) {
  std::size_t seen = 0;
  for (;;) {
    const std::function<void(int)>* job;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [&] { return stopping_ || job_generation_ != seen; });
      if (stopping_) return;
      seen = job_generation_;
      job = job_;
    }
    std::exception_ptr err;
    try {
      (*job)(replica);
    } catch (const detail::ReplicaAborted&) {
      // Released because another replica failed; that replica's error is the one reported.
    } catch (...) {
      err = std::current_exception();
      abort_peers_();
    }
    std::lock_guard lock(mu_);
    // Hand the exception over (not a copy): only the calling thread then owns and frees it.
    if (err && !first_error_) first_error_ = std::move(err);
    err = nullptr;
    if (--pending_ == 0) done_cv_.notify_all();
  }
}

void ReplicaThreads::run(const std::function<void(int)>& job) {
  std::exception_ptr err;
  {
    std::unique_lock lock(mu_);
    job_ = &job;
    pending_ = static_cast<int>(workers_.size());
    first_error_ = nullptr;
    ++job_generation_;
    work_cv_.notify_all();
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    err = std::move(first_error_);
    first_error_ = nullptr;
    job_ = nullptr;
  }
  if (err) std::rethrow_exception(err);
}

}  // namespace kerascpp::distribute
