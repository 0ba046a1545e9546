// EventFileWriter, the event file reader and CRC-32C: the framing on disk is checked with the
// library's TFRecord reader; the events are decoded with a small protobuf wire decoder written
// here, independent of the generated messages that both the writer and the reader use.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <unistd.h>
#include "temp_dir.hpp"

#include <algorithm>
#include <csignal>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "core/crc32c.hpp"
#include "io/event_file_reader.hpp"
#include "io/event_file_writer.hpp"
#include "kerascpp/error.hpp"

namespace fs = std::filesystem;
using kerascpp::detail::crc32c;
using kerascpp::detail::masked_crc32c;
using kerascpp::io::EventFileWriter;

namespace {
using kerascpp_test::TempDir;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::uint64_t load_le(const std::string& s, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

// The framing (length and data CRCs, records covering the file exactly) is checked by the
// library's reader, which throws on any fault; the protobuf decoding below stays independent.
std::vector<std::string> read_records(const std::string& path) { return kerascpp::io::read_tfrecords(path); }

// Protobuf wire format, just enough to inspect our events: varint, fixed64, bytes, fixed32.
struct Field {
  int number = 0;
  int wire_type = 0;
  std::uint64_t scalar = 0;  // varint, fixed32 or fixed64 payload
  std::string bytes;         // length-delimited payload
};

std::uint64_t read_varint(const std::string& s, std::size_t& at) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    REQUIRE(at < s.size());
    const auto b = static_cast<unsigned char>(s[at++]);
    v |= static_cast<std::uint64_t>(b & 0x7FU) << shift;
    if ((b & 0x80U) == 0) return v;
  }
  FAIL("varint longer than 10 bytes");
  return 0;
}

std::vector<Field> parse(const std::string& s) {
  std::vector<Field> fields;
  std::size_t at = 0;
  while (at < s.size()) {
    const std::uint64_t key = read_varint(s, at);
    Field f;
    f.number = static_cast<int>(key >> 3);
    f.wire_type = static_cast<int>(key & 7U);
    switch (f.wire_type) {
      case 0:
        f.scalar = read_varint(s, at);
        break;
      case 1:
        REQUIRE(at + 8 <= s.size());
        f.scalar = load_le(s, at, 8);
        at += 8;
        break;
      case 5:
        REQUIRE(at + 4 <= s.size());
        f.scalar = load_le(s, at, 4);
        at += 4;
        break;
      case 2: {
        const std::uint64_t len = read_varint(s, at);
        REQUIRE(at + len <= s.size());
        f.bytes = s.substr(at, len);
        at += len;
        break;
      }
      default:
        FAIL("unexpected wire type " << f.wire_type);
    }
    fields.push_back(std::move(f));
  }
  return fields;
}

std::optional<Field> field(const std::vector<Field>& fields, int number) {
  for (const Field& f : fields)
    if (f.number == number) return f;
  return std::nullopt;
}

std::string message(const std::vector<Field>& fields, int number) {
  auto f = field(fields, number);
  REQUIRE(f.has_value());
  REQUIRE(f->wire_type == 2);
  return f->bytes;
}

double as_double(std::uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

float as_float(std::uint64_t bits) {
  const auto b32 = static_cast<std::uint32_t>(bits);
  float f;
  std::memcpy(&f, &b32, sizeof f);
  return f;
}

// The one summary value of an event: (event fields, value fields).
struct Decoded {
  std::vector<Field> event, value, tensor;
  std::string plugin, content;
};

Decoded decode_summary_event(const std::string& record) {
  Decoded d;
  d.event = parse(record);
  const auto values = parse(message(d.event, 5));  // Event.summary
  REQUIRE(values.size() == 1);
  d.value = parse(values[0].bytes);  // Summary.value
  const auto plugin_data = parse(message(parse(message(d.value, 9)), 1));
  d.plugin = message(plugin_data, 1);
  if (auto c = field(plugin_data, 2)) d.content = c->bytes;
  d.tensor = parse(message(d.value, 8));  // Summary.Value.tensor
  return d;
}

std::vector<std::int64_t> dims(const std::vector<Field>& tensor) {
  std::vector<std::int64_t> out;
  auto shape = field(tensor, 2);
  if (!shape) return out;
  for (const Field& dim : parse(shape->bytes))
    if (dim.number == 2) out.push_back(static_cast<std::int64_t>(field(parse(dim.bytes), 1)->scalar));
  return out;
}

std::vector<double> histogram_rows(const std::string& record) {
  const Decoded d = decode_summary_event(record);
  CHECK(d.plugin == "histograms");
  CHECK(field(d.tensor, 1)->scalar == 2);  // DT_DOUBLE
  const std::string content = message(d.tensor, 4);
  std::vector<double> rows(content.size() / sizeof(double));
  std::memcpy(rows.data(), content.data(), rows.size() * sizeof(double));
  return rows;
}

double count_sum(const std::vector<double>& rows) {
  double sum = 0;
  for (std::size_t i = 2; i < rows.size(); i += 3) sum += rows[i];
  return sum;
}

}  // namespace

