#include "kerascpp/datasets/fashion_mnist.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "check.hpp"
#include "core/knobs.hpp"
#include "core/session_state.hpp"
#include "data/idx_reader.hpp"

namespace kerascpp::datasets::fashion_mnist {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultDir = "/usr/share/datasets/fashion-mnist";
constexpr std::int64_t kSide = 28;
constexpr int kNumClasses = 10;

// The package ships .gz files; an unpacked copy (as some mirrors hand out) works too.
std::string find_file(const std::string& dir, const std::string& base) {
  std::error_code ec;
  for (const std::string& name : {base + ".gz", base})
    if (fs::is_regular_file(fs::path(dir) / name, ec)) return (fs::path(dir) / name).string();
  return {};
}

std::string require_file(const std::string& dir, const std::string& base) {
  std::string path = find_file(dir, base);
  KERASCPP_CHECK_IO(!path.empty(),
                    "fashion_mnist: '{}' not found in '{}' (looked for {}.gz and {}); install the "
                    "Debian package dataset-fashion-mnist (it puts the files in {}), or set "
                    "KERASCPP_DATA (or pass --data_dir / load(dir)) to a directory holding them",
                    base, dir, base, base, kDefaultDir);
  return path;
}

void check_pair(const Tensor& images, const std::string& images_path, const Tensor& labels,
                const std::string& labels_path) {
  KERASCPP_CHECK_IO(
      !(images.dtype() != DType::uint8 || images.rank() != 3 || images.dim(1) != kSide || images.dim(2) != kSide),
      "fashion_mnist: '{}' holds {} {}, expected uint8 images of shape (N, 28, 28); "
      "is it the right file?",
      images_path, dtype_name(images.dtype()), shape_str(images.shape()));
  KERASCPP_CHECK_IO(labels.dtype() == DType::uint8 && labels.rank() == 1,
                    "fashion_mnist: '{}' holds {} {}, expected uint8 labels of shape (N,); is it the "
                    "right file?",
                    labels_path, dtype_name(labels.dtype()), shape_str(labels.shape()));
  KERASCPP_CHECK_IO(images.dim(0) == labels.dim(0),
                    "fashion_mnist: '{}' has {} images but '{}' has {} labels; the files come from "
                    "different sets, reinstall them",
                    images_path, images.dim(0), labels_path, labels.dim(0));
  const auto* y = labels.data<std::uint8_t>();
  for (std::int64_t i = 0; i < labels.dim(0); ++i)
    KERASCPP_CHECK_IO(y[i] < kNumClasses,
                      "fashion_mnist: '{}' has label {} at index {}; labels must be 0..9, the file is "
                      "corrupt",
                      labels_path, int{y[i]}, i);
}

// The IDX reader reports a missing, unreadable or corrupt file as a plain kerascpp::Error; here
// it is an I/O problem with a dataset file, so callers can catch IOError.
Tensor read_idx_as_io(const std::string& path) {
  try {
    return read_idx(path);
  } catch (const IOError&) { throw; } catch (const Error& e) {
    throw IOError(fmt::format("fashion_mnist: {}", e.what()));
  }
}

void load_pair(const std::string& dir, const std::string& prefix, Tensor& x, Tensor& y) {
  std::string images_path = require_file(dir, prefix + "-images-idx3-ubyte");
  std::string labels_path = require_file(dir, prefix + "-labels-idx1-ubyte");
  x = read_idx_as_io(images_path);
  y = read_idx_as_io(labels_path);
  check_pair(x, images_path, y, labels_path);
}

// The pixels stay uint8 (47 MB for the training set instead of 188 MB as float32) and become
// float32 in [0, 1] as each batch is gathered, with the same division as an eager conversion.
Dataset to_dataset(const Tensor& images, const Tensor& labels) {
  const std::int64_t n = images.dim(0);
  Tensor x = images.reshape({n, kSide, kSide, 1});
  Tensor y({n}, DType::int32);
  const auto* ls = labels.data<std::uint8_t>();
  auto* ld = y.data<std::int32_t>();
  for (std::int64_t i = 0; i < n; ++i) ld[i] = ls[i];
  return Dataset::from_tensor_slices_scaled({x, y}, {255.0f, 0.f});
}

}  // namespace

std::string resolve_dir(const std::string& dir) {
  if (!dir.empty()) return dir;
  if (const char* env = ::kerascpp::detail::knob("KERASCPP_DATA"); env && *env) {
    std::error_code ec;
    KERASCPP_CHECK_IO(fs::is_directory(env, ec),
                      "fashion_mnist: environment variable KERASCPP_DATA='{}' is not a directory; set it "
                      "to the directory holding the Fashion-MNIST IDX files, or unset it to use {}",
                      env, kDefaultDir);
    std::string nested = (fs::path(env) / "fashion-mnist").string();
    if (find_file(env, "train-images-idx3-ubyte").empty() && !find_file(nested, "train-images-idx3-ubyte").empty())
      return nested;
    return env;
  }
  return kDefaultDir;
}

Arrays load_arrays(const std::string& dir) {
  const std::string where = resolve_dir(dir);
  Arrays a;
  load_pair(where, "train", a.x_train, a.y_train);
  load_pair(where, "t10k", a.x_test, a.y_test);
  return a;
}

namespace {

// load()'s cache: a notebook re-runs its data cell, and every run used to read and convert the
// files again (~210 MB each, never freed: an interpreter keeps the object a re-run replaces).
// Keyed by the directory's canonical path; the files' sizes and modification times are checked
// on every hit, so a replaced file is read again. clear_session() empties it.
struct CachedLoad {
  std::string stamp;
  TrainTest data;
};
std::mutex g_cache_mu;
std::map<std::string, CachedLoad>& cache() {
  static std::map<std::string, CachedLoad> entries;
  return entries;
}

// The four files' paths, sizes and modification times; empty when one is missing (load() then
// reports which).
std::string files_stamp(const std::string& dir) {
  std::string stamp;
  for (const char* base :
       {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    std::string path = find_file(dir, base);
    std::error_code ec, ec2;
    if (path.empty()) return {};
    auto size = fs::file_size(path, ec);
    auto time = fs::last_write_time(path, ec2);
    if (ec || ec2) return {};
    stamp += fmt::format("{}:{}:{};", path, size, time.time_since_epoch().count());
  }
  return stamp;
}

}  // namespace

TrainTest load(const std::string& dir) {
  const std::string where = resolve_dir(dir);
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(where, ec);
  const std::string key = ec ? where : canonical.string();
  const std::string stamp = files_stamp(key);
  {
    std::lock_guard lock(g_cache_mu);
    auto it = cache().find(key);
    if (it != cache().end() && !stamp.empty() && it->second.stamp == stamp) return it->second.data;
  }
  Arrays a = load_arrays(where);
  TrainTest data{to_dataset(a.x_train, a.y_train), to_dataset(a.x_test, a.y_test)};
  if (!stamp.empty()) {
    std::lock_guard lock(g_cache_mu);
    cache()[key] = CachedLoad{stamp, data};
  }
  return data;
}

}  // namespace kerascpp::datasets::fashion_mnist

namespace kerascpp::detail {

void clear_dataset_cache() {
  using namespace datasets::fashion_mnist;
  std::lock_guard lock(g_cache_mu);
  cache().clear();
}

}  // namespace kerascpp::detail
