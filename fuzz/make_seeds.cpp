// Writes the seed corpus fuzz/corpus/<target>/ from files the library itself makes, so that the
// fuzzers start from valid inputs: the fuzz model's weights (fresh, and a BackupAndRestore
// checkpoint after training, with optimizer slots and the kerascpp/ training state), IDX files of
// each element type raw and gzipped, and event files for both modes of the events target.
// Usage: make_seeds <corpus dir>. Re-run only when a format changes; the corpus is committed.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "data/idx_reader.hpp"
#include "fuzz_model.hpp"
#include "io/event_file_writer.hpp"

namespace fs = std::filesystem;
namespace K = kerascpp;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

void weights_seeds(const fs::path& out, const fs::path& scratch) {
  K::Model model = kerascpp_fuzz::make_fuzz_model();
  model.save_weights((out / "fresh.weights.h5").string());
  K::Tensor x({8, 3}), y({8}, K::DType::int32);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 5) - 2.0f;
  for (std::int64_t i = 0; i < 8; ++i) y.data<std::int32_t>()[i] = static_cast<std::int32_t>(i % 2);
  auto ref = std::make_shared<K::callbacks::BackupAndRestore>(
      (scratch / "backup").string(), K::callbacks::BackupAndRestoreOptions{.delete_checkpoint = false});
  model.fit(K::Dataset::from_tensor_slices(x, y).batch(4), {.epochs = 1, .callbacks = {ref}, .verbose = 0});
  fs::copy_file(ref->checkpoint_path(), out / "checkpoint.weights.h5", fs::copy_options::overwrite_existing);
}

void idx_seeds(const fs::path& out) {
  K::Tensor images({2, 3, 3}, K::DType::uint8), labels({4}, K::DType::int32), floats({2, 2}, K::DType::float32);
  for (std::int64_t i = 0; i < images.numel(); ++i) images.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(i * 13);
  for (std::int64_t i = 0; i < labels.numel(); ++i) labels.data<std::int32_t>()[i] = static_cast<std::int32_t>(i - 1);
  for (std::int64_t i = 0; i < floats.numel(); ++i) floats.data<float>()[i] = 0.5f * static_cast<float>(i);
  K::write_idx((out / "images-idx3-ubyte").string(), images, false);
  K::write_idx((out / "images-idx3-ubyte.gz").string(), images, true);
  K::write_idx((out / "labels-idx1-int32").string(), labels, false);
  K::write_idx((out / "floats-idx2-float32.gz").string(), floats, true);
}

void event_seeds(const fs::path& out, const fs::path& scratch) {
  std::string path;
  {
    K::io::EventFileWriter writer((scratch / "logs").string());
    path = writer.path();
    writer.add_scalar("epoch_loss", 0.25, 1);
    const float values[] = {0.0f, 1.0f, 1.0f, 3.0f};
    writer.add_histogram("dense/kernel/histogram", values, 4, 2, 3);
    writer.add_keras_model_config(R"({"class_name": "Functional"})");
  }
  put(out / "raw-event-file", "\x01" + slurp(path));  // odd first byte: raw mode
  // Even first byte: round-trip scripts (the bytes FuzzedDataProvider turns into calls).
  put(out / "script-scalar", std::string("\x00\x00", 2) + "epoch_loss\\\x01\x02\x03\x04\x05\x06\x07\x08\x09");
  put(out / "script-mixed", std::string("\x00", 1) +
                                "kernel\\\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0"
                                "bias\\\x7f\x80\x00\x00\xff\xff\x7f\x7f\x01\x02\x03");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
    return 2;
  }
  const fs::path corpus = argv[1];
  const fs::path scratch = fs::temp_directory_path() / "kerascpp_make_seeds";
  fs::remove_all(scratch);
  for (const char* target : {"weights_h5", "idx", "events"}) fs::create_directories(corpus / target);
  weights_seeds(corpus / "weights_h5", scratch);
  idx_seeds(corpus / "idx");
  event_seeds(corpus / "events", scratch);
  fs::remove_all(scratch);
  return 0;
}
