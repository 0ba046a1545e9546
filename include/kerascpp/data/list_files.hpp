// list_files: the files matching a glob pattern, as tf.data.Dataset.list_files.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace kerascpp::data {

/// list_files' settings, with tf.data's defaults.
struct ListFilesOptions {
  /// As tf.data: shuffled unless told otherwise. Not shuffled, the names come in byte order.
  bool shuffle = true;
  /// The shuffled order is a function of the seed alone; without one a seed is drawn from
  /// next_random_seed() (kerascpp/core/random.hpp), so set_random_seed makes it reproducible.
  std::optional<std::uint64_t> seed{};
};

/// The paths matching `pattern` (glob(3): *, ?, [...]; no ~ or {} expansion), directories
/// included as glob lists them. Throws IOError when nothing matches, as tf.data does. Unlike
/// tf.data, which returns a Dataset of file names, this returns the list, ready for
/// TextLineDataset, TFRecordDataset or CsvDataset; shuffle it again per epoch yourself if needed.
std::vector<std::string> list_files(const std::string& pattern, ListFilesOptions options = {});
/// The union of several patterns' matches (each path once), then sorted or shuffled as above.
std::vector<std::string> list_files(const std::vector<std::string>& patterns, ListFilesOptions options = {});
/// list_files({"a/*.csv", "b/*.csv"}): without it the braces would be ambiguous.
std::vector<std::string> list_files(std::initializer_list<std::string> patterns, ListFilesOptions options = {});

}  // namespace kerascpp::data
