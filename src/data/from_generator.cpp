// Dataset::from_generator: elements from a C++ callable, checked against an element spec the way
// tf.data checks a Python generator's output against its output_signature.
#include <fmt/format.h>

#include "check.hpp"
#include "data/dataset_node.hpp"

namespace kerascpp {
namespace {

bool shape_matches(const Shape& spec, const Shape& actual) {
  if (spec.size() != actual.size()) return false;
  for (std::size_t d = 0; d < spec.size(); ++d)
    if (spec[d] != -1 && spec[d] != actual[d]) return false;
  return true;
}

std::string describe(const TensorSpec& s) { return shape_str(s.shape) + " " + dtype_name(s.dtype); }

class GeneratorIterator final : public Dataset::Iterator {
 public:
  GeneratorIterator(Dataset::Generator generator, std::shared_ptr<const std::vector<TensorSpec>> spec)
      : generator_(std::move(generator)), spec_(std::move(spec)) {}

  bool next(Example& out) override {
    if (done_) return false;
    std::optional<Example> e = generator_();
    if (!e) {
      done_ = true;
      return false;
    }
    check(*e);
    ++index_;
    out = std::move(*e);
    return true;
  }

 private:
  void check(const Example& e) const {
    const auto& spec = *spec_;
    KERASCPP_CHECK_VALUE(e.size() == spec.size(),
                         "Dataset.from_generator: element {} has {} components but output_signature "
                         "has {}; yield one tensor per TensorSpec",
                         index_, e.size(), spec.size());
    for (std::size_t c = 0; c < spec.size(); ++c) {
      KERASCPP_CHECK_VALUE(e[c].dtype() == spec[c].dtype,
                           "Dataset.from_generator: element {}, component {} is {} {} but "
                           "output_signature says {}; cast it in the generator",
                           index_, c, shape_str(e[c].shape()), dtype_name(e[c].dtype()), describe(spec[c]));
      KERASCPP_CHECK_SHAPE(shape_matches(spec[c].shape, e[c].shape()),
                           "Dataset.from_generator: element {}, component {} has shape {} but "
                           "output_signature says {} (-1 matches any size)",
                           index_, c, shape_str(e[c].shape()), describe(spec[c]));
    }
  }

  Dataset::Generator generator_;
  std::shared_ptr<const std::vector<TensorSpec>> spec_;
  std::int64_t index_ = 0;
  bool done_ = false;
};

class GeneratorNode final : public detail::DatasetNode {
 public:
  GeneratorNode(std::function<Dataset::Generator()> make, std::vector<TensorSpec> spec)
      : make_(std::move(make)), spec_(std::make_shared<const std::vector<TensorSpec>>(std::move(spec))) {}
  std::int64_t cardinality() const override { return Dataset::kUnknown; }
  bool is_batched() const override { return false; }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t) const override {
    Dataset::Generator g = make_();
    KERASCPP_CHECK_VALUE(g,
                         "Dataset.from_generator: make_generator returned an empty function; return a callable "
                         "that yields std::optional<Example>");
    return std::make_unique<GeneratorIterator>(std::move(g), spec_);
  }

 private:
  std::function<Dataset::Generator()> make_;
  std::shared_ptr<const std::vector<TensorSpec>> spec_;
};

}  // namespace

Dataset Dataset::from_generator(std::function<Generator()> make_generator, std::vector<TensorSpec> output_signature) {
  KERASCPP_CHECK_VALUE(make_generator,
                       "Dataset.from_generator: make_generator is empty; pass a callable returning a Generator");
  KERASCPP_CHECK_VALUE(!output_signature.empty(),
                       "Dataset.from_generator: output_signature is empty; give one TensorSpec per component");
  for (std::size_t c = 0; c < output_signature.size(); ++c)
    for (std::int64_t d : output_signature[c].shape)
      KERASCPP_CHECK_VALUE(d >= -1,
                           "Dataset.from_generator: output_signature[{}] has shape {}; dims are "
                           ">= 0, or -1 for any size",
                           c, shape_str(output_signature[c].shape));
  return detail::make_dataset(std::make_shared<GeneratorNode>(std::move(make_generator), std::move(output_signature)));
}

}  // namespace kerascpp
