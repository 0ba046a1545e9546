// Shared by the integer preprocessing layers (CategoryEncoding, Discretization, IntegerLookup):
// reading integer ids on the host and Keras' encode_categorical_inputs (one_hot, multi_hot,
// count). These layers map a handful of ids per example to a short vector: host work between
// two copies is simpler than a chain of Backend ops and needs no new Backend virtual.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::detail {

// The values of x (int32, int64, uint8 or a float dtype, on any device) as int64 on the host;
// float values are truncated toward zero, as a cast to int is.
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
