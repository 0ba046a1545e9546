#include "io/event_file_writer.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <system_error>
#include <vector>

#include <google/protobuf/stubs/common.h>

#include "check.hpp"
#include "core/crc32c.hpp"
#include "kerascpp/error.hpp"
#include "tb_event.pb.h"

namespace kerascpp::io {
namespace {

// tensor_content is raw little-endian; we copy host doubles straight in.
static_assert(std::endian::native == std::endian::little, "event_file_writer assumes a little-endian host");

// Distinguishes files made by several writers in one process within the same second.
std::atomic<unsigned> g_file_counter{0};

double wall_time_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

void append_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFFU));
}

void require_tag(const std::string& tag, const std::string& path) {
  KERASCPP_CHECK_VALUE(!tag.empty(),
                       "TensorBoard event for {}: empty summary tag; give each scalar, "
                       "histogram or text a name such as \"epoch_loss\"",
                       path);
  // Found by fuzzing: protobuf serializes such a tag with only a logged warning, and then no
  // reader (TensorBoard's, ours) can parse the event, so refuse it before anything is written.
  KERASCPP_CHECK_VALUE(valid_summary_tag(tag),
                       "TensorBoard event for {}: summary tag {:?} is not valid UTF-8, so "
                       "TensorBoard could not read it; name the metric or layer in UTF-8",
                       path, tag);
}

// A summary event with one value carrying the plugin that TensorBoard should show it in.
tb::Summary::Value* add_value(tb::Event& event, const std::string& tag, std::int64_t step, const std::string& plugin,
                              const std::string& content) {
  event.set_wall_time(wall_time_now());
  event.set_step(step);
  tb::Summary::Value* value = event.mutable_summary()->add_value();
  value->set_tag(tag);
  auto* plugin_data = value->mutable_metadata()->mutable_plugin_data();
  plugin_data->set_plugin_name(plugin);
  plugin_data->set_content(content);
  return value;
}

// tf.summary.histogram's bucketing (tensorboard/plugins/histogram/summary_v2.py): equal-width
// buckets over [min, max], the maximum falls in the last bucket, a single distinct value goes
// entirely into the last bucket with both edges at that value. Rows are (left, right, count).
std::vector<double> histogram_rows(const float* values, std::size_t n, int buckets) {
  const auto k = static_cast<std::size_t>(buckets);
  std::vector<double> rows(k * 3, 0.0);
  double lo = INFINITY, hi = -INFINITY;
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = values[i];
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    ++count;
  }
  if (count == 0) return rows;
  const double range = hi - lo;
  if (range == 0.0) {
    for (std::size_t b = 0; b < k; ++b) rows[b * 3] = rows[b * 3 + 1] = hi;
    rows[(k - 1) * 3 + 2] = static_cast<double>(count);
    return rows;
  }
  const double width = range / static_cast<double>(k);
  for (std::size_t i = 0; i < n; ++i) {
    const double v = values[i];
    if (!std::isfinite(v)) continue;
    const auto b = std::min(static_cast<std::size_t>(std::floor((v - lo) / width)), k - 1);
    rows[b * 3 + 2] += 1.0;
  }
  const auto edge = [&](std::size_t b) {
    // The last edge is exactly the maximum, as TF ensures, whatever the rounding.
    return b == k ? hi : lo + range * static_cast<double>(b) / static_cast<double>(k);
  };
  for (std::size_t b = 0; b < k; ++b) {
    rows[b * 3] = edge(b);
    rows[b * 3 + 1] = edge(b + 1);
  }
  return rows;
}

}  // namespace

bool valid_summary_tag(const std::string& tag) {
  return !tag.empty() && tag.size() <= INT_MAX &&
         google::protobuf::internal::IsStructurallyValidUTF8(tag.data(), static_cast<int>(tag.size()));
}

EventFileWriter::EventFileWriter(const std::string& log_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(log_dir, ec);
  KERASCPP_CHECK_IO(!ec && fs::is_directory(log_dir),
                    "TensorBoard log directory '{}' cannot be created ({}); pass a "
                    "log_dir inside a writable directory",
                    log_dir, ec ? ec.message() : "a file of that name exists");

  const auto secs = static_cast<long long>(std::time(nullptr));
  const std::string host = host_name();
  const long pid = static_cast<long>(getpid());
  // O_EXCL: never append to someone else's file; on a clash (same host, pid and second, e.g.
  // two containers sharing a log dir) try the next counter value.
  int last_errno = 0;
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    const unsigned n = g_file_counter.fetch_add(1);
    path_ = (fs::path(log_dir) / fmt::format("events.out.tfevents.{:010d}.{}.{}.{}.v2", secs, host, pid, n)).string();
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    last_errno = errno;
    if (fd_ < 0 && last_errno != EEXIST) break;
  }
  KERASCPP_CHECK_IO(fd_ >= 0,
                    "TensorBoard event file '{}' cannot be created ({}); check that "
                    "the log directory is writable and not full",
                    path_, std::strerror(last_errno));

  tb::Event first;
  first.set_wall_time(wall_time_now());
  first.set_file_version("brain.Event:2");
  try {
    std::lock_guard lock(mutex_);
    write_record(first.SerializeAsString());
  } catch (...) {
    ::close(fd_);
    ::unlink(path_.c_str());  // an empty file would only show up as a run with no data
    throw;
  }
}

