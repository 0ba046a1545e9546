// Dataset::synthetic: one constant example repeated, for measuring a model without any input
// cost (the official TF models' --use_synthetic_data).
#include <fmt/format.h>

#include <limits>

#include "check.hpp"
#include "data/dataset_node.hpp"
#include "kerascpp/core/random.hpp"

namespace kerascpp {
namespace {

// Always row 0 of the one-row sources, `count` times (or forever when count < 0).
class ConstantIndexStream final : public detail::IndexStream {
 public:
  explicit ConstantIndexStream(std::int64_t count) : left_(count) {}
  bool next(std::int64_t& out) override {
    if (left_ == 0) return false;
    if (left_ > 0) --left_;
    out = 0;
    return true;
  }

 private:
  std::int64_t left_;
};

class SyntheticNode final : public detail::DatasetNode {
 public:
  SyntheticNode(std::vector<Tensor> rows, std::int64_t count) : rows_{std::move(rows), {}}, count_(count) {}
  std::int64_t cardinality() const override { return count_ < 0 ? Dataset::kInfinite : count_; }
  bool is_batched() const override { return false; }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    return detail::make_row_iterator(rows_, make_index_stream(epoch));
  }
  const detail::RowSource* rows() const override { return &rows_; }
  std::unique_ptr<detail::IndexStream> make_index_stream(std::uint64_t) const override {
    return std::make_unique<ConstantIndexStream>(count_);
  }

 private:
  detail::RowSource rows_;  // each tensor with a leading axis of 1
  std::int64_t count_;
};

void check_shape(const Shape& shape, const char* what) {
  for (auto d : shape)
    KERASCPP_CHECK_VALUE(d >= 0,
                         "Dataset.synthetic: {} shape {} has a negative or unknown dimension; give "
                         "every dimension, e.g. {{28, 28, 1}}",
                         what, shape_str(shape));
}

}  // namespace

Dataset Dataset::synthetic(Shape feature_shape, Shape label_shape, std::int64_t count) {
  check_shape(feature_shape, "feature");
  check_shape(label_shape, "label");
  KERASCPP_CHECK_VALUE(count >= kInfinite, "Dataset.synthetic: count must be >= 0 or Dataset::kInfinite (-1), got {}",
                       count);
  Shape x_shape{1};
  x_shape.insert(x_shape.end(), feature_shape.begin(), feature_shape.end());
  Shape y_shape{1};
  y_shape.insert(y_shape.end(), label_shape.begin(), label_shape.end());
  // A fixed seed: the pattern is part of the dataset's definition, not of the run.
  Tensor x(x_shape, DType::float32);
  Rng rng(0x5EEDDA7Aull);
  float* p = x.data<float>();
  for (std::int64_t i = 0, n = x.numel(); i < n; ++i) p[i] = rng.uniform();
  Tensor y = Tensor::zeros(y_shape, DType::int32);
  return Dataset(std::make_shared<SyntheticNode>(std::vector<Tensor>{x, y}, count));
}

}  // namespace kerascpp
