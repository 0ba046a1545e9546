// make_csv_dataset: files with a header → batches of (features float32 (B, F), label (B,)).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "check.hpp"
#include "data/csv_dataset_config.hpp"
#include "data/csv_record.hpp"
#include "data/csv_values.hpp"
#include "kerascpp/data/csv_dataset.hpp"
#include "kerascpp/data/list_files.hpp"

namespace kerascpp::data {
namespace {

constexpr const char* kMakeCsvDatasetOp = "make_csv_dataset";

std::size_t column_of(const std::vector<std::string>& header, const std::string& name, const std::string& file) {
  const auto it = std::find(header.begin(), header.end(), name);
  KERASCPP_CHECK_VALUE(it != header.end(), "{}: no column '{}' in the header of '{}'; its columns are [{}]",
                       kMakeCsvDatasetOp, name, file, fmt::join(header, ", "));
  return static_cast<std::size_t>(it - header.begin());
}

// int32 when the label's first `rows` values all are integers in range, else float32 (tf.data
// infers a column's type from its first rows the same way).
DType infer_label_dtype(kerascpp::detail::CsvRecordReader& records, std::size_t label, std::int64_t rows) {
  std::vector<std::string> fields;
  for (std::int64_t r = 0; r < rows && records.next(fields);) {
    if (label >= fields.size()) continue;  // CsvDataset reports the short record when it reads it
    std::int32_t v = 0;
    if (!kerascpp::detail::parse_csv_int32(fields[label], v)) return DType::float32;
    ++r;
  }
  return DType::int32;
}

}  // namespace

Dataset make_csv_dataset(const std::string& file_pattern, std::int64_t batch_size, MakeCsvOptions options) {
  KERASCPP_CHECK_VALUE(batch_size > 0, "{}: batch_size must be positive; got {}", kMakeCsvDatasetOp, batch_size);
  std::vector<std::string> files = list_files(file_pattern, {options.shuffle, options.shuffle_seed});
  const kerascpp::detail::Compression compression =
      kerascpp::detail::parse_compression(options.compression_type, kMakeCsvDatasetOp);
  kerascpp::detail::CsvRecordReader first(files[0], compression, {options.field_delim, options.use_quote_delim},
                                          kMakeCsvDatasetOp);
  std::vector<std::string> header;
  KERASCPP_CHECK_VALUE(first.next(header), "{}: '{}' is empty; it needs a header line", kMakeCsvDatasetOp, files[0]);

  std::vector<std::size_t> columns;  // the columns read, increasing
  if (options.select_columns.empty()) {
    for (std::size_t i = 0; i < header.size(); ++i) columns.push_back(i);
  } else {
    for (const auto& name : options.select_columns) columns.push_back(column_of(header, name, files[0]));
  }
  std::optional<std::size_t> label;
  if (!options.label_name.empty()) {
    label = column_of(header, options.label_name, files[0]);
    columns.push_back(*label);  // read even when select_columns leaves it out
  }
  std::sort(columns.begin(), columns.end());
  columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
  KERASCPP_CHECK_VALUE(columns.size() != (label ? 1u : 0u), "{}: no feature columns are left besides the label '{}'",
                       kMakeCsvDatasetOp, options.label_name);

  const DType label_dtype = label ? infer_label_dtype(first, *label, options.num_rows_for_inference) : DType::float32;
  auto config = std::make_shared<kerascpp::detail::CsvConfig>();
  config->compression = compression;
  config->options.header = true;
  config->options.field_delim = options.field_delim;
  config->options.use_quote_delim = options.use_quote_delim;
  config->options.na_value = options.na_value;
  config->expected_header = header;
  std::size_t label_slot = 0;  // the label's place among the columns read
  for (std::size_t k = 0; k < columns.size(); ++k) {
    config->options.select_cols.push_back(static_cast<int>(columns[k]));
    const bool is_label = label && columns[k] == *label;
    if (is_label) label_slot = k;
    config->columns.emplace_back(is_label ? label_dtype : DType::float32);  // required: no defaults
  }
  Dataset ds = kerascpp::detail::make_csv_dataset_from(std::move(files), std::move(config));

  const bool has_label = label.has_value();
  ds = ds.map([has_label, label_slot](const Example& e) {
    const std::int64_t f = static_cast<std::int64_t>(e.size()) - (has_label ? 1 : 0);
    Tensor features({f}, DType::float32, Device{});
    float* out = features.data<float>();
    for (std::size_t k = 0; k < e.size(); ++k)
      if (!has_label || k != label_slot) *out++ = *e[k].data<float>();
    return has_label ? Example{features, e[label_slot]} : Example{features};
  });
  if (options.shuffle) ds = ds.shuffle(options.shuffle_buffer_size, options.shuffle_seed);
  if (options.num_epochs != 1) ds = ds.repeat(options.num_epochs);
  return ds.batch(batch_size, /*drop_remainder=*/options.num_epochs == -1);
}

}  // namespace kerascpp::data
