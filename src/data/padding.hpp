// Internal: stacking elements of different shapes into one padded batch, shared by padded_batch
// and bucket_by_sequence_length.
#pragma once
#include <vector>

#include "data/dataset_node.hpp"

namespace kerascpp::detail {

struct PadSpec {
  std::vector<Shape> padded_shapes;    // per component, or empty: every dim to the batch's longest
  std::vector<double> padding_values;  // per component, or empty: 0
  std::int64_t unknown_dim_fill = -1;  // >= 0: what -1 dims of padded_shapes pad to (bucket boundary - 1)
};

// Checks the spec against the first element it will see (component counts), naming `op`.
void check_pad_spec(const PadSpec& spec, const char* op);

// Stacks `elements` (same component count, ranks and dtypes) into tensors with a new leading
// axis, each component padded to its target shape with its padding value. ShapeError names the
// element and component that do not fit.
Example pad_and_stack(const std::vector<Example>& elements, const PadSpec& spec, const char* op);

}  // namespace kerascpp::detail
