// Internal: a Dataset that reads files one after another, each through an ElementReader that the
// source opens when the iterator reaches the file (TextLineDataset, TFRecordDataset, CsvDataset).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kerascpp/data/dataset.hpp"

namespace kerascpp::detail {

class ElementReader {
 public:
  virtual ~ElementReader() = default;
  // The file's next element into `out`, or false at its end.
  virtual bool next(Example& out) = 0;
};

using OpenReader = std::function<std::unique_ptr<ElementReader>(const std::string& path)>;

// Elements of files[0], then files[1], ...; cardinality() kUnknown, as tf.data's file sources.
Dataset make_file_source(std::vector<std::string> files, OpenReader open);

}  // namespace kerascpp::detail
