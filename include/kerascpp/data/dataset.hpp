// Dataset: a tf.data-style input pipeline (from_tensor_slices, from_generator, shuffle, batch,
// padded_batch, repeat, map, filter, interleave, zip, concatenate, cache, take, skip, shard,
// prefetch, ...) that feeds Model::fit/evaluate/predict one Example at a time.
// Datasets over files (text lines, TFRecord, CSV) come from kerascpp/data/*.hpp (docs/data.md).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp {

/// One element of a dataset: its components, normally {x, y}.
using Example = std::vector<Tensor>;

/// tf.data.AUTOTUNE: let the pipeline pick a parallelism or buffer size from measured throughput.
inline constexpr std::int64_t AUTOTUNE = -1;

/// tf.TensorSpec: the shape (-1 = any size) and dtype one component of every element must have.
struct TensorSpec {
  /// The shape; -1 matches any size along that axis.
  Shape shape{};
  /// The element type.
  DType dtype = DType::float32;
};

/// tf.data.experimental.AutoShardPolicy: how a multi-worker strategy should split a dataset
/// (recorded in Options; the strategies do not apply it yet, see docs/data.md).
enum class AutoShardPolicy { AUTO, FILE, DATA, OFF };

/// tf.data.Options: settings for a whole pipeline, attached with Dataset::with_options.
struct Options {
  std::optional<bool> deterministic{};                        ///< unset: true (tf's default)
  AutoShardPolicy auto_shard_policy = AutoShardPolicy::AUTO;  ///< tf's distribute_options.auto_shard_policy
};

/// Dataset::map's keyword arguments.
struct MapOptions {
  std::int64_t num_parallel_calls = 0;  ///< 0: sequential; N > 0 or AUTOTUNE: on the data pool
  std::optional<bool> deterministic{};  ///< unset: Options::deterministic; false lets faster elements overtake
};

/// Dataset::interleave's keyword arguments (tf's defaults).
struct InterleaveOptions {
  std::int64_t cycle_length = AUTOTUNE;  ///< inputs open at once; AUTOTUNE: the cores available
  std::int64_t block_length = 1;         ///< consecutive elements taken from one input
  std::int64_t num_parallel_calls = 0;   ///< 0: sequential; N > 0 or AUTOTUNE: inputs read ahead on the pool
  std::optional<bool> deterministic{};   ///< unset: Options::deterministic
};

/// Dataset::padded_batch's keyword arguments.
struct PaddedBatchOptions {
  std::vector<Shape> padded_shapes{};    ///< per component; -1 dims (or none given) pad to the batch's longest
  std::vector<double> padding_values{};  ///< per component; none given: 0
  /// Drop a last batch smaller than batch_size.
  bool drop_remainder = false;
};

/// Dataset::bucket_by_sequence_length's keyword arguments.
struct BucketOptions {
  std::vector<Shape> padded_shapes{};    ///< as PaddedBatchOptions
  std::vector<double> padding_values{};  ///< as PaddedBatchOptions
  bool pad_to_bucket_boundary = false;   ///< pad -1 dims to the bucket's boundary - 1, not the batch's longest
  bool no_padding = false;               ///< elements already have equal shapes: batch() them
  /// Drop a bucket's last batch when smaller than its batch size.
  bool drop_remainder = false;
};

class Dataset;
namespace detail {
struct DatasetNode;
// Wraps a node in a Dataset: how the file sources in src/data (kerascpp/data/*.hpp) make theirs.
Dataset make_dataset(std::shared_ptr<const DatasetNode> node);
}  // namespace detail

/// A Dataset is an immutable description of a pipeline; copies share it and every op returns a
/// new Dataset. Elements are produced only when an Iterator pulls them.
class Dataset {
 public:
  static constexpr std::int64_t kInfinite = -1;        ///< cardinality() of an endless dataset
  static constexpr std::int64_t kUnknown = -2;         ///< cardinality() that cannot be known up front
  static constexpr std::int64_t kAutotune = AUTOTUNE;  ///< prefetch(kAutotune) picks the buffer size

  /// Default-constructed: no pipeline at all (defined() is false); every other call throws.
  /// Lets option structs hold an optional dataset, e.g. fit's validation_data.
  Dataset() = default;

  /// @{
  /// Elements are row views of the given tensors along axis 0 (no copy is made); every
  /// component must have the same number of rows (x.dim(0) == y.dim(0)).
  static Dataset from_tensor_slices(Tensor x);
  static Dataset from_tensor_slices(Tensor x, Tensor y);
  static Dataset from_tensor_slices(std::vector<Tensor> components);
  /// @}
  /// Like from_tensor_slices, but each component with a divisor > 0 must be uint8 and comes out
  /// as float32 value / divisor: images stay the bytes their file holds (a quarter of their
  /// float32 size) and are scaled as each element or batch is made, e.g. divisors {255, 0} for
  /// (pixels, labels). One divisor per component; 0 leaves a component as it is.
  static Dataset from_tensor_slices_scaled(std::vector<Tensor> components, std::vector<float> divisors);
  /// `count` copies (kInfinite: endless) of one constant example, like the official models'
  /// --use_synthetic_data: float32 features of a fixed pseudo-random pattern, int32 label 0.
  static Dataset synthetic(Shape feature_shape, Shape label_shape, std::int64_t count);

