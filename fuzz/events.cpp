// libFuzzer target for TensorBoard event files, two modes picked by the first byte:
//  - round trip: the bytes script a sequence of add_scalar / add_histogram /
//    add_keras_model_config calls (any tag bytes, steps, values including NaN/Inf, bucket
//    counts); the file is read back with read_event_file and must hold exactly those events;
//  - raw: the bytes are an event file given straight to parse_events.
// A kerascpp::Error from the reader on raw bytes is fine; from the writer only for arguments it
// documents as refused. Anything else (a crash, another exception, a mismatch) is a finding.
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/event_file_reader.hpp"
#include "io/event_file_writer.hpp"
#include "kerascpp/error.hpp"

namespace {

using kerascpp::io::Event;
using kerascpp::io::EventValue;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "events round trip: %s\n", what.c_str());
  std::abort();
}

template <typename T>
T from_bits(FuzzedDataProvider& in) {  // any bit pattern, NaN payloads and infinities included
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  const Bits bits = in.ConsumeIntegral<Bits>();
  T v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// What one accepted call must produce when read back.
struct Expected {
  int kind = 0;  // 0 scalar, 1 histogram, 2 keras model config
  std::string tag;
  std::int64_t step = 0;
  float scalar = 0;
  std::vector<float> values;  // histogram input
  int buckets = 0;
  std::string json;
};

void check_histogram(const Expected& e, const EventValue& v) {
  if (v.plugin != "histograms" || v.dtype != 2) finding("histogram plugin or dtype");
  if (v.shape != std::vector<std::int64_t>{e.buckets, 3}) finding("histogram shape");
  const auto k = static_cast<std::size_t>(e.buckets);
  if (v.tensor_content.size() != k * 3 * sizeof(double)) finding("histogram content size");
  std::vector<double> rows(k * 3);
  std::memcpy(rows.data(), v.tensor_content.data(), v.tensor_content.size());
  double lo = INFINITY, hi = -INFINITY, finite = 0;
  for (float x : e.values)
    if (std::isfinite(x)) lo = std::min<double>(lo, x), hi = std::max<double>(hi, x), finite += 1;
  double counted = 0;
  for (std::size_t b = 0; b < k; ++b) {
    const double left = rows[b * 3], right = rows[b * 3 + 1], count = rows[b * 3 + 2];
    if (!(count >= 0) || count != std::floor(count)) finding("histogram count not a whole number");
    if (finite > 0 && !(left <= right)) finding("histogram bucket edges out of order");
    if (b > 0 && finite > 0 && left != rows[(b - 1) * 3 + 1]) finding("histogram buckets not contiguous");
    counted += count;
  }
  if (counted != finite) finding("histogram counts do not sum to the number of finite values");
  if (finite > 0 && (rows[0] != lo || rows[k * 3 - 2] != hi)) finding("histogram range is not [min, max]");
}

void check_event(const Expected& e, const Event& got) {
  if (got.step != e.step) finding("step");
  if (!std::isfinite(got.wall_time) || got.wall_time <= 0) finding("wall_time");
  if (got.values.size() != 1) finding("number of summary values");
  const EventValue& v = got.values[0];
  if (v.tag != e.tag) finding("tag");
  switch (e.kind) {
    case 0:
      if (v.plugin != "scalars" || v.dtype != 1 || !v.shape.empty() || v.floats.size() != 1 ||
          !same_bits(v.floats[0], e.scalar))
        finding("scalar");
      break;
    case 1:
      check_histogram(e, v);
      break;
    default:
      if (v.plugin != "graph_keras_model" || v.plugin_content != "1" || v.strings != std::vector{e.json})
        finding("keras model config");
  }
}

// The calls the writer documents as refused (see event_file_writer.hpp).
bool may_refuse(const Expected& e) { return !kerascpp::io::valid_summary_tag(e.tag) || (e.kind == 1 && e.buckets < 1); }

void round_trip(FuzzedDataProvider& in) {
  static const std::string dir =
      (std::filesystem::temp_directory_path() / ("kerascpp_fuzz_events_" + std::to_string(::getpid()))).string();
  std::vector<Expected> expected;
  std::string path;
  {
    kerascpp::io::EventFileWriter writer(dir);
    path = writer.path();
    for (int calls = 0; calls < 8 && in.remaining_bytes() > 0; ++calls) {
      Expected e;
      e.kind = in.ConsumeIntegralInRange(0, 2);
      e.step = in.ConsumeIntegral<std::int64_t>();
      try {
        if (e.kind == 0) {
          e.tag = in.ConsumeRandomLengthString(64);
          const double value = from_bits<double>(in);
          e.scalar = static_cast<float>(value);
          writer.add_scalar(e.tag, value, e.step);
        } else if (e.kind == 1) {
          e.tag = in.ConsumeRandomLengthString(64);
          e.buckets = in.ConsumeIntegralInRange(-1, 64);
          const auto n = in.ConsumeIntegralInRange<std::size_t>(0, 64);
          for (std::size_t i = 0; i < n && in.remaining_bytes() > 0; ++i) e.values.push_back(from_bits<float>(in));
          writer.add_histogram(e.tag, e.values.data(), e.values.size(), e.step, e.buckets);
        } else {
          e.tag = "keras";
          e.json = in.ConsumeRandomLengthString(256);
          writer.add_keras_model_config(e.json, e.step);
        }
      } catch (const kerascpp::Error& err) {
        if (!may_refuse(e)) finding(std::string("writer refused a valid call: ") + err.what());
        continue;
      }
      if (may_refuse(e)) finding("writer accepted an empty or non-UTF-8 tag, or buckets < 1");
      expected.push_back(std::move(e));
    }
  }
  const std::vector<Event> events = kerascpp::io::read_event_file(path);  // must not throw
  std::filesystem::remove(path);
  if (events.size() != expected.size() + 1) finding("number of events");
  if (events[0].file_version != "brain.Event:2" || !events[0].values.empty()) finding("first event");
  for (std::size_t i = 0; i < expected.size(); ++i) check_event(expected[i], events[i + 1]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if (data[0] & 1U) {
    try {
      (void)kerascpp::io::parse_events(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1),
                                       "fuzz input");
    } catch (const kerascpp::Error&) {}
    return 0;
  }
  FuzzedDataProvider in(data + 1, size - 1);
  round_trip(in);
  return 0;
}