TEST_CASE("crc32c matches the published check values") {
  CHECK(crc32c("123456789", 9) == 0xE3069283U);
  CHECK(crc32c("", 0) == 0U);
  const std::string zeros(32, '\0');
  CHECK(crc32c(zeros.data(), zeros.size()) == 0x8A9136AAU);  // RFC 3720 B.4
  const std::string vector =
      "\x1a\x11"
      "CRC test, one two";
  CHECK(masked_crc32c(vector.data(), vector.size()) == 0x5794D08AU);
}

TEST_CASE("event file: name, framing and first event") {
  TempDir dir;
  std::string path;
  {
    EventFileWriter writer((dir.path / "train").string());
    path = writer.path();
    CHECK(fs::path(path).parent_path() == dir.path / "train");
    const std::string name = fs::path(path).filename().string();
    CHECK(std::regex_match(name, std::regex(R"(events\.out\.tfevents\.\d{10}\..+\.\d+\.\d+\.v2)")));
    CHECK(name.find("." + std::to_string(getpid()) + ".") != std::string::npos);
    EventFileWriter second(dir.path.string() + "/train");
    CHECK(second.path() != path);
  }
  const auto records = read_records(path);
  REQUIRE(records.size() == 1);
  const auto first = parse(records[0]);
  CHECK(message(first, 3) == "brain.Event:2");  // Event.file_version
  const auto wall_time = field(first, 1);
  REQUIRE(wall_time.has_value());
  CHECK(as_double(wall_time->scalar) > 1.5e9);
}

TEST_CASE("scalar event decodes to tag, plugin, value and step") {
  TempDir dir;
  EventFileWriter writer(dir.path.string());
  writer.add_scalar("epoch_loss", 0.25, 3);
  writer.add_scalar("epoch_accuracy", 0.875, 7);
  writer.flush();
  const auto records = read_records(writer.path());
  REQUIRE(records.size() == 3);

  const Decoded d = decode_summary_event(records[1]);
  CHECK(field(d.event, 2)->scalar == 3);  // Event.step
  CHECK(message(d.value, 1) == "epoch_loss");
  CHECK(d.plugin == "scalars");
  CHECK(d.content.empty());
  CHECK(field(d.tensor, 1)->scalar == 1);           // DT_FLOAT
  CHECK(dims(d.tensor).empty());                    // rank 0
  const std::string packed = message(d.tensor, 5);  // float_val, packed
  REQUIRE(packed.size() == 4);
  CHECK(as_float(load_le(packed, 0, 4)) == 0.25f);

  const Decoded e = decode_summary_event(records[2]);
  CHECK(field(e.event, 2)->scalar == 7);
  CHECK(message(e.value, 1) == "epoch_accuracy");
  CHECK(as_float(load_le(message(e.tensor, 5), 0, 4)) == 0.875f);
}

