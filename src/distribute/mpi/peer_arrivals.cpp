#include "distribute/mpi/peer_arrivals.hpp"

namespace kerascpp::distribute {
namespace {
constexpr int kNoticeTag = 17;
}

PeerArrivals::PeerArrivals(MPI_Comm comm, int rank, int size)
    : comm_(comm),
      rank_(rank),
      size_(size),
      latest_(static_cast<std::size_t>(size), -1),
      incoming_(static_cast<std::size_t>(size), -1),
      receives_(static_cast<std::size_t>(size), MPI_REQUEST_NULL) {
  for (int p = 0; p < size_; ++p)
    if (p != rank_) post_receive(p);
}

void PeerArrivals::post_receive(int peer) {
  auto i = static_cast<std::size_t>(peer);
  MPI_Irecv(&incoming_[i], 1, MPI_INT64_T, peer, kNoticeTag, comm_, &receives_[i]);
}

void PeerArrivals::announce(std::int64_t seq) {
  // Drop the sends that completed (notices are tiny: they complete as soon as they are buffered).
  while (!sent_.empty()) {
    int done = 0;
    MPI_Test(&sent_.front().request, &done, MPI_STATUS_IGNORE);
    if (!done) break;
    sent_.pop_front();
  }
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    sent_.push_back({seq, MPI_REQUEST_NULL});
    MPI_Isend(&sent_.back().value, 1, MPI_INT64_T, p, kNoticeTag, comm_, &sent_.back().request);
  }
}

void PeerArrivals::poll() {
  for (int p = 0; p < size_; ++p) {
    auto i = static_cast<std::size_t>(p);
    while (receives_[i] != MPI_REQUEST_NULL) {
      int done = 0;
      if (MPI_Test(&receives_[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done) break;
      latest_[i] = incoming_[i];  // one peer's notices arrive in order (MPI does not overtake)
      post_receive(p);
    }
  }
}

std::vector<std::pair<int, std::int64_t>> PeerArrivals::behind(std::int64_t seq) {
  poll();
  std::vector<std::pair<int, std::int64_t>> out;
  for (int p = 0; p < size_; ++p)
    if (p != rank_ && latest_[static_cast<std::size_t>(p)] < seq)
      out.emplace_back(p, latest_[static_cast<std::size_t>(p)]);
  return out;
}

void PeerArrivals::close() {
  for (auto& r : receives_)
    if (r != MPI_REQUEST_NULL) {
      MPI_Cancel(&r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
  for (auto& s : sent_) MPI_Wait(&s.request, MPI_STATUS_IGNORE);
  sent_.clear();
}

}  // namespace kerascpp::distribute
