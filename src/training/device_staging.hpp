// DeviceStaging: batches on their way to GPU replicas. fit() looks one batch ahead and stages it:
// each replica's rows go through pinned memory on its GPU's copy stream while the current step
// runs. On CPU replicas nothing is staged and replica_rows is a zero-copy view.
#pragma once
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "backend/gpu_support.hpp"
#include "kerascpp/data/dataset.hpp"
#include "kerascpp/distribute/strategy.hpp"

namespace kerascpp::detail {

class DeviceStaging {
 public:
  // compile(): the replicas batches go to from now on; forgets whatever was staged for others.
  void set_strategy(distribute::Strategy strategy);

  // On GPU replicas: an iterator that stays one batch ahead of `it` and stages that batch;
  // elsewhere `it` itself. Whatever it staged is forgotten when it goes away.
  std::unique_ptr<Dataset::Iterator> with_device_lookahead(std::unique_ptr<Dataset::Iterator> it);
  // Replica ctx's rows [begin, end) of `global` on its device: the staged upload when there is one.
  Tensor replica_rows(ReplicaContext& ctx, const Tensor& global, std::int64_t begin, std::int64_t end) const;
  // Forgets the uploads of the batch whose first input is `x` once its step has run.
  void unstage(const Tensor& x);

 private:
  friend class DeviceLookahead;
  bool replicas_on_gpu() const;
  // Starts copying each replica's rows of every component of the batch (inputs, targets) to its
  // GPU; the step that gets this batch uses them.
  void stage_batch(const Example& batch);
  void clear() { staged_.clear(); }

  struct StagedTensor {
    Tensor host;  // held, so no other batch can be given its memory while it is staged
    std::vector<PendingUpload> per_replica;
  };
  using StagedBatch = std::vector<StagedTensor>;  // one per component, the first input first
  static const PendingUpload* find_upload(const StagedTensor& s, const Tensor& t, int replica);

  std::optional<distribute::Strategy> strategy_;
  // The current and the next batch; emptied when the iterator that staged them goes away.
  std::deque<StagedBatch> staged_;
};

}  // namespace kerascpp::detail
