#include <fmt/format.h>

#include "check.hpp"
#include "data/dataset_node.hpp"

namespace kerascpp {

Dataset::Iterator::~Iterator() = default;

const detail::DatasetNode& Dataset::node(const char* op) const {
  KERASCPP_CHECK_STATE(node_,
                       "Dataset.{}: this Dataset is default-constructed and holds no pipeline; "
                       "create one with Dataset::from_tensor_slices or a datasets:: loader",
                       op);
  return *node_;
}

std::int64_t Dataset::cardinality() const { return node("cardinality").cardinality(); }

std::unique_ptr<Dataset::Iterator> Dataset::make_iterator(std::uint64_t epoch) const {
  const auto& root = node("make_iterator");
  // Its own options; the FILE shard of an enclosing data::auto_shard, when there is one, carries
  // on (interleave opens its inputs without it: they are pipelines of their own).
  detail::OptionsScope scope({options_, detail::current_options_handle().file_shard});
  return root.make_iterator(epoch);
}

Dataset Dataset::derive(std::shared_ptr<const detail::DatasetNode> node) const {
  Dataset out(std::move(node));
  out.options_ = options_;
  return out;
}

Dataset Dataset::with_options(const Options& options) const {
  node("with_options");  // throws for a default-constructed Dataset
  // tf.data merges: a field set here wins, one left unset keeps the earlier value.
  Options merged = options_ ? *options_ : Options{};
  if (options.deterministic) merged.deterministic = options.deterministic;
  if (options.auto_shard_policy != AutoShardPolicy::AUTO) merged.auto_shard_policy = options.auto_shard_policy;
  Dataset out(node_);
  out.options_ = std::make_shared<const Options>(merged);
  return out;
}

Options Dataset::options() const {
  node("options");
  return options_ ? *options_ : Options{};
}

bool Dataset::is_batched() const { return node("is_batched").is_batched(); }

namespace detail {

namespace {
thread_local PipelineSettings t_current;
}

const Options& current_options() {
  static const Options defaults;
  return t_current.options ? *t_current.options : defaults;
}

const FileShard* current_file_shard() { return t_current.file_shard.get(); }

PipelineSettings current_options_handle() { return t_current; }

OptionsScope::OptionsScope(PipelineSettings settings) : previous_(std::move(t_current)) {
  t_current = std::move(settings);
}

OptionsScope::~OptionsScope() { t_current = std::move(previous_); }

Dataset make_dataset(std::shared_ptr<const DatasetNode> node) { return Dataset(std::move(node)); }

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

Example row_example(const RowSource& rows, std::int64_t index) {
  Example out;
  out.reserve(rows.tensors.size());
  for (std::size_t c = 0; c < rows.tensors.size(); ++c) {
    const Tensor& t = rows.tensors[c];
    Shape element_shape(t.shape().begin() + 1, t.shape().end());
    Tensor row = t.slice(index, index + 1).reshape(std::move(element_shape));
    if (const float divisor = rows.divisor(c); divisor > 0.f) {
      Tensor decoded(row.shape(), DType::float32);
      decode_uint8(row.data<std::uint8_t>(), decoded.data<float>(), static_cast<std::size_t>(row.numel()), divisor);
      row = std::move(decoded);
    }
    out.push_back(std::move(row));
  }
  return out;
}

namespace {
class RowIterator final : public Dataset::Iterator {
 public:
  // Holds its own copies of the row tensors (they share storage) so it outlives the Dataset.
  RowIterator(RowSource rows, std::unique_ptr<IndexStream> indices)
      : rows_(std::move(rows)), indices_(std::move(indices)) {}
  bool next(Example& out) override {
    std::int64_t i = 0;
    if (!indices_->next(i)) return false;
    out = row_example(rows_, i);
    return true;
  }

 private:
  RowSource rows_;
  std::unique_ptr<IndexStream> indices_;
};
}  // namespace

std::unique_ptr<Dataset::Iterator> make_row_iterator(const RowSource& rows, std::unique_ptr<IndexStream> indices) {
  return std::make_unique<RowIterator>(rows, std::move(indices));
}

}  // namespace detail
}  // namespace kerascpp
