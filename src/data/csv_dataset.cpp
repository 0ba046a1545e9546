// CsvDataset: one element per CSV record, one scalar tensor per selected column.
#include "kerascpp/data/csv_dataset.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "check.hpp"
#include "data/csv_dataset_config.hpp"
#include "data/csv_record.hpp"
#include "data/csv_values.hpp"
#include "data/file_source.hpp"
#include "kerascpp/data/bytes.hpp"

namespace kerascpp::data {

CsvColumn::CsvColumn(DType dtype) : dtype(dtype) {}
CsvColumn::CsvColumn(float default_value) : required(false), number(default_value) {}
CsvColumn::CsvColumn(double default_value) : required(false), number(default_value) {}
CsvColumn::CsvColumn(std::int32_t default_value) : dtype(DType::int32), required(false), integer(default_value) {}
CsvColumn::CsvColumn(std::int64_t default_value) : dtype(DType::int64), required(false), integer(default_value) {}
CsvColumn::CsvColumn(const char* default_value) : dtype(DType::uint8), required(false), text(default_value) {}
CsvColumn::CsvColumn(std::string default_value)
    : dtype(DType::uint8), required(false), text(std::move(default_value)) {}

namespace {

constexpr const char* kCsvDatasetOp = "CsvDataset";

template <class T>
Tensor scalar(DType dtype, T value) {
  Tensor t({}, dtype, Device{});
  *static_cast<T*>(t.raw()) = value;
  return t;
}

class CsvReader final : public detail::ElementReader {
 public:
  CsvReader(const std::string& path, std::shared_ptr<const detail::CsvConfig> config)
      : config_(std::move(config)),
        records_(path, config_->compression, {config_->options.field_delim, config_->options.use_quote_delim},
                 kCsvDatasetOp) {
    if (config_->options.header && records_.next(fields_) && !config_->expected_header.empty() &&
        fields_ != config_->expected_header)
      records_.fail(1, 1,
                    fmt::format("the header is [{}] but the first file's was [{}]; every file needs the same columns",
                                fmt::join(fields_, ", "), fmt::join(config_->expected_header, ", ")));
  }

  bool next(Example& out) override {
    if (!records_.next(fields_)) return false;
    const CsvOptions& o = config_->options;
    const std::size_t ncols = config_->columns.size();
    out.clear();
    if (!o.select_cols.empty()) {
      if (fields_.size() <= static_cast<std::size_t>(o.select_cols.back()))
        fail_count(fmt::format("select_cols reads column {} (from 1)", o.select_cols.back() + 1));
      for (std::size_t k = 0; k < ncols; ++k) out.push_back(convert(static_cast<std::size_t>(o.select_cols[k]), k));
    } else if (!o.exclude_cols.empty()) {
      std::size_t e = 0;
      for (std::size_t i = 0; i < fields_.size(); ++i) {
        if (e < o.exclude_cols.size() && static_cast<std::size_t>(o.exclude_cols[e]) == i) {
          ++e;
          continue;
        }
        if (out.size() == ncols) fail_count(fmt::format("excluding {} columns leaves more than {}", e, ncols));
        out.push_back(convert(i, out.size()));
      }
      if (out.size() != ncols) fail_count(fmt::format("{} columns are needed after exclude_cols", ncols));
    } else {
      if (fields_.size() != ncols) fail_count(fmt::format("record_defaults has {} columns", ncols));
      for (std::size_t k = 0; k < ncols; ++k) out.push_back(convert(k, k));
    }
    return true;
  }

 private:
  [[noreturn]] void fail_count(const std::string& need) const {
    const bool blank = fields_.size() == 1 && fields_[0].empty();
    records_.fail(
        records_.record_line(), 1,
        fmt::format("the record has {} field{} but {}{}", fields_.size(), fields_.size() == 1 ? "" : "s", need,
                    blank ? " (an empty line is a record of one empty field, as in tf.data; remove it)" : ""));
  }

