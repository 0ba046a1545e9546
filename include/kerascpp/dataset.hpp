// Dataset: a tf.data-style input pipeline (from_tensor_slices, shuffle, batch, repeat, map,
// take, skip, shard, prefetch) that feeds Model::fit/evaluate/predict one Example at a time.
// Datasets over files (text lines, TFRecord, CSV) come from kerascpp/data/*.hpp (docs/data.md).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "kerascpp/tensor.hpp"

namespace kerascpp {

// One element of a dataset: its components, normally {x, y}.
using Example = std::vector<Tensor>;

class Dataset;
namespace detail {
struct DatasetNode;
// Wraps a node in a Dataset: how the file sources in src/data (kerascpp/data/*.hpp) make theirs.
Dataset make_dataset(std::shared_ptr<const DatasetNode> node);
}  // namespace detail

// A Dataset is an immutable description of a pipeline; copies share it and every op returns a
// new Dataset. Elements are produced only when an Iterator pulls them.
class Dataset {
 public:
  static constexpr std::int64_t kInfinite = -1;  // cardinality() of an endless dataset
  static constexpr std::int64_t kUnknown = -2;   // cardinality() that cannot be known up front
  static constexpr std::int64_t kAutotune = -1;  // prefetch(kAutotune) picks the buffer size

  // Default-constructed: no pipeline at all (defined() is false); every other call throws.
  // Lets option structs hold an optional dataset, e.g. fit's validation_data.
  Dataset() = default;

  // Elements are row views of the given tensors along axis 0 (no copy is made).
  static Dataset from_tensor_slices(Tensor x);
  static Dataset from_tensor_slices(Tensor x, Tensor y);  // x.dim(0) must equal y.dim(0)
  static Dataset from_tensor_slices(std::vector<Tensor> components);
  // Like from_tensor_slices, but each component with a divisor > 0 must be uint8 and comes out
  // as float32 value / divisor: images stay the bytes their file holds (a quarter of their
  // float32 size) and are scaled as each element or batch is made, e.g. divisors {255, 0} for
  // (pixels, labels). One divisor per component; 0 leaves a component as it is.
  static Dataset from_tensor_slices_scaled(std::vector<Tensor> components, std::vector<float> divisors);
  // `count` copies (kInfinite: endless) of one constant example, like the official models'
  // --use_synthetic_data: float32 features of a fixed pseudo-random pattern, int32 label 0.
  static Dataset synthetic(Shape feature_shape, Shape label_shape, std::int64_t count);

  // tf.data's shuffle buffer: buffer_size >= cardinality gives a uniform shuffle. The order is
  // a function of (seed, epoch) only; without a seed one is drawn from next_random_seed()
  // (so set_random_seed makes it reproducible).
  Dataset shuffle(std::int64_t buffer_size, std::optional<std::uint64_t> seed = std::nullopt,
                  bool reshuffle_each_iteration = true) const;
  // Stacks batch_size consecutive examples into tensors with a new leading axis.
  Dataset batch(std::int64_t batch_size, bool drop_remainder = false) const;
  Dataset repeat(std::int64_t count = -1) const;  // -1: forever
  Dataset map(std::function<Example(const Example&)> fn) const;
  Dataset take(std::int64_t n) const;  // -1: all
  Dataset skip(std::int64_t n) const;  // -1: all
  Dataset shard(std::int64_t num_shards, std::int64_t index) const;
  // Produces elements on a background thread into a queue of at most buffer_size elements.
  Dataset prefetch(std::int64_t buffer_size) const;

  // Number of elements, or kInfinite / kUnknown (tf.data rules).
  std::int64_t cardinality() const;

  class Iterator {
   public:
    virtual ~Iterator();
    // Fills `out` with the next element and returns true, or returns false at the end.
    virtual bool next(Example& out) = 0;
  };
  // `epoch` feeds reshuffle_each_iteration: the same (seed, epoch) always gives the same
  // order, so a resumed run re-creates the data order of any epoch.
  std::unique_ptr<Iterator> make_iterator(std::uint64_t epoch = 0) const;

  bool is_batched() const;  // true once batch() was applied (the fit loop requires it)
  bool defined() const { return static_cast<bool>(node_); }

 private:
  explicit Dataset(std::shared_ptr<const detail::DatasetNode> node) : node_(std::move(node)) {}
  friend Dataset detail::make_dataset(std::shared_ptr<const detail::DatasetNode> node);
  const detail::DatasetNode& node(const char* op) const;  // throws when !defined()

  std::shared_ptr<const detail::DatasetNode> node_;
};

}  // namespace kerascpp
