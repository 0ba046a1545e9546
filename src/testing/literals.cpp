// Tensor literals: nested initializer lists flattened row-major, their shape taken from the
// nesting and checked for ragged rows.
#include "check.hpp"
#include "kerascpp/testing.hpp"

namespace kerascpp::testing {
namespace {

template <class T>
class Flattener {
 public:
  explicit Flattener(std::size_t rank) : shape_(rank, kUnseen) {}

  void add(const T& value, std::size_t) { values_.push_back(value); }
  template <class Inner>
  void add(std::initializer_list<Inner> list, std::size_t depth) {
    const auto n = static_cast<std::int64_t>(list.size());
    if (shape_[depth] == kUnseen) shape_[depth] = n;  // the first list seen at this depth sets its size
    KERASCPP_CHECK_SHAPE(shape_[depth] == n,
                         "tensor literal: a list at depth {} has {} elements but the first one there has {}; every row "
                         "of a tensor needs the same length",
                         depth, n, shape_[depth]);
    for (const auto& item : list) add(item, depth + 1);
  }

  Tensor finish() {
    // Lists that were all empty leave the deeper sizes unseen: those axes have size 0 too.
    for (auto& d : shape_)
      if (d == kUnseen) d = 0;
    return Tensor::from_vector(shape_, values_);
  }

 private:
  static constexpr std::int64_t kUnseen = -1;
  Shape shape_;
  std::vector<T> values_;
};

template <class T, class List>
Tensor flatten(List list, std::size_t rank) {
  Flattener<T> f(rank);
  f.add(list, 0);
  return f.finish();
}

template <class T>
Tensor from_shape(const char* what, const Shape& shape, const std::vector<T>& values) {
  for (auto d : shape) KERASCPP_CHECK_SHAPE(d >= 0, "{}: shape {} has a negative dimension", what, shape_str(shape));
  KERASCPP_CHECK_SHAPE(shape_numel(shape) == static_cast<std::int64_t>(values.size()),
                       "{}: shape {} holds {} values but {} were given", what, shape_str(shape), shape_numel(shape),
                       values.size());
  return Tensor::from_vector(shape, values);
}

}  // namespace

Tensor tensor(List1 values) { return flatten<float>(values, 1); }
Tensor tensor(List2 values) { return flatten<float>(values, 2); }
Tensor tensor(List3 values) { return flatten<float>(values, 3); }
Tensor tensor(List4 values) { return flatten<float>(values, 4); }
Tensor tensor(const Shape& shape, const std::vector<float>& values) { return from_shape("tensor", shape, values); }

Tensor int_tensor(IntList1 values) { return flatten<std::int32_t>(values, 1); }
Tensor int_tensor(IntList2 values) { return flatten<std::int32_t>(values, 2); }
Tensor int_tensor(IntList3 values) { return flatten<std::int32_t>(values, 3); }
Tensor int_tensor(IntList4 values) { return flatten<std::int32_t>(values, 4); }
Tensor int_tensor(const Shape& shape, const std::vector<std::int32_t>& values) {
  return from_shape("int_tensor", shape, values);
}

}  // namespace kerascpp::testing
