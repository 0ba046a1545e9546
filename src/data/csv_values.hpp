// Internal: the numbers of CSV fields, parsed as tf.data's CsvDataset accepts them: surrounding
// spaces and tabs ignored, an optional sign, the whole field consumed, in range of the type.
// Locale-independent (std::from_chars): "1.5" is one and a half wherever the program runs.
#pragma once
#include <cstdint>
#include <string_view>

namespace kerascpp::detail {

bool parse_csv_int32(std::string_view field, std::int32_t& out);
bool parse_csv_int64(std::string_view field, std::int64_t& out);
bool parse_csv_float(std::string_view field, float& out);  // also "inf", "-inf", "nan"

}  // namespace kerascpp::detail