  /// One call of a generator: the next element, or std::nullopt at the end.
  using Generator = std::function<std::optional<Example>()>;
  /// tf.data.Dataset.from_generator: make_generator() is called once per iteration (epoch) and
  /// its elements are checked against output_signature (component count, shape, dtype).
  static Dataset from_generator(std::function<Generator()> make_generator, std::vector<TensorSpec> output_signature);
  /// tf.data.Dataset.zip: element k of every input, their components concatenated in order.
  static Dataset zip(const std::vector<Dataset>& datasets);

  /// tf.data's shuffle buffer: buffer_size >= cardinality gives a uniform shuffle. The order is
  /// a function of (seed, epoch) only; without a seed one is drawn from next_random_seed()
  /// (so set_random_seed makes it reproducible).
  Dataset shuffle(std::int64_t buffer_size, std::optional<std::uint64_t> seed = std::nullopt,
                  bool reshuffle_each_iteration = true) const;
  /// Stacks batch_size consecutive examples into tensors with a new leading axis.
  Dataset batch(std::int64_t batch_size, bool drop_remainder = false) const;
  Dataset repeat(std::int64_t count = -1) const;  ///< -1: forever
  /// Each element replaced by fn(element), computed as the iterator pulls it.
  Dataset map(std::function<Example(const Example&)> fn) const;
  /// map with num_parallel_calls / deterministic: fn runs on the library's data pool.
  Dataset map(std::function<Example(const Example&)> fn, MapOptions options) const;
  /// Keeps the elements for which predicate returns true.
  Dataset filter(std::function<bool(const Example&)> predicate) const;
  /// Splits every element along axis 0 into its rows (the inverse of batch).
  Dataset unbatch() const;
  /// This dataset's elements, then other's (same component count and dtypes).
  Dataset concatenate(const Dataset& other) const;
  /// batch() for elements of different shapes: each is padded to padded_shapes (or the longest).
  Dataset padded_batch(std::int64_t batch_size, PaddedBatchOptions options = {}) const;
  /// Groups elements by element_length_func into buckets split at bucket_boundaries and
  /// padded-batches each bucket with its own size (bucket_batch_sizes: one more than boundaries).
  Dataset bucket_by_sequence_length(std::function<std::int64_t(const Example&)> element_length_func,
                                    std::vector<std::int64_t> bucket_boundaries,
                                    std::vector<std::int64_t> bucket_batch_sizes, BucketOptions options = {}) const;
  /// Maps each element to a dataset and interleaves cycle_length of them, block_length at a time.
  Dataset interleave(std::function<Dataset(const Example&)> fn, InterleaveOptions options = {}) const;
  /// Keeps the first complete pass in memory ("") or in the file `filename`; later passes read it.
  Dataset cache(std::string filename = "") const;
  /// Skips elements whose production threw a kerascpp::Error, counting them (logged to std::cerr).
  Dataset ignore_errors(bool log_warning = false) const;
  /// The same pipeline with `options` merged over those set before (tf.data's with_options).
  Dataset with_options(const Options& options) const;
  /// The options in force: set fields of every with_options() so far, later ones winning.
  Options options() const;
  Dataset take(std::int64_t n) const;  ///< -1: all
  Dataset skip(std::int64_t n) const;  ///< -1: all
  /// Every num_shards-th element, starting at `index`.
  Dataset shard(std::int64_t num_shards, std::int64_t index) const;
  /// Produces elements on a background thread into a queue of at most buffer_size elements
  /// (AUTOTUNE: grown while the consumer finds it empty, see docs/data.md).
  Dataset prefetch(std::int64_t buffer_size) const;

  /// Number of elements, or kInfinite / kUnknown (tf.data rules).
  std::int64_t cardinality() const;

  /// Pulls the elements of one pass over the dataset.
  class Iterator {
   public:
    /// Stops the pass (and any prefetch thread).
    virtual ~Iterator();
    /// Fills `out` with the next element and returns true, or returns false at the end.
    virtual bool next(Example& out) = 0;
  };
  /// `epoch` feeds reshuffle_each_iteration: the same (seed, epoch) always gives the same
  /// order, so a resumed run re-creates the data order of any epoch.
  std::unique_ptr<Iterator> make_iterator(std::uint64_t epoch = 0) const;

  bool is_batched() const;  ///< true once batch() was applied (the fit loop requires it)
  /// False for a default-constructed Dataset.
  bool defined() const { return static_cast<bool>(node_); }

 private:
  explicit Dataset(std::shared_ptr<const detail::DatasetNode> node) : node_(std::move(node)) {}
  friend Dataset detail::make_dataset(std::shared_ptr<const detail::DatasetNode> node);
  const detail::DatasetNode& node(const char* op) const;  // throws when !defined()
  // A Dataset over `node` that keeps this one's options (every op builds its result with it).
  Dataset derive(std::shared_ptr<const detail::DatasetNode> node) const;

  std::shared_ptr<const detail::DatasetNode> node_;
  std::shared_ptr<const Options> options_;  // null: none set
};

}  // namespace kerascpp
