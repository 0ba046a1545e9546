// PredictRecordings: one replica's predict forwards recorded once per input shape and replayed
// (Backend::record: CUDA graphs on a GPU), so a small model's predict_on_batch costs one launch
// instead of one per op. The first batch of a shape runs as usual (it settles the backend's
// algorithm choices and buffers); the second is recorded; later ones refill the recording's input
// buffers in place, replay it and copy its output out. A recording that went stale (a buffer it
// used was freed: weights replaced, the backend's scratch regrown) is recorded anew, at most
// kMaxRecordings times per shape; a shape whose forward cannot be recorded (a host wait in some
// layer, a backend that records nothing) keeps running as usual.
//
// As with Keras' compiled predict (tf.function), host-side effects of a custom layer's forward
// run when it is recorded, not on replays. KERASCPP_GPU_GRAPHS=0 turns recording off.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "kerascpp/backend.hpp"
#include "kerascpp/context.hpp"
#include "kerascpp/tensor.hpp"

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

  static constexpr int kMaxRecordings = 4;

 private:
  struct Entry {
    std::vector<Tensor> inputs;          // the recording's input buffers, on the device
    Tensor output;                       // its output buffer
    std::unique_ptr<RecordedWork> work;  // declared last: dropped (its last replay waited for) first
    int batches = 0;                     // batches of this shape seen
    int recordings = 0;                  // recordings made
    bool unrecordable = false;
  };
  std::map<std::vector<std::int64_t>, Entry> entries_;  // by the inputs' dtypes and shapes
};

}  // namespace kerascpp::detail
