// PeerArrivals: who has reached which cross-worker collective. Before each collective a worker
// sends its sequence number to every peer (a tiny non-blocking message on a communicator of its
// own); a worker stuck waiting can then name the ranks that never arrived instead of hanging
// silently. Costs (workers - 1) small messages per collective; all calls under MpiWorld's lock.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <deque>
#include <vector>

namespace kerascpp::distribute {

class PeerArrivals {
 public:
  PeerArrivals(MPI_Comm comm, int rank, int size);
  // Tells every peer this worker reached collective `seq`.
  void announce(std::int64_t seq);
  // Takes in the notices that have arrived (call while waiting).
  void poll();
  // The peers whose latest notice is below `seq`, with that notice (-1: none yet).
  std::vector<std::pair<int, std::int64_t>> behind(std::int64_t seq);
  // Cancels the receives still posted (before MPI_Finalize).
  void close();

 private:
  void post_receive(int peer);

  MPI_Comm comm_;
  int rank_, size_;
  std::vector<std::int64_t> latest_, incoming_;
  std::vector<MPI_Request> receives_;
  struct Sent {
    std::int64_t value;
    MPI_Request request;
  };
  std::deque<Sent> sent_;  // deque: the values' addresses stay put while their sends are in flight
};

}  // namespace kerascpp::distribute