TEST_CASE("histogram: [k, 3] rows whose counts sum to n") {
  TempDir dir;
  EventFileWriter writer(dir.path.string());
  std::vector<float> values;
  for (int i = 0; i < 1000; ++i) values.push_back(std::sin(0.37f * static_cast<float>(i)));
  writer.add_histogram("dense/kernel/histogram", values.data(), values.size(), 2);
  writer.add_histogram("few", values.data(), values.size(), 2, 4);
  const float same[] = {1.5f, 1.5f, 1.5f};
  writer.add_histogram("same", same, 3, 0, 5);
  writer.add_histogram("empty", nullptr, 0, 0);
  const float with_nan[] = {0.0f, NAN, 1.0f, INFINITY};
  writer.add_histogram("nan", with_nan, 4, 0, 2);
  const auto records = read_records(writer.path());
  REQUIRE(records.size() == 6);

  const Decoded d = decode_summary_event(records[1]);
  CHECK(message(d.value, 1) == "dense/kernel/histogram");
  CHECK(field(d.event, 2)->scalar == 2);
  CHECK(dims(d.tensor) == std::vector<std::int64_t>{30, 3});
  const auto rows = histogram_rows(records[1]);
  REQUIRE(rows.size() == 90);
  CHECK(count_sum(rows) == 1000.0);
  for (std::size_t b = 0; b + 1 < 30; ++b) CHECK(rows[b * 3 + 1] == rows[(b + 1) * 3]);
  CHECK(rows[0] == doctest::Approx(*std::min_element(values.begin(), values.end())));
  CHECK(rows[89 - 1] == *std::max_element(values.begin(), values.end()));

  CHECK(dims(decode_summary_event(records[2]).tensor) == std::vector<std::int64_t>{4, 3});
  CHECK(count_sum(histogram_rows(records[2])) == 1000.0);

  const auto single = histogram_rows(records[3]);  // one distinct value: all in the last bucket
  REQUIRE(single.size() == 15);
  CHECK(single[14] == 3.0);
  CHECK(count_sum(single) == 3.0);
  CHECK(single[0] == 1.5);

  const auto empty = histogram_rows(records[4]);  // like TF: zero rows, not a missing value
  CHECK(empty.size() == 90);
  CHECK(count_sum(empty) == 0.0);

  const auto finite = histogram_rows(records[5]);
  CHECK(finite == std::vector<double>{0.0, 0.5, 1.0, 0.5, 1.0, 1.0});

  CHECK_THROWS_AS(writer.add_histogram("bad", values.data(), values.size(), 0, 0), kerascpp::Error);
  CHECK_THROWS_AS(writer.add_scalar("", 1.0, 0), kerascpp::Error);
  CHECK(read_records(writer.path()).size() == 6);  // refused input wrote nothing
}

TEST_CASE("keras model config event") {
  TempDir dir;
  EventFileWriter writer(dir.path.string());
  const std::string json = R"({"class_name": "Functional", "config": {}})";
  writer.add_keras_model_config(json);
  const auto records = read_records(writer.path());
  REQUIRE(records.size() == 2);
  const Decoded d = decode_summary_event(records[1]);
  CHECK(message(d.value, 1) == "keras");
  CHECK(d.plugin == "graph_keras_model");
  CHECK(d.content == "1");
  CHECK(field(d.tensor, 1)->scalar == 7);      // DT_STRING
  CHECK(message(d.tensor, 8) == json);         // string_val
  CHECK_FALSE(field(d.event, 2).has_value());  // step 0 is the proto3 default
}

TEST_CASE("an impossible log dir throws kerascpp::Error naming it") {
  TempDir dir;
  // A regular file where a directory should be: fails even for root, unlike chmod.
  const fs::path blocker = dir.path / "not_a_dir";
  std::ofstream(blocker) << "x";
  const std::string log_dir = (blocker / "train").string();
  try {
    EventFileWriter writer(log_dir);
    FAIL("expected kerascpp::Error");
  } catch (const kerascpp::Error& e) { CHECK(std::string(e.what()).find(log_dir) != std::string::npos); }
  CHECK_THROWS_AS(EventFileWriter(blocker.string()), kerascpp::Error);
}

