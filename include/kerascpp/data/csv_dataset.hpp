// CSV files: CsvDataset reads them as tf.data.experimental.CsvDataset does; make_csv_dataset
// builds a ready-to-fit pipeline of (features, label) batches from a glob of files with headers.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kerascpp/data/dataset.hpp"
#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::data {

/// One output column of CsvDataset: its dtype and what an empty field (or na_value) becomes. As
/// tf.data's record_defaults, a column given only a dtype is required (an empty field is an
/// error) and one given a value takes that value for an empty field. Spell them as
/// {DType::int64, 0.0f, std::int64_t{-1}, "unknown"}: required int64, float32 default 0, int64
/// default -1, bytes default "unknown".
struct CsvColumn {
  CsvColumn(DType dtype);                 ///< required; float32, int32, int64 or uint8 (bytes)
  CsvColumn(float default_value);         ///< float32 (a double literal too)
  CsvColumn(double default_value);        ///< float32
  CsvColumn(std::int32_t default_value);  ///< int32
  CsvColumn(std::int64_t default_value);  ///< int64
  CsvColumn(const char* default_value);   ///< bytes
  CsvColumn(std::string default_value);   ///< bytes

  /// The column's dtype (uint8: bytes).
  DType dtype = DType::float32;
  /// Whether an empty field is an error (no default given).
  bool required = true;
  double number = 0;         ///< the default of a numeric column
  std::int64_t integer = 0;  ///< the default of an int32 or int64 column
  std::string text{};        ///< the default of a bytes column
};

/// CsvDataset's settings, with tf.data's names and defaults.
struct CsvOptions {
  std::string compression_type{};  ///< "", "GZIP" or "ZLIB"
  bool header = false;             ///< skip each file's first record
  /// The character between fields.
  char field_delim = ',';
  /// RFC 4180 quoting: a field may be "quoted", where the delimiter and line breaks are data and
  /// "" stands for one quote. false: quotes are ordinary characters.
  bool use_quote_delim = true;
  std::string na_value{};  ///< a field equal to this counts as empty (as "" always does)
  /// The columns to read, by index from 0, increasing (one record default each); empty: every
  /// column, and a record must have exactly as many fields as there are record defaults.
  std::vector<int> select_cols{};
  std::vector<int> exclude_cols{};  ///< or: every column but these (increasing)
};

/// One element per record (line, unless a quoted field spans lines), files in order: one scalar
/// tensor per output column, bytes columns as 1-D uint8 tensors of their bytes. A record with
/// the wrong number of fields, a value that does not parse as its column's type, a required
/// field left empty, a stray quote or a quoted field that never closes is an IOError from next()
/// naming the file, the line (from 1) and the column (from 1). Line breaks are "\n", "\r\n" or
/// "\r"; an empty line is a record of one empty field, as in tf.data. cardinality() is kUnknown.
Dataset CsvDataset(std::vector<std::string> filenames, std::vector<CsvColumn> record_defaults, CsvOptions options = {});

/// make_csv_dataset's settings, with tf.data's names and defaults.
struct MakeCsvOptions {
  std::string label_name{};                     ///< the label column's header name; "" for none
  std::vector<std::string> select_columns{};    ///< header names to use as features (and label); empty: all
  char field_delim = ',';                       ///< the character between fields
  bool use_quote_delim = true;                  ///< RFC 4180 quoting, as CsvOptions
  std::string na_value{};                       ///< a field equal to this counts as empty
  std::string compression_type{};               ///< "", "GZIP" or "ZLIB"
  std::int64_t num_epochs = -1;                 ///< as tf: -1 (None) repeats forever; pass 1 for one pass
  bool shuffle = true;                          ///< shuffle the files and the rows
  std::int64_t shuffle_buffer_size = 10000;     ///< rows in the shuffle buffer
  std::optional<std::uint64_t> shuffle_seed{};  ///< unset: drawn from next_random_seed()
  std::int64_t num_rows_for_inference = 100;    ///< rows read to tell an int32 label from a float32 one
};

/// tf.data.experimental.make_csv_dataset for files whose first line is a header: the files
/// matching file_pattern (list_files, shuffled when options.shuffle), every selected column but
/// the label read as float32 and stacked, in header order, into features (batch, F), the label
/// as (batch,) int32 when its first num_rows_for_inference values are all integers, else float32.
/// tf returns a dict of one tensor per column; a Keras model here takes one features tensor.
/// Elements are (features, label), or (features) without a label_name. All files must have the
/// same header; empty fields are errors (no defaults). The remainder batch is dropped only when
/// num_epochs is -1, as in tf.
Dataset make_csv_dataset(const std::string& file_pattern, std::int64_t batch_size, MakeCsvOptions options = {});

}  // namespace kerascpp::data
