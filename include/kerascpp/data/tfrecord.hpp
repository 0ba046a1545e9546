// TFRecord files: TFRecordDataset reads them as tf.data.TFRecordDataset does, TFRecordWriter
// writes them as tf.io.TFRecordWriter does. A record on disk is
//   uint64 length | uint32 masked CRC-32C of those 8 bytes | length bytes | uint32 masked CRC-32C of them
// (little-endian), the whole file optionally in one GZIP or ZLIB stream.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kerascpp/data/dataset.hpp"
#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::data {

/// TFRecordDataset's and TFRecordWriter's settings.
struct TFRecordOptions {
  /// "" (plain), "GZIP" or "ZLIB", as tf.data's and tf.io.TFRecordOptions' compression_type.
  std::string compression_type{};
};

/// One element per record, files in the given order, each record a 1-D uint8 tensor of its bytes
/// (kerascpp/data/bytes.hpp); parse tf.train.Example records with parse_single_example
/// (kerascpp/data/tf_example.hpp) in a map(). Files are opened and read as the iterator reaches them
/// (a record at a time, in bounded memory). Every bad record is an IOError from next() naming the
/// file, the record's index in it (from 0) and its byte offset (in the uncompressed stream for
/// GZIP/ZLIB), and what was expected: a length header cut short, data cut short, or a length or
/// data CRC that does not match. cardinality() is Dataset::kUnknown.
Dataset TFRecordDataset(std::vector<std::string> filenames, TFRecordOptions options = {});

/// Writes records to `path`. As every kerascpp writer, it writes a temporary file beside `path`
/// and renames it into place on close(), so `path` never holds half a file; the destructor closes
/// too, unless it runs during stack unwinding, where the temporary file is removed instead.
class TFRecordWriter {
 public:
  /// Starts the temporary file beside `path`.
  explicit TFRecordWriter(std::string path, TFRecordOptions options = {});
  /// close(), or during stack unwinding removes the temporary file.
  ~TFRecordWriter();
  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;

  /// Appends one record.
  void write(std::string_view record);
  void write(const Tensor& record);  ///< a uint8 tensor's bytes (kerascpp/data/bytes.hpp)
  void flush();                      ///< what was written so far reaches the temporary file
  void close();                      ///< finishes the file and moves it to `path`; idempotent

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kerascpp::data
