// CIFAR-10 and CIFAR-100 "binary version" files (data_batch_1.bin ... test_batch.bin; train.bin,
// test.bin), what the official ResNet's cifar10_main reads. A CIFAR-10 record is 1 label byte and
// 3072 pixel bytes (1024 red, 1024 green, 1024 blue, rows of 32); CIFAR-100's has a coarse and a
// fine label byte before the pixels.
#pragma once
#include <string>
#include <vector>

#include "kerascpp/data/dataset.hpp"

namespace kerascpp::data {

/// Which CIFAR files, which label, and the image dtype.
struct CifarOptions {
  std::int64_t num_classes = 10;    ///< 10 (CIFAR-10) or 100 (CIFAR-100, two label bytes per record)
  std::string label_mode = "fine";  ///< CIFAR-100: "fine" (100 classes) or "coarse" (20 superclasses)
  DType dtype = DType::uint8;       ///< images as uint8, or float32 of the same values (0-255)
};

/// A streaming Dataset of (image (32, 32, 3) HWC, int32 label), records read as the iterator
/// reaches them; a file whose size is not a whole number of records is an IOError naming it.
Dataset CifarBinaryDataset(std::vector<std::string> filenames, CifarOptions options = {});

/// All records of the files in memory: images uint8 (N, 32, 32, 3), labels int32 (N,).
struct CifarArrays {
  /// uint8 (N, 32, 32, 3).
  Tensor images;
  /// int32 (N,).
  Tensor labels;
};
/// Reads whole CIFAR binary files (e.g. for Dataset::from_tensor_slices_scaled); IOError as above.
CifarArrays read_cifar_binary(const std::vector<std::string>& filenames, CifarOptions options = {});

}  // namespace kerascpp::data
