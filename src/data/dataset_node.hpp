// Internal: the node graph behind kerascpp::Dataset. Each op is one immutable node that
// makes iterators; nodes are shared between Datasets and never change after construction.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kerascpp/data/dataset.hpp"

namespace kerascpp::detail {

// Stream of row indices into a node's row tensors (see DatasetNode::rows).
class IndexStream {
 public:
  virtual ~IndexStream() = default;
  virtual bool next(std::int64_t& out) = 0;
};

// The rows behind the batch() fast path: component c's element k is tensors[c].row(i_k). A
// component with divisors[c] > 0 is stored as uint8 and comes out as float32 value / divisor
// (a dataset kept at a quarter of its float32 size until it is batched, as Fashion-MNIST's
// pixels); divisors is empty or has one entry per component.
struct RowSource {
  std::vector<Tensor> tensors;
  std::vector<float> divisors;
  float divisor(std::size_t c) const { return c < divisors.size() ? divisors[c] : 0.f; }
};

struct DatasetNode {
  virtual ~DatasetNode() = default;
  virtual std::int64_t cardinality() const = 0;
  virtual bool is_batched() const = 0;
  virtual std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const = 0;

  // Row-gather fast path. A node whose element k is row i_k of its row source returns the
  // source and makes the index stream i_0, i_1, ...; batch() then copies rows straight from
  // the source instead of materialising every element. Only from_tensor_slices, synthetic and
  // the index-only ops above them (shuffle, take, skip, shard, repeat) have it; their
  // make_iterator() must yield exactly the same order as their index stream.
  virtual const RowSource* rows() const { return nullptr; }
  virtual std::unique_ptr<IndexStream> make_index_stream(std::uint64_t /*epoch*/) const { return nullptr; }
};

// Element `index` of a row source: views of row `index` with axis 0 dropped (decoded copies for
// the uint8 components with a divisor).
Example row_example(const RowSource& rows, std::int64_t index);

// Iterates a row source through an index stream, yielding row views.
std::unique_ptr<Dataset::Iterator> make_row_iterator(const RowSource& rows, std::unique_ptr<IndexStream> indices);

// Writes n uint8 values as float32 value / divisor (the division as the loaders did it eagerly,
// so the batches are bit-identical to a float32 source).
void decode_uint8(const std::uint8_t* src, float* dst, std::size_t n, float divisor);

// FILE auto-sharding (data::auto_shard) in force while a pipeline is opened: every file-based
// source keeps the files i with i % num_shards == index and sets `found`, so that AUTO can fall
// back to DATA when the pipeline has none. A source with fewer files than shards sets
// `too_few` (AUTO then falls back to DATA) or, when `required` (the FILE policy), throws.
struct FileShard {
  std::int64_t num_shards = 1;
  std::int64_t index = 0;
  bool required = false;
  std::shared_ptr<std::atomic<bool>> found = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<std::atomic<bool>> too_few = std::make_shared<std::atomic<bool>>(false);
};

// What a pipeline's ops read while its iterators are made: its Options and its FILE shard (null
// when none).
struct PipelineSettings {
  std::shared_ptr<const Options> options;
  std::shared_ptr<const FileShard> file_shard;
};

// The Options of the Dataset whose iterator is being made on this thread (Dataset::make_iterator
// sets them; defaults otherwise). Nodes read them in make_iterator(), where tf.data applies a
// pipeline's options to every op whatever its position; a node that opens an input later (repeat,
// concatenate) captures the settings with current_options_handle() and reinstates them with an
// OptionsScope.
const Options& current_options();
// The FILE shard of the pipeline being opened on this thread, or null.
const FileShard* current_file_shard();
class OptionsScope {
 public:
  explicit OptionsScope(PipelineSettings settings);
  ~OptionsScope();
  OptionsScope(const OptionsScope&) = delete;
  OptionsScope& operator=(const OptionsScope&) = delete;

 private:
  PipelineSettings previous_;
};
PipelineSettings current_options_handle();

// A deterministic argument resolved as tf.data does: the op's own when set, else the options'.
inline bool resolve_deterministic(const std::optional<bool>& op_value) {
  return op_value.value_or(current_options().deterministic.value_or(true));
}

// Well-mixed 64-bit hash (splitmix64 finaliser) for deriving per-epoch seeds.
std::uint64_t mix64(std::uint64_t x);

}  // namespace kerascpp::detail
