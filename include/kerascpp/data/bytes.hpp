// Byte strings as tensors. kerascpp's Tensor has no string dtype, so a text line, a TFRecord
// record, a CSV string field or a bytes feature of a tf.train.Example is a 1-D uint8 tensor of
// its bytes, shape (n,) (n may be 0), where TensorFlow has a scalar tf.string.
#pragma once
#include <string>
#include <string_view>

#include "kerascpp/tensor/tensor.hpp"

/// Datasets over files (tf.data's TextLineDataset, TFRecordDataset, CsvDataset) and tf.train.Example records.
namespace kerascpp::data {

/// A new uint8 tensor of shape (bytes.size(),) on the host holding a copy of the bytes.
Tensor bytes_tensor(std::string_view bytes);

/// The bytes a uint8 tensor holds, row-major (a GPU tensor is copied to the host first). Throws
/// ShapeError for any other dtype.
std::string tensor_bytes(const Tensor& t);

}  // namespace kerascpp::data
