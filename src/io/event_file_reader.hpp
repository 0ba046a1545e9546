// Reading TensorBoard event files back: TFRecord framing checked record by record (length, masked
// CRC-32C of the length, data, masked CRC-32C of the data) and each record parsed as an Event.
// Used by the tests and the fuzz round trip to check what EventFileWriter wrote; plain structs
// keep the generated protobuf classes out of the header.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kerascpp::io {

// One Summary.Value. A TF1 `simple_value` scalar comes back as a rank-0 DT_FLOAT tensor with one
// float, like the TF2 form; TF1 `histo` values are not decoded (kerascpp never writes them).
struct EventValue {
  std::string tag;
  std::string plugin;                // metadata.plugin_data.plugin_name
  std::string plugin_content;        // metadata.plugin_data.content
  int dtype = 0;                     // TensorProto.dtype (tb::DataType: 1 float, 2 double, 7 string)
  std::vector<std::int64_t> shape;   // empty: a scalar
  std::vector<float> floats;         // float_val
  std::string tensor_content;        // raw little-endian elements (histograms)
  std::vector<std::string> strings;  // string_val
};

struct Event {
  double wall_time = 0;
  std::int64_t step = 0;
  std::string file_version;        // set in the first event of a file only ("brain.Event:2")
  std::vector<EventValue> values;  // the summary's values; empty for non-summary events
};

// The payloads of the TFRecords in `bytes`, which must be whole records end to end. `name` (the
// file) and the byte offset of the bad record appear in the IOError thrown for a bad CRC, a
// truncated record or trailing bytes.
std::vector<std::string> split_tfrecords(std::string_view bytes, const std::string& name);
std::vector<std::string> read_tfrecords(const std::string& path);

// split_tfrecords, then every payload parsed as an Event (IOError naming the record's offset if
// it is not one).
std::vector<Event> parse_events(std::string_view bytes, const std::string& name);
std::vector<Event> read_event_file(const std::string& path);

}  // namespace kerascpp::io