TEST_CASE("a failed write leaves whole records only, and later writes still land") {
  TempDir dir;
  EventFileWriter writer(dir.path.string());
  writer.add_scalar("epoch_loss", 1.0, 0);
  const auto size_before = fs::file_size(writer.path());
  std::vector<float> values(100, 0.5f);

  // Cap the file size mid-record: the kernel writes part of the record, then refuses.
  rlimit old_limit{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  rlimit capped = old_limit;
  capped.rlim_cur = size_before + 50;
  auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);
  REQUIRE(setrlimit(RLIMIT_FSIZE, &capped) == 0);
  bool threw = false;
  std::string what;
  try {
    writer.add_histogram("dense/kernel/histogram", values.data(), values.size(), 0);
  } catch (const kerascpp::Error& e) {
    threw = true;
    what = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  CHECK(threw);
  CHECK(what.find(writer.path()) != std::string::npos);
  CHECK(fs::file_size(writer.path()) == size_before);
  writer.add_scalar("epoch_loss", 0.5, 1);
  const auto records = read_records(writer.path());
  REQUIRE(records.size() == 3);
  CHECK(field(decode_summary_event(records[2]).event, 2)->scalar == 1);
}

TEST_CASE("event file reader: reads back what the writer wrote") {
  TempDir dir;
  EventFileWriter writer(dir.path.string());
  writer.add_scalar("epoch_loss", 0.25, 3);
  const float values[] = {0.0f, 1.0f, 2.0f};
  writer.add_histogram("h", values, 3, 4, 2);
  writer.add_keras_model_config("{}", 5);
  const auto events = kerascpp::io::read_event_file(writer.path());
  REQUIRE(events.size() == 4);
  CHECK(events[0].file_version == "brain.Event:2");
  CHECK(events[0].values.empty());
  CHECK(events[1].step == 3);
  REQUIRE(events[1].values.size() == 1);
  CHECK(events[1].values[0].tag == "epoch_loss");
  CHECK(events[1].values[0].plugin == "scalars");
  CHECK(events[1].values[0].floats == std::vector<float>{0.25f});
  CHECK(events[1].values[0].shape.empty());
  REQUIRE(events[2].values.size() == 1);
  CHECK(events[2].values[0].dtype == 2);  // DT_DOUBLE
  CHECK(events[2].values[0].shape == std::vector<std::int64_t>{2, 3});
  CHECK(events[2].values[0].tensor_content.size() == 6 * sizeof(double));
  REQUIRE(events[3].values.size() == 1);
  CHECK(events[3].values[0].plugin_content == "1");
  CHECK(events[3].values[0].strings == std::vector<std::string>{"{}"});
}

namespace {
// The IOError a damaged copy of a one-scalar event file gives; it must name the file.
std::string damaged_file_error(const std::string& bytes, const TempDir& dir) {
  const std::string path = dir.file("damaged.tfevents");
  std::ofstream(path, std::ios::binary) << bytes;
  try {
    kerascpp::io::read_event_file(path);
  } catch (const kerascpp::IOError& e) {
    const std::string what = e.what();
    CHECK(what.find(path) != std::string::npos);
    return what;
  }
  FAIL("expected kerascpp::IOError for a damaged event file");
  return {};
}
}  // namespace

TEST_CASE("event file reader: bad CRCs, truncation and junk are IOErrors naming file and offset") {
  TempDir dir;
  std::string good;
  {
    EventFileWriter writer(dir.file("logs"));
    writer.add_scalar("epoch_loss", 0.5, 1);
    good = read_bytes(writer.path());
  }
  const std::size_t second = 12 + load_le(good, 0, 8) + 4;  // offset of the scalar's record
  REQUIRE(second < good.size());

  std::string bad_data = good;
  bad_data[second + 14] ^= 0x01;
  CHECK(damaged_file_error(bad_data, dir).find("offset " + std::to_string(second) + " has a bad data checksum") !=
        std::string::npos);
  std::string bad_length = good;
  bad_length[second] ^= 0x40;
  CHECK(damaged_file_error(bad_length, dir).find("bad length checksum") != std::string::npos);
  CHECK(damaged_file_error(good.substr(0, good.size() - 1), dir).find("bytes follow its header") != std::string::npos);
  CHECK(damaged_file_error(good + "junk", dir).find("cut off inside its 12-byte header") != std::string::npos);

  // Valid framing around bytes that are not an Event: a field 1 (wall_time) with wire type 7.
  std::string frame;
  const std::string junk = "\x0f\xff";
  for (int i = 0; i < 8; ++i) frame.push_back(static_cast<char>(i == 0 ? junk.size() : 0));
  const std::uint32_t len_crc = masked_crc32c(frame.data(), 8);
  for (int i = 0; i < 4; ++i) frame.push_back(static_cast<char>(len_crc >> (8 * i)));
  frame += junk;
  const std::uint32_t data_crc = masked_crc32c(junk.data(), junk.size());
  for (int i = 0; i < 4; ++i) frame.push_back(static_cast<char>(data_crc >> (8 * i)));
  CHECK(damaged_file_error(good + frame, dir)
            .find("offset " + std::to_string(good.size()) + " is not an Event message") != std::string::npos);

  CHECK_THROWS_AS(kerascpp::io::read_event_file(dir.file("missing")), kerascpp::IOError);
  CHECK_THROWS_AS(kerascpp::io::read_event_file(dir.path.string()), kerascpp::IOError);
}
