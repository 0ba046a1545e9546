// EpochIterator (Keras 3's name): the loop fit, evaluate and predict share. It pulls batches from
// the dataset (the next one staged for GPU replicas while this one runs), splits each into the
// model's inputs, targets and sample weights, prepares the model for it (builds a Sequential,
// binds the replicas), and ends an epoch when its step count is reached, the data runs out, or a
// stop was requested (Model::request_stop, Ctrl-C). The callers add only what differs: the step,
// the callbacks, validation.
#pragma once
#include <cstdint>
#include <memory>

#include "kerascpp/data/dataset.hpp"
#include "training/interrupt.hpp"
#include "training/model_impl.hpp"

namespace kerascpp::detail {

// One element split like Keras' unpack_x_y_sample_weight: the model's inputs, then (fit and
// evaluate) the targets, then optionally per-example weights; missing ones are undefined.
struct Batch {
  Inputs x;
  Tensor y, sample_weight;
};

enum class LoopKind { fit, evaluate, predict };

class EpochIterator {
 public:
  // steps: the most batches in one epoch, -1 for all of the data. steps_given: the caller asked
  // for that many (fit's steps_per_epoch, evaluate's and predict's steps): data that runs out
  // first gets Keras' warning, and fit's one pass then carries over epochs, starting again when
  // it runs out at the start of an epoch.
  EpochIterator(ModelImpl& m, const Dataset& data, LoopKind kind, std::int64_t steps, bool steps_given);
  ~EpochIterator();
  EpochIterator(const EpochIterator&) = delete;
  EpochIterator& operator=(const EpochIterator&) = delete;

  // Starts epoch `epoch` (its number seeds the dataset's shuffle): a new pass over the data,
  // unless fit's pass carries over.
  void begin_epoch(int epoch);
  // BackupAndRestore's resume: takes the epoch's first n batches without using them.
  void skip(std::int64_t n);
  // The next batch of this epoch, unpacked, with the model prepared for it; false at the end of
  // the epoch (steps reached, data ran out, or a stop seen by batch_done()).
  bool next(Batch& batch);
  // After the caller's step on next()'s batch: counts it and looks for a stop request.
  void batch_done();
  // Looks for a stop request outside the batch loop (fit's validation); true once one was seen.
  bool stop_requested();

  std::int64_t step() const { return step_; }  // batches taken this epoch: the next batch's index
  bool interrupted() const { return interrupted_; }

 private:
  class StopScope;
  bool pull(Example& element);

  ModelImpl& m_;
  const Dataset& data_;
  LoopKind kind_;
  std::int64_t steps_;
  bool steps_given_;
  std::unique_ptr<StopScope> stop_;
  std::unique_ptr<Dataset::Iterator> it_;
  Backend* phases_ = nullptr;  // fit's KERASCPP_GPU_PHASES marks (the first replica's backend)
  int epoch_ = 0;
  std::int64_t step_ = 0;
  bool interrupted_ = false;
};

}  // namespace kerascpp::detail
