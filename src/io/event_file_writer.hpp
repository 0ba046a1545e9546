// EventFileWriter: appends TensorBoard events (scalars, histograms, the Keras model config)
// to one events.out.tfevents.* file, as Keras's TensorBoard callback does for each run.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace kerascpp::io {

// Whether `tag` can name a summary: not empty, and valid UTF-8 (Summary.Value.tag is a protobuf
// string; TensorBoard cannot parse an event whose tag is not). The add_* calls refuse other tags
// with a ValueError.
bool valid_summary_tag(const std::string& tag);

class EventFileWriter {
 public:
  // Creates log_dir (recursively) and a fresh file
  // events.out.tfevents.<10-digit secs>.<hostname>.<pid>.<n>.v2 in it (n counts writers in
  // this process), then writes the first event: wall_time + file_version "brain.Event:2".
  // Throws kerascpp::Error naming the directory or file when either cannot be made.
  explicit EventFileWriter(const std::string& log_dir);
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;
  // Flushes and closes; never throws (a failure here has nobody left to tell).
  ~EventFileWriter();

  // Rank-0 DT_FLOAT tensor under plugin "scalars", as tf.summary.scalar writes it.
  void add_scalar(const std::string& tag, double value, std::int64_t step);

  // TF2 histogram: a DT_DOUBLE [buckets, 3] tensor of rows (left, right, count) under plugin
  // "histograms", bucketed like tf.summary.histogram. Non-finite values are left out (TF
  // would turn the whole histogram into NaNs). Empty input gives all-zero rows, as TF does.
  void add_histogram(const std::string& tag, const float* values, std::size_t n, std::int64_t step, int buckets = 30);

  // The model's JSON config under tag "keras", plugin "graph_keras_model" (content "1"):
  // what TensorBoard's graph dashboard shows as the Keras model.
  void add_keras_model_config(const std::string& json, std::int64_t step = 0);

  // Makes the records written so far durable (fsync). Each record already reaches the OS
  // with its own write, so TensorBoard, which tails the file, sees it without a flush;
  // callers flush after epoch-level events, not after every batch.
  void flush();

  const std::string& path() const { return path_; }

 private:
  // Frames one serialized Event as a TFRecord and writes it with a single write; a failed
  // write is cut back off so that the file stays a valid sequence of whole records.
  void write_record(const std::string& event_bytes);

  std::string path_;
  int fd_ = -1;
  std::uint64_t end_ = 0;  // end of the last whole record written
  std::mutex mutex_;
};

}  // namespace kerascpp::io