EventFileWriter::~EventFileWriter() {
  try {
    flush();
  } catch (...) {
    // Destructors must not throw; the caller had flush() to see this error.
  }
  ::close(fd_);
}

void EventFileWriter::add_scalar(const std::string& tag, double value, std::int64_t step) {
  require_tag(tag, path_);
  tb::Event event;
  auto* tensor = add_value(event, tag, step, "scalars", "")->mutable_tensor();
  tensor->set_dtype(tb::DT_FLOAT);
  tensor->mutable_tensor_shape();  // present and empty: rank 0
  tensor->add_float_val(static_cast<float>(value));
  std::lock_guard lock(mutex_);
  write_record(event.SerializeAsString());
}

void EventFileWriter::add_histogram(const std::string& tag, const float* values, std::size_t n, std::int64_t step,
                                    int buckets) {
  require_tag(tag, path_);
  KERASCPP_CHECK_VALUE(buckets >= 1,
                       "TensorBoard histogram '{}' for {}: buckets = {}; use at least 1 "
                       "(Keras uses 30)",
                       tag, path_, buckets);
  KERASCPP_CHECK_VALUE(values != nullptr || n <= 0,
                       "TensorBoard histogram '{}' for {}: values is null but n = {}; pass "
                       "the data pointer, or n = 0 for an empty histogram",
                       tag, path_, n);
  const std::vector<double> rows = histogram_rows(values, n, buckets);
  tb::Event event;
  auto* tensor = add_value(event, tag, step, "histograms", "")->mutable_tensor();
  tensor->set_dtype(tb::DT_DOUBLE);
  tensor->mutable_tensor_shape()->add_dim()->set_size(buckets);
  tensor->mutable_tensor_shape()->add_dim()->set_size(3);
  tensor->set_tensor_content(std::string(reinterpret_cast<const char*>(rows.data()), rows.size() * sizeof(double)));
  std::lock_guard lock(mutex_);
  write_record(event.SerializeAsString());
}

void EventFileWriter::add_keras_model_config(const std::string& json, std::int64_t step) {
  tb::Event event;
  auto* tensor = add_value(event, "keras", step, "graph_keras_model", "1")->mutable_tensor();
  tensor->set_dtype(tb::DT_STRING);
  tensor->mutable_tensor_shape();
  tensor->add_string_val(json);
  std::lock_guard lock(mutex_);
  write_record(event.SerializeAsString());
}

void EventFileWriter::flush() {
  std::lock_guard lock(mutex_);
  KERASCPP_CHECK_IO(fsync(fd_) == 0,
                    "TensorBoard event file '{}' could not be flushed to disk ({}); "
                    "check free space on that filesystem",
                    path_, std::strerror(errno));
}

void EventFileWriter::write_record(const std::string& event_bytes) {
  // TFRecord framing: length | masked crc(length bytes) | data | masked crc(data), little-endian.
  std::string record;
  record.reserve(event_bytes.size() + 16);
  append_le(record, event_bytes.size(), 8);
  append_le(record, detail::masked_crc32c(record.data(), 8), 4);
  record += event_bytes;
  append_le(record, detail::masked_crc32c(event_bytes.data(), event_bytes.size()), 4);
  std::size_t done = 0;
  while (done < record.size()) {
    const ssize_t wrote = ::write(fd_, record.data() + done, record.size() - done);
    if (wrote > 0) {
      done += static_cast<std::size_t>(wrote);
      continue;
    }
    if (wrote < 0 && errno == EINTR) continue;
    const int err = wrote < 0 ? errno : EIO;
    // A torn record would make TensorBoard stop reading at it, and every later record would
    // be unreadable; cut it off so the next write starts on a record boundary again.
    if (done > 0 && ::ftruncate(fd_, static_cast<off_t>(end_)) == 0) ::lseek(fd_, static_cast<off_t>(end_), SEEK_SET);
    throw IOError(
        fmt::format("TensorBoard event file '{}' could not be written ({}); check "
                    "free space and permissions",
                    path_, std::strerror(err)));
  }
  end_ += record.size();
}

}  // namespace kerascpp::io
