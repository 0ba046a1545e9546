// Dataset::zip: element k of every input side by side. Example is a flat list of tensors, so the
// inputs' components are concatenated (tf.data nests them in a tuple).
#include <fmt/format.h>

#include <algorithm>

#include "check.hpp"
#include "data/dataset_node.hpp"

namespace kerascpp {
namespace {

using Nodes = std::vector<std::shared_ptr<const detail::DatasetNode>>;

class ZipIterator final : public Dataset::Iterator {
 public:
  explicit ZipIterator(std::vector<std::unique_ptr<Dataset::Iterator>> inputs) : inputs_(std::move(inputs)) {}
  bool next(Example& out) override {
    Example all, part;
    for (auto& input : inputs_) {
      if (!input->next(part)) return false;  // the shortest input ends the zip
      for (auto& t : part) all.push_back(std::move(t));
    }
    out = std::move(all);
    return true;
  }

 private:
  std::vector<std::unique_ptr<Dataset::Iterator>> inputs_;
};

class ZipNode final : public detail::DatasetNode {
 public:
  explicit ZipNode(Nodes inputs) : inputs_(std::move(inputs)) {}
  // tf.data: the shortest input's length; unknown if any input's is.
  std::int64_t cardinality() const override {
    std::int64_t n = Dataset::kInfinite;
    for (const auto& input : inputs_) {
      const std::int64_t c = input->cardinality();
      if (c == Dataset::kUnknown) return c;
      if (c != Dataset::kInfinite) n = n == Dataset::kInfinite ? c : std::min(n, c);
    }
    return n;
  }
  bool is_batched() const override {
    return std::all_of(inputs_.begin(), inputs_.end(), [](const auto& i) { return i->is_batched(); });
  }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    std::vector<std::unique_ptr<Dataset::Iterator>> its;
    for (const auto& input : inputs_) its.push_back(input->make_iterator(epoch));
    return std::make_unique<ZipIterator>(std::move(its));
  }

 private:
  Nodes inputs_;
};

}  // namespace

Dataset Dataset::zip(const std::vector<Dataset>& datasets) {
  KERASCPP_CHECK_VALUE(!datasets.empty(), "Dataset.zip: no datasets given; pass at least one");
  Nodes nodes;
  for (std::size_t i = 0; i < datasets.size(); ++i) {
    KERASCPP_CHECK_STATE(datasets[i].defined(), "Dataset.zip: dataset {} is default-constructed and holds no pipeline",
                         i);
    nodes.push_back(datasets[i].node_);
  }
  // The first input's options carry over (tf.data merges every input's; later ones win there).
  return datasets.front().derive(std::make_shared<ZipNode>(std::move(nodes)));
}

}  // namespace kerascpp
