// The CUDA allocator's ledger of blocks that recorded device work may touch
// (src/backend/cuda/block_ledger.hpp): host-only, so tested in every build. The pointers are fake
// addresses; nothing is dereferenced.
#include <doctest/doctest.h>

#include <cstdint>

#include "backend/cuda/block_ledger.hpp"

namespace kc = kerascpp::cuda;

namespace {

void* block(std::uintptr_t n) { return reinterpret_cast<void*>(n * 4096); }

}  // namespace

TEST_CASE("block ledger: with no recording every given-back block goes to the free lists") {
  kc::BlockLedger ledger;
  ledger.obtained(block(1), 512);
  CHECK(ledger.released(block(1)));
  CHECK(ledger.released(block(2)));  // never handed out by this pool: not the ledger's business
}

TEST_CASE("block ledger: a recording keeps the blocks its capture obtained or gave back") {
  kc::BlockLedger ledger;
  ledger.obtained(block(1), 512);  // before the capture (a weight, say)
  kc::BlockLedger::Recording r;
  ledger.open(&r);
  ledger.obtained(block(2), 1024);         // an activation of the captured forward
  CHECK_FALSE(ledger.released(block(2)));  // freed during the capture: kept
  CHECK_FALSE(ledger.released(block(1)));  // an older block freed during the capture: kept too
  ledger.obtained(block(3), 256);          // the output, still in use after the capture
  ledger.close();
  CHECK_FALSE(r.stale);
  CHECK_FALSE(ledger.released(block(3)));  // the recording's own: kept after the capture as well
  CHECK(ledger.live_recordings() == 1);

  const auto freed = ledger.drop(&r);
  CHECK(freed.size() == 3);  // all three were given back: free again now
  CHECK(ledger.live_recordings() == 0);
}

TEST_CASE("block ledger: a recording goes stale when a block from before its capture is freed") {
  kc::BlockLedger ledger;
  ledger.obtained(block(1), 512);  // a scratch buffer the forward uses
  kc::BlockLedger::Recording r;
  ledger.open(&r);
  ledger.obtained(block(2), 512);
  ledger.close();

  ledger.obtained(block(3), 512);  // after the capture: the next batch's upload
  CHECK(ledger.released(block(3)));
  CHECK_FALSE(r.stale);  // a newer block cannot be in the recording

  CHECK(ledger.released(block(1)));  // the scratch buffer regrown: its old block freed
  CHECK(r.stale);
  ledger.drop(&r);
}

TEST_CASE("block ledger: a block still in use when its recording is dropped goes back the usual way") {
  kc::BlockLedger ledger;
  kc::BlockLedger::Recording a;
  ledger.open(&a);
  ledger.obtained(block(1), 512);  // in use after the capture and after the drop
  ledger.close();
  CHECK(ledger.drop(&a).empty());

  kc::BlockLedger::Recording b;
  ledger.open(&b);
  ledger.close();
  CHECK(ledger.released(block(1)));  // no longer a's: free now, and b (which may use it) is stale
  CHECK(b.stale);
  ledger.drop(&b);
}

TEST_CASE("block ledger: dropping one recording makes the others that may share its blocks stale") {
  kc::BlockLedger ledger;
  kc::BlockLedger::Recording a, b;
  ledger.open(&a);
  ledger.obtained(block(1), 512);  // a's output, read by b's capture below
  ledger.close();
  ledger.open(&b);
  ledger.close();
  CHECK_FALSE(ledger.released(block(1)));  // a keeps it
  CHECK_FALSE(b.stale);
  CHECK(ledger.drop(&a).size() == 1);  // back to the free lists: b may have used it
  CHECK(b.stale);
  ledger.drop(&b);
}

TEST_CASE("block ledger: one recording is open at a time") {
  kc::BlockLedger ledger;
  kc::BlockLedger::Recording a, b;
  CHECK(ledger.open(&a));
  CHECK(ledger.is_open());
  CHECK_FALSE(ledger.open(&b));  // a second capture on the device is refused, a stays open
  ledger.obtained(block(1), 512);
  CHECK_FALSE(ledger.released(block(1)));
  ledger.close();
  CHECK_FALSE(ledger.is_open());
  CHECK(ledger.drop(&a).size() == 1);
}

TEST_CASE("block ledger: a capture that failed is dropped like any recording") {
  kc::BlockLedger ledger;
  kc::BlockLedger::Recording r;
  ledger.open(&r);
  ledger.obtained(block(1), 512);
  CHECK_FALSE(ledger.released(block(1)));
  const auto freed = ledger.drop(&r);  // dropped while open: closes first
  CHECK(freed.size() == 1);
  CHECK(ledger.live_recordings() == 0);
  ledger.obtained(block(1), 512);  // handed out again: an ordinary block
  CHECK(ledger.released(block(1)));
}
