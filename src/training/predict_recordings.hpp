// PredictRecordings: one replica's predict forwards recorded once per input shape and replayed
// (Backend::record: CUDA graphs on a GPU), so a small model's predict_on_batch costs one launch
// instead of one per op. The first batch of a shape runs as usual (it settles the backend's
// algorithm choices and buffers); the second is recorded; later ones refill the recording's input
// buffers in place, replay it and copy its output out. A recording that went stale (a buffer it
// may use was freed: weights replaced, a training step's scratch regrown) is recorded anew; a
// shape whose recordings keep going stale before kPaysOff replays (predict between every two
// training steps) stops after kMaxRecordings of them, as does a shape whose forward cannot be
// recorded (a host wait in some layer, a backend that records nothing). At most kMaxLive shapes
// keep a recording (and its buffers): whenever a shape is recorded, stale recordings and the least
// recently used ones beyond that are dropped. Only predict_on_batch records: predict() stages its
// batches one ahead, whose uploads would make every recording stale.
//
// As with Keras' compiled predict (tf.function), host-side effects of a custom layer's forward
// run when it is recorded, not on replays. KERASCPP_GPU_GRAPHS=0 turns recording off.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "kerascpp/backend/backend.hpp"
#include "kerascpp/distribute/context.hpp"
#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::detail {

class PredictRecordings {
 public:
  // The forward of the model over device tensors `xs` (the replica's GraphState is the caller's).
  using Forward = std::function<Tensor(const std::vector<Tensor>& xs)>;

  // Rows [begin, end) of the host inputs `x` through the model, the output copied into `dst`
  // (host, [end - begin, ...]), from a recording; false when this batch did not use one (the
  // caller then runs it as usual).
  bool run(ReplicaContext& ctx, const Forward& forward, const std::vector<Tensor>& x, std::int64_t begin,
           std::int64_t end, Tensor& dst);

  static constexpr int kMaxRecordings = 4, kPaysOff = 8, kMaxLive = 8;

 private:
  struct Entry {
    std::vector<Tensor> inputs;          // the recording's input buffers, on the device
    Tensor output;                       // its output buffer
    std::unique_ptr<RecordedWork> work;  // declared last: dropped (its last replay waited for) first
    int batches = 0;                     // batches of this shape seen
    int recordings = 0;                  // recordings made that did not pay off
    int replays = 0;                     // replays of the current recording
    std::uint64_t last_use = 0;
    bool unrecordable = false;
    void drop() {
      if (replays >= kPaysOff) recordings = 0;  // it paid off: no count against recording anew
      replays = 0;
      work.reset();
      inputs.clear();
      output = Tensor();
    }
  };
  // Drops stale recordings, and the least recently used ones beyond kMaxLive (keeping `keep`).
  void sweep(const Entry* keep);

  std::map<std::vector<std::int64_t>, Entry> entries_;  // by the inputs' dtypes and shapes
  std::uint64_t uses_ = 0;
};

}  // namespace kerascpp::detail
