// InputSpec: what a layer declares about each input it accepts (Keras' keras.InputSpec): the
// rank, sizes of fixed axes and the dtype. Layer::call_multi checks the declared specs once,
// before compute_output_shapes, so a layer's shape code may assume they hold and the error for a
// wrong input reads the same for every layer:
//   Layer 'conv2d' (Conv2D): expected rank 4 input (batch, height, width, channels), got (None, 28, 28)
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp {

/// What a layer accepts as one input: rank, fixed axis sizes and dtype (Keras' keras.InputSpec).
struct InputSpec {
  // Ranks count the batch axis, as in Keras: a Dense input (batch, features) has rank 2.
  std::optional<int> ndim{};      ///< exact rank
  std::optional<int> min_ndim{};  ///< at least this rank
  std::optional<int> max_ndim{};  ///< at most this rank
  /// Axes whose size is fixed, {axis: size}; axis 0 is the batch axis, negative axes count from the
  /// end (Keras' `axes`). A layer fixes its feature axis once built: Dense sets {-1: input_dim}.
  std::map<int, std::int64_t> axes{};
  /// The dtype the layer computes in; nullopt accepts any. Every built-in layer computes in float32.
  std::optional<DType> dtype = DType::float32;
  /// For messages: the axes' meaning, e.g. "(batch, height, width, channels)", and what to do when
  /// the rank is wrong, e.g. "add a channel axis with Reshape, e.g. Reshape({28, 28, 1})".
  std::string layout{};
  /// What to do when the rank is wrong (see layout).
  std::string rank_hint{};

  /// What the spec requires, in words: "rank 4 (batch, height, width, channels), float32".
  std::string to_string() const;
  /// Why a tensor of full shape `shape` (batch axis included, -1 = unknown) and dtype `dtype` does
  /// not satisfy the spec ("expected rank 4 input ..., got (None, 28, 28)"), or "" if it does.
  std::string mismatch(const Shape& shape, DType dtype) const;
};

}  // namespace kerascpp
