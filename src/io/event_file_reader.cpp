#include "io/event_file_reader.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "check.hpp"
#include "core/crc32c.hpp"
#include "tb_event.pb.h"

namespace kerascpp::io {
namespace {

constexpr const char* kFix = "the file is truncated or corrupt; delete it or let the writer re-create it";

std::uint64_t load_le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

std::string read_whole_file(const std::string& path) {
  std::error_code ec;
  KERASCPP_CHECK_IO(!std::filesystem::is_directory(path, ec),
                    "TensorBoard event file '{}' is a directory; pass one events.out.tfevents.* file in it", path);
  std::ifstream in(path, std::ios::binary);
  KERASCPP_CHECK_IO(in.good(), "TensorBoard event file '{}' cannot be opened ({}); check the path", path,
                    std::strerror(errno));
  std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  KERASCPP_CHECK_IO(!in.bad(), "TensorBoard event file '{}' could not be read; check the disk", path);
  return bytes;
}

EventValue convert_value(const tb::Summary::Value& v) {
  EventValue out;
  out.tag = v.tag();
  out.plugin = v.metadata().plugin_data().plugin_name();
  out.plugin_content = v.metadata().plugin_data().content();
  if (v.has_simple_value()) {
    out.dtype = tb::DT_FLOAT;
    out.floats.push_back(v.simple_value());
  } else if (v.has_tensor()) {
    const tb::TensorProto& t = v.tensor();
    out.dtype = t.dtype();
    for (const auto& dim : t.tensor_shape().dim()) out.shape.push_back(dim.size());
    out.floats.assign(t.float_val().begin(), t.float_val().end());
    out.tensor_content = t.tensor_content();
    out.strings.assign(t.string_val().begin(), t.string_val().end());
  }
  return out;
}

}  // namespace

std::vector<std::string> split_tfrecords(std::string_view bytes, const std::string& name) {
  std::vector<std::string> records;
  std::size_t at = 0;
  while (at < bytes.size()) {
    const std::size_t left = bytes.size() - at;
    KERASCPP_CHECK_IO(left >= 12,
                      "TensorBoard event file '{}': record at byte offset {} is cut off inside its 12-byte header "
                      "({} bytes left); {}",
                      name, at, left, kFix);
    const char* p = bytes.data() + at;
    const std::uint64_t len = load_le(p, 8);
    KERASCPP_CHECK_IO(load_le(p + 8, 4) == detail::masked_crc32c(p, 8),
                      "TensorBoard event file '{}': record at byte offset {} has a bad length checksum; {}", name, at,
                      kFix);
    // Compared without adding to len, which the file controls and could wrap.
    KERASCPP_CHECK_IO(len <= left - 12 && left - 12 - len >= 4,
                      "TensorBoard event file '{}': record at byte offset {} declares {} data bytes but only {} "
                      "bytes follow its header; {}",
                      name, at, len, left - 12, kFix);
    const char* data = p + 12;
    KERASCPP_CHECK_IO(load_le(data + len, 4) == detail::masked_crc32c(data, len),
                      "TensorBoard event file '{}': record at byte offset {} has a bad data checksum; {}", name, at,
                      kFix);
    records.emplace_back(data, len);
    at += 12 + len + 4;
  }
  return records;
}

std::vector<std::string> read_tfrecords(const std::string& path) {
  return split_tfrecords(read_whole_file(path), path);
}

std::vector<Event> parse_events(std::string_view bytes, const std::string& name) {
  std::vector<Event> events;
  std::size_t offset = 0;
  for (const std::string& record : split_tfrecords(bytes, name)) {
    tb::Event e;
    KERASCPP_CHECK_IO(record.size() <= INT_MAX && e.ParseFromArray(record.data(), static_cast<int>(record.size())),
                      "TensorBoard event file '{}': record at byte offset {} is not an Event message; {}", name, offset,
                      kFix);
    Event out;
    out.wall_time = e.wall_time();
    out.step = e.step();
    out.file_version = e.file_version();
    for (const auto& v : e.summary().value()) out.values.push_back(convert_value(v));
    events.push_back(std::move(out));
    offset += record.size() + 16;
  }
  return events;
}

std::vector<Event> read_event_file(const std::string& path) { return parse_events(read_whole_file(path), path); }

}  // namespace kerascpp::io
