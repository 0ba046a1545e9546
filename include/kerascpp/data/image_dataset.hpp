// image_dataset_from_directory: a Dataset of (image, label) from a folder of image files, with
// Keras 3's arguments, defaults, file order, labels and training/validation split.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kerascpp/data/dataset.hpp"

namespace kerascpp::data {

/// Keras' `labels`: "inferred" (from sub-folder names) or one integer label per file.
using ImageLabels = std::variant<std::string, std::vector<std::int64_t>>;

/// keras.utils.image_dataset_from_directory's arguments and defaults (std::nullopt is Keras' None).
struct ImageDatasetOptions {
  /// "inferred": each sub-folder of `directory` is a class; a list: labels of the files in the
  /// order Keras lists them (alphanumeric, sub-folders included); std::nullopt: images only.
  std::optional<ImageLabels> labels = ImageLabels{"inferred"};
  /// "int" (int32 scalar), "categorical" (float32 one-hot), "binary" (float32 (1,), two classes
  /// only) or std::nullopt (images only).
  std::optional<std::string> label_mode = "int";
  /// With labels "inferred": the sub-folders to use, in this order (empty: all, alphanumeric).
  std::vector<std::string> class_names{};
  std::string color_mode = "rgb";                    ///< "grayscale", "rgb" or "rgba": 1, 3 or 4 channels
  std::optional<std::int64_t> batch_size = 32;       ///< std::nullopt: single images
  std::array<std::int64_t, 2> image_size{256, 256};  ///< (height, width) every image is resized to
  /// Shuffle the order of the files.
  bool shuffle = true;
  std::optional<std::uint64_t> seed{};     ///< required with validation_split and shuffle
  double validation_split = 0.0;           ///< 0: no split; else in (0, 1), with subset
  std::string subset{};                    ///< "training", "validation", "both" or "" (none)
  std::string interpolation = "bilinear";  ///< "bilinear" or "nearest"
  bool follow_links = false;               ///< descend into symlinked sub-folders
  bool crop_to_aspect_ratio = false;       ///< centre-crop to image_size's aspect ratio before resizing
  bool pad_to_aspect_ratio = false;        ///< resize keeping the aspect ratio, pad with zeros (not with crop)
};

/// What Keras returns: the dataset and its class_names and file_paths attributes.
struct ImageDirectoryDataset {
  Dataset dataset;                       ///< subset "both": the training part
  std::vector<std::string> class_names;  ///< empty with labels std::nullopt
  std::vector<std::string> file_paths;   ///< in the order before the dataset's shuffle buffer
  /// subset "both" only: the validation part (not shuffled by the buffer, as in Keras).
  Dataset validation_dataset{};
  /// The files of validation_dataset (subset "both" only).
  std::vector<std::string> validation_file_paths{};
};

/// The image files (.jpeg, .jpg, .png; .bmp and .gif are listed but fail to decode) under
/// `directory` as a streaming dataset of float32 images (batch, height, width, channels) and labels.
ImageDirectoryDataset image_dataset_from_directory(const std::string& directory, ImageDatasetOptions options = {});

/// Keras' index_directory: the files and labels in Keras' order (shuffled as numpy's
/// RandomState(seed).shuffle when `shuffle`), and the class names.
struct ImageDirectoryIndex {
  /// The image files, in Keras' order.
  std::vector<std::string> file_paths;
  std::vector<std::int64_t> labels;  ///< empty with labels std::nullopt
  /// The classes, in label order.
  std::vector<std::string> class_names;
};
/// Lists `directory` as image_dataset_from_directory does, without reading any image.
ImageDirectoryIndex index_image_directory(const std::string& directory, const std::optional<ImageLabels>& labels,
                                          const std::vector<std::string>& class_names, bool shuffle, std::uint64_t seed,
                                          bool follow_links);

}  // namespace kerascpp::data
