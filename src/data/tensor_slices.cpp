// Dataset::from_tensor_slices: element i is row i of every component, as views (no copy).
#include <fmt/format.h>

#include <cmath>

#include "check.hpp"
#include "data/dataset_node.hpp"

namespace kerascpp {
namespace {

class CountingStream final : public detail::IndexStream {
 public:
  explicit CountingStream(std::int64_t n) : n_(n) {}
  bool next(std::int64_t& out) override {
    if (i_ >= n_) return false;
    out = i_++;
    return true;
  }

 private:
  std::int64_t n_;
  std::int64_t i_ = 0;
};

class SlicesNode final : public detail::DatasetNode {
 public:
  explicit SlicesNode(detail::RowSource rows) : rows_(std::move(rows)) {}
  std::int64_t cardinality() const override { return rows_.tensors.front().dim(0); }
  bool is_batched() const override { return false; }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    return detail::make_row_iterator(rows_, make_index_stream(epoch));
  }
  const detail::RowSource* rows() const override { return &rows_; }
  std::unique_ptr<detail::IndexStream> make_index_stream(std::uint64_t) const override {
    return std::make_unique<CountingStream>(cardinality());
  }

 private:
  detail::RowSource rows_;
};

// What both from_tensor_slices variants require of their tensors (`what` names the call).
void check_components(const std::vector<Tensor>& components, const char* what) {
  KERASCPP_CHECK_VALUE(!components.empty(), "{}: no tensors given; pass at least one tensor (e.g. x, y)", what);
  for (std::size_t i = 0; i < components.size(); ++i) {
    const Tensor& t = components[i];
    KERASCPP_CHECK_STATE(t.defined(),
                         "{}: tensor {} is undefined (default-constructed); "
                         "pass tensors that hold data",
                         what, i);
    KERASCPP_CHECK_SHAPE(t.rank() != 0,
                         "{}: tensor {} is a scalar (shape ()); it needs a "
                         "leading axis to slice along, e.g. reshape it to (1,)",
                         what, i);
    KERASCPP_CHECK_SHAPE(t.dim(0) == components[0].dim(0),
                         "{}: tensor 0 has shape {} but tensor {} has shape {}; "
                         "all tensors need the same number of rows (axis 0), e.g. as many labels "
                         "as images",
                         what, shape_str(components[0].shape()), i, shape_str(t.shape()));
  }
}

}  // namespace

Dataset Dataset::from_tensor_slices(std::vector<Tensor> components) {
  check_components(components, "Dataset.from_tensor_slices");
  return Dataset(std::make_shared<SlicesNode>(detail::RowSource{std::move(components), {}}));
}

Dataset Dataset::from_tensor_slices(Tensor x) { return from_tensor_slices(std::vector<Tensor>{std::move(x)}); }

Dataset Dataset::from_tensor_slices(Tensor x, Tensor y) {
  return from_tensor_slices(std::vector<Tensor>{std::move(x), std::move(y)});
}

Dataset Dataset::from_tensor_slices_scaled(std::vector<Tensor> components, std::vector<float> divisors) {
  const std::size_t n = components.size();
  check_components(components, "Dataset.from_tensor_slices_scaled");
  KERASCPP_CHECK_VALUE(divisors.size() == n,
                       "Dataset.from_tensor_slices_scaled: {} tensors but {} divisors; give one divisor "
                       "per tensor (0 leaves it as it is)",
                       n, divisors.size());
  for (std::size_t c = 0; c < n; ++c) {
    KERASCPP_CHECK_VALUE(divisors[c] >= 0.f && !std::isinf(divisors[c]),
                         "Dataset.from_tensor_slices_scaled: divisor {} is {}; it must be a finite "
                         "number > 0 (or 0 to leave tensor {} as it is)",
                         c, divisors[c], c);
    KERASCPP_CHECK_VALUE(divisors[c] <= 0.f || components[c].dtype() == DType::uint8,
                         "Dataset.from_tensor_slices_scaled: tensor {} holds {}, but only uint8 tensors "
                         "are scaled; give it divisor 0, or pass its uint8 values",
                         c, dtype_name(components[c].dtype()));
  }
  return Dataset(std::make_shared<SlicesNode>(detail::RowSource{std::move(components), std::move(divisors)}));
}

}  // namespace kerascpp
