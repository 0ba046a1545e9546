#include "data/csv_values.hpp"

#include <charconv>
#include <system_error>

namespace kerascpp::detail {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  // from_chars takes a '-' but no '+'.
  if (s.size() > 1 && s.front() == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
  return s;
}

template <class T>
bool parse(std::string_view field, T& out) {
  const std::string_view s = trim(field);
  if (s.empty()) return false;
  T value{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size()) return false;
  out = value;
  return true;
}

}  // namespace

bool parse_csv_int32(std::string_view field, std::int32_t& out) { return parse(field, out); }
bool parse_csv_int64(std::string_view field, std::int64_t& out) { return parse(field, out); }
bool parse_csv_float(std::string_view field, float& out) { return parse(field, out); }

}  // namespace kerascpp::detail
