// Internal: what every file of one CsvDataset is read with; shared by make_csv_dataset, which
// also checks that each file's header matches the first file's.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "data/byte_stream.hpp"
#include "kerascpp/data/csv_dataset.hpp"

namespace kerascpp::detail {

struct CsvConfig {
  Compression compression = Compression::none;
  std::vector<data::CsvColumn> columns;
  data::CsvOptions options;
  std::vector<std::string> expected_header;  // empty: any header is skipped unchecked
};

// CsvDataset after its arguments were checked.
Dataset make_csv_dataset_from(std::vector<std::string> filenames, std::shared_ptr<const CsvConfig> config);

}  // namespace kerascpp::detail
