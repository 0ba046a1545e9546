// tf.train.Example records: parse_single_example / parse_example read them as tf.io's parsers
// do, serialize_example writes them. The protobuf messages are TensorFlow's (example.proto and
// feature.proto, field numbers as published), so files written by TensorFlow read here and back.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::data {

/// tf.io.FixedLenFeature: exactly shape's element count of values, returned in that shape.
/// dtype is float32 (float_list), int64 (int64_list) or uint8 for bytes (bytes_list); a bytes
/// feature holds one string (shape () or (1)) and comes back as a 1-D uint8 tensor of its bytes,
/// as kerascpp has no tensor of strings. Without a default_value the feature is required; a
/// default has dtype's type and shape's element count (or one value, repeated).
struct FixedLenFeature {
  /// The shape of the values (() for one value).
  Shape shape{};
  /// float32, int64 or uint8 (bytes).
  DType dtype = DType::float32;
  /// Used when the feature is missing; undefined: the feature is required.
  Tensor default_value{};
};

/// tf.io.VarLenFeature: any number of values. TensorFlow returns a SparseTensor; kerascpp returns
/// the values as a dense 1-D tensor of length k (k = 0 when the feature is missing), and
/// parse_example pads each example's values with zeros to the longest. float32 or int64 only.
struct VarLenFeature {
  /// float32 or int64.
  DType dtype = DType::float32;
};

/// How to parse one feature.
using FeatureSpec = std::variant<FixedLenFeature, VarLenFeature>;
/// Feature name -> how to parse it.
using FeatureSpecs = std::map<std::string, FeatureSpec>;
/// Feature name -> its values.
using ParsedFeatures = std::map<std::string, Tensor>;

/// @{
/// One serialized tf.train.Example (a TFRecordDataset element, or its bytes) → one tensor per
/// feature in `features`. Features of the record that `features` does not name are ignored.
/// Throws IOError when the bytes are not an Example message, and ValueError naming the feature
/// when a required feature is missing, holds another type than its spec (float_list for int64,
/// ...) or, for a FixedLenFeature, another number of values than its shape.
ParsedFeatures parse_single_example(const Tensor& serialized, const FeatureSpecs& features);
ParsedFeatures parse_single_example(std::string_view serialized, const FeatureSpecs& features);
/// @}

/// A batch of serialized Examples → tensors with a leading batch axis: (B, *shape) for a
/// FixedLenFeature (bytes: (B, n), so all strings must have the same length n), (B, max k) for
/// a VarLenFeature. Errors name the example's index in the batch too.
ParsedFeatures parse_example(const std::vector<Tensor>& serialized, const FeatureSpecs& features);

/// The reverse: a tf.train.Example holding each tensor's values, row-major: float32 as a
/// float_list, int32 and int64 as an int64_list, uint8 as a bytes_list of one string (its bytes).
std::string serialize_example(const ParsedFeatures& features);

}  // namespace kerascpp::data
