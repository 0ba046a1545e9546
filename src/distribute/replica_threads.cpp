#include "distribute/replica_threads.hpp"

#include <exception>
#include <mutex>

#include "distribute/abortable_barrier.hpp"
#include "distribute/worker_pool.hpp"

namespace kerascpp::distribute {

ReplicaThreads::ReplicaThreads(int num_replicas, std::function<void()> abort_peers)
    : num_replicas_(num_replicas), abort_peers_(std::move(abort_peers)) {}

void ReplicaThreads::run(const std::function<void(int)>& job) {
  std::mutex mu;
  std::exception_ptr first_error;
  WorkerPool::instance().run(num_replicas_, [&](int replica) {
    std::exception_ptr err;
    try {
      job(replica);
    } catch (const detail::ReplicaAborted&) {
      // Released because another replica failed; that replica's error is the one reported.
    } catch (...) {
      err = std::current_exception();
      abort_peers_();
    }
    if (!err) return;
    std::lock_guard lock(mu);
    // Hand the exception over (not a copy): only the calling thread then owns and frees it.
    if (!first_error) first_error = std::move(err);
    err = nullptr;
  });
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace kerascpp::distribute
