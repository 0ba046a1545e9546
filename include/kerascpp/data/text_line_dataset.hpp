// TextLineDataset: the lines of text files, as tf.data.TextLineDataset.
#pragma once
#include <string>
#include <vector>

#include "kerascpp/data/dataset.hpp"

namespace kerascpp::data {

/// TextLineDataset's settings.
struct TextLineOptions {
  /// "" (plain files), "GZIP" or "ZLIB", as tf.data's compression_type.
  std::string compression_type{};
};

/// One element per line, files in the given order, each line a 1-D uint8 tensor of its bytes
/// (kerascpp/data/bytes.hpp) without the "\n" or "\r\n" that ends it; a last line without one
/// still counts, a file ending in "\n" has no empty line after it. Files are opened as the
/// iterator reaches them: a missing or unreadable file is an IOError from the iterator's next().
/// cardinality() is Dataset::kUnknown. Lines differ in length, so map() them to fixed shapes
/// before batch().
Dataset TextLineDataset(std::vector<std::string> filenames, TextLineOptions options = {});

}  // namespace kerascpp::data
