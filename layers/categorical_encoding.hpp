// Shared by the integer preprocessing layers (CategoryEncoding, Discretization): reading ids on
// the host and Keras' encode_categorical_inputs (one_hot, multi_hot, count).
// These layers' forward is a host round trip (to_vector, compute, from_vector(...).to(device)),
// against the house rule that layers compute through Backend ops: the Backend has no comparison,
// bucketize or scatter-count op to compose them from, and this change may not add Backend
// virtuals. They see a handful of values per example, once per step, at the input of a model.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::detail {

// The values of x (any dtype, on any device) as int64 on the host, truncated toward zero as a
// cast to int is.
std::vector<std::int64_t> host_int64(const Tensor& x);

// Whether `mode` is one of Keras' encodings: "one_hot", "multi_hot", "count".
bool is_encoding_mode(const std::string& mode);

// Keras' output shape (per example, no batch axis) of encoding ids of per-example shape `in` into
// `depth` classes: one_hot replaces a last axis of 1 by depth (else appends it); multi_hot and
// count replace the last axis by depth.
Shape encoded_shape(const Shape& in, const std::string& mode, std::int64_t depth);

// Encodes the ids (full shape `shape`, batch first; each in [0, depth): the caller checks) as
// Keras' encode_categorical_inputs does, into a float32 tensor on `device`.
Tensor encode_categorical(const std::vector<std::int64_t>& ids, const Shape& shape, const std::string& mode,
                          std::int64_t depth, Device device);

}  // namespace kerascpp::detail
