// BlockLedger: the caching device allocator's record of which blocks recorded device work (CUDA
// graphs, recorded_work.cpp) may still touch. Host-only, so it is unit-tested on machines without
// a GPU (tests/test_block_ledger.cpp); one per device pool, guarded by the pool's lock.
//
// A recording replays the device work captured between open() and close() on the addresses that
// work used then. So:
//   - every block obtained while the recording is open is its own, and so is every block given
//     back meanwhile (the captured work may have read it before): neither goes back to the free
//     lists until the recording is dropped, whoever gives it back;
//   - a block that existed when the recording closed (weights, the backend's scratch buffers) and
//     is given back later makes the recording stale: its owner must not replay it again (the
//     engine records anew). Blocks obtained after the close cannot be in the recording, so their
//     comings and goings (the next batch's upload, a training step's temporaries) leave it valid.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kerascpp::cuda {

class BlockLedger {
 public:
  struct Recording {
    std::uint64_t closed_at = 0;  // the ledger's sequence number when the capture ended
    bool stale = false;           // a block from before closed_at was given back since
    std::vector<void*> kept;      // the blocks it keeps out of the free lists
  };
  using Blocks = std::vector<std::pair<void*, std::size_t>>;

  // Block p (of `size` bytes, its size class) was handed out.
  void obtained(void* p, std::size_t size) {
    Entry& e = blocks_[p];
    e = Entry{++sequence_, size, open_, false};
    if (open_) open_->kept.push_back(p);
  }

  // Block p was given back. True when it goes to the free lists now; false when a recording keeps it.
  bool released(void* p) {
    auto it = blocks_.find(p);
    if (it == blocks_.end()) return true;  // not handed out by this pool: the caller's business
    Entry& e = it->second;
    if (e.owner) {  // a recording's own block: it stays reserved until that recording is dropped
      e.released = true;
      return false;
    }
    if (open_) {  // the capture may have read it: the open recording keeps it
      e.owner = open_;
      e.released = true;
      open_->kept.push_back(p);
      return false;
    }
    mark_stale(e.obtained_at, nullptr);
    blocks_.erase(it);
    return true;
  }

  // Work captured from now on goes into `r`. One recording is open at a time per device: false
  // (and nothing changes) while another one is.
  bool open(Recording* r) {
    if (open_) return false;
    open_ = r;
    return true;
  }
  // The capture into the open recording ended (successfully or not).
  void close() {
    if (!open_) return;
    open_->closed_at = sequence_;
    live_.push_back(open_);
    open_ = nullptr;
  }

  // Forgets r (its work will not run again: the caller has waited for its last replay). Returns
  // its blocks that were given back, for the free lists; its blocks still in use go back the
  // usual way when they are given back. Other recordings that may have used a returned block go
  // stale.
  Blocks drop(Recording* r) {
    if (open_ == r) close();
    live_.erase(std::remove(live_.begin(), live_.end(), r), live_.end());
    Blocks free;
    for (void* p : r->kept) {
      auto it = blocks_.find(p);
      if (it == blocks_.end() || it->second.owner != r) continue;
      if (it->second.released) {
        mark_stale(it->second.obtained_at, r);
        free.emplace_back(p, it->second.size);
        blocks_.erase(it);
      } else {
        it->second.owner = nullptr;
      }
    }
    r->kept.clear();
    return free;
  }

  bool is_open() const { return open_ != nullptr; }
  std::size_t live_recordings() const { return live_.size(); }

 private:
  struct Entry {
    std::uint64_t obtained_at = 0;
    std::size_t size = 0;
    Recording* owner = nullptr;  // the recording keeping it, if any
    bool released = false;       // given back while a recording kept it
  };

  // A block obtained at `obtained_at` leaves use: every recording closed after that may have used it.
  void mark_stale(std::uint64_t obtained_at, const Recording* except) {
    for (Recording* r : live_)
      if (r != except && obtained_at <= r->closed_at) r->stale = true;
  }

  std::unordered_map<void*, Entry> blocks_;
  std::vector<Recording*> live_;
  Recording* open_ = nullptr;
  std::uint64_t sequence_ = 0;
};

}  // namespace kerascpp::cuda