  // Field `i` of the record as output column `k`.
  Tensor convert(std::size_t i, std::size_t k) const {
    const std::string& field = fields_[i];
    const CsvColumn& col = config_->columns[k];
    const bool empty = field.empty() || field == config_->options.na_value;
    if (empty && col.required)
      records_.fail(records_.record_line(), i + 1,
                    fmt::format("the field is empty but record default {} gives only a dtype ({}), which makes the "
                                "column required; give it a default value instead",
                                k, dtype_name(col.dtype)));
    const auto bad = [&](const char* type) {
      records_.fail(records_.record_line(), i + 1, fmt::format("'{}' is not a valid {}", field, type));
    };
    switch (col.dtype) {
      case DType::int32: {
        std::int32_t v = static_cast<std::int32_t>(col.integer);
        if (!empty && !detail::parse_csv_int32(field, v)) bad("int32");
        return scalar(DType::int32, v);
      }
      case DType::int64: {
        std::int64_t v = col.integer;
        if (!empty && !detail::parse_csv_int64(field, v)) bad("int64");
        return scalar(DType::int64, v);
      }
      case DType::uint8:
        return bytes_tensor(empty ? col.text : field);
      default: {
        float v = static_cast<float>(col.number);
        if (!empty && !detail::parse_csv_float(field, v)) bad("float32");
        return scalar(DType::float32, v);
      }
    }
  }

  std::shared_ptr<const detail::CsvConfig> config_;
  detail::CsvRecordReader records_;
  std::vector<std::string> fields_;
};

void check_increasing(const std::vector<int>& cols, const char* name) {
  for (std::size_t i = 0; i < cols.size(); ++i)
    KERASCPP_CHECK_VALUE(cols[i] >= 0 && (i <= 0 || cols[i] > cols[i - 1]),
                         "{}: {} must be increasing column indices from 0; got [{}]", kCsvDatasetOp, name,
                         fmt::join(cols, ", "));
}

}  // namespace

}  // namespace kerascpp::data

namespace kerascpp::detail {

Dataset make_csv_dataset_from(std::vector<std::string> filenames, std::shared_ptr<const CsvConfig> config) {
  return make_file_source(std::move(filenames), [config](const std::string& path) {
    return std::make_unique<data::CsvReader>(path, config);
  });
}

}  // namespace kerascpp::detail

namespace kerascpp::data {

Dataset CsvDataset(std::vector<std::string> filenames, std::vector<CsvColumn> record_defaults, CsvOptions options) {
  KERASCPP_CHECK_VALUE(!record_defaults.empty(), "{}: record_defaults is empty; give one per column", kCsvDatasetOp);
  for (std::size_t k = 0; k < record_defaults.size(); ++k) {
    const DType d = record_defaults[k].dtype;
    KERASCPP_CHECK_VALUE(!(d != DType::float32 && d != DType::int32 && d != DType::int64 && d != DType::uint8),
                         "{}: record default {} has dtype {}; CSV columns are float32, int32, int64 or uint8 "
                         "(bytes)",
                         kCsvDatasetOp, k, dtype_name(d));
  }
  check_increasing(options.select_cols, "select_cols");
  check_increasing(options.exclude_cols, "exclude_cols");
  KERASCPP_CHECK_VALUE(options.select_cols.empty() || options.exclude_cols.empty(),
                       "{}: give select_cols or exclude_cols, not both", kCsvDatasetOp);
  KERASCPP_CHECK_VALUE(options.select_cols.empty() || options.select_cols.size() == record_defaults.size(),
                       "{}: select_cols names {} columns but record_defaults has {}; give one default per "
                       "selected column",
                       kCsvDatasetOp, options.select_cols.size(), record_defaults.size());
  const char d = options.field_delim;
  KERASCPP_CHECK_VALUE(d != '\n' && d != '\r' && (!options.use_quote_delim || d != '"'),
                       "{}: field_delim cannot be a line break or, with use_quote_delim, a quote", kCsvDatasetOp);
  auto config = std::make_shared<detail::CsvConfig>();
  config->compression = detail::parse_compression(options.compression_type, kCsvDatasetOp);
  config->columns = std::move(record_defaults);
  config->options = std::move(options);
  return detail::make_csv_dataset_from(std::move(filenames), std::move(config));
}

}  // namespace kerascpp::data
