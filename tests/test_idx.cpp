// IDX reading (raw and gzip), its error messages, and the Fashion-MNIST loader on small files
// made here, plus the real dataset when the Debian package is installed.
#include <doctest/doctest.h>

#include <unistd.h>
#include "temp_dir.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/idx_reader.hpp"
#include "kerascpp/datasets/fashion_mnist.hpp"

namespace K = kerascpp;
namespace fs = std::filesystem;
namespace fmnist = kerascpp::datasets::fashion_mnist;

namespace {
using kerascpp_test::TempDir;

void write_bytes(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Message of the K::Error that `fn` throws ("" if it throws nothing).
template <class Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const K::Error& e) { return e.what(); }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

K::Tensor images(std::int64_t n, int offset) {
  std::vector<std::uint8_t> v(static_cast<std::size_t>(n * 28 * 28));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<std::uint8_t>((i + static_cast<std::size_t>(offset)) % 256);
  return K::Tensor::from_vector({n, 28, 28}, v);
}

K::Tensor labels(std::int64_t n) {
  std::vector<std::uint8_t> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint8_t>(i % 10);
  return K::Tensor::from_vector({n}, v);
}

}  // namespace

TEST_CASE("read_idx reads raw and gzip IDX files") {
  TempDir dir;
  std::vector<std::uint8_t> values;
  for (int i = 0; i < 12; ++i) values.push_back(static_cast<std::uint8_t>(i * 20));
  auto t = K::Tensor::from_vector({3, 2, 2}, values);

  // A hand-made raw file pins the on-disk layout (big-endian header).
  std::vector<unsigned char> raw = {0, 0, 0x08, 3, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 2};
  raw.insert(raw.end(), values.begin(), values.end());
  write_bytes(dir.file("hand-idx3-ubyte"), raw);
  auto hand = K::read_idx(dir.file("hand-idx3-ubyte"));
  CHECK(hand.shape() == K::Shape{3, 2, 2});
  CHECK(hand.dtype() == K::DType::uint8);
  CHECK(hand.to_vector() == t.to_vector());

  for (bool gzip : {false, true}) {
    std::string path = dir.file(gzip ? "x.gz" : "x");
    K::write_idx(path, t, gzip);
    if (!gzip) CHECK(fs::file_size(path) == raw.size());
    auto back = K::read_idx(path);
    CHECK(back.shape() == t.shape());
    CHECK(back.to_vector() == t.to_vector());
  }
  {
    std::ifstream gz(dir.file("x.gz"), std::ios::binary);
    CHECK(gz.get() == 0x1f);  // really compressed
  }

  auto ints = K::Tensor::from_vector({2, 2}, std::vector<std::int32_t>{1, -2, 300000, 4});
  K::write_idx(dir.file("i.gz"), ints, true);
  auto ib = K::read_idx(dir.file("i.gz"));
  CHECK(ib.dtype() == K::DType::int32);
  CHECK(ib.to_vector() == ints.to_vector());
  auto floats = K::Tensor::from_vector({3}, std::vector<float>{0.5f, -1.25f, 3e8f});
  K::write_idx(dir.file("f"), floats, false);
  CHECK(K::read_idx(dir.file("f")).to_vector() == floats.to_vector());

  auto empty = K::Tensor(K::Shape{0, 28, 28}, K::DType::uint8);
  K::write_idx(dir.file("empty"), empty, true);
  CHECK(K::read_idx(dir.file("empty")).shape() == K::Shape{0, 28, 28});
  CHECK_THROWS_AS(K::write_idx(dir.file("l"), K::Tensor({2}, K::DType::int64), false), K::Error);
}

TEST_CASE("read_idx errors name the file and say what to do") {
  TempDir dir;
  std::string missing = dir.file("nope-idx1-ubyte.gz");
  std::string msg = error_of([&] { K::read_idx(missing); });
  CHECK(contains(msg, missing));
  CHECK(contains(msg, "dataset-fashion-mnist"));
  CHECK(contains(msg, "KERASCPP_DATA"));

  CHECK(contains(error_of([&] { K::read_idx(dir.path.string()); }), "directory"));

  std::string bad = dir.file("bad");
  write_bytes(bad, {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'});
  msg = error_of([&] { K::read_idx(bad); });
  CHECK(contains(msg, bad));
  CHECK(contains(msg, "magic"));

  std::string unsupported = dir.file("int16");
  write_bytes(unsupported, {0, 0, 0x0B, 1, 0, 0, 0, 1, 0, 7});
  msg = error_of([&] { K::read_idx(unsupported); });
  CHECK(contains(msg, unsupported));
  CHECK(contains(msg, "0x0B"));

  std::string tiny = dir.file("tiny");
  write_bytes(tiny, {0, 0});
  CHECK(contains(error_of([&] { K::read_idx(tiny); }), "truncated"));

  std::string short_header = dir.file("short_header");
  write_bytes(short_header, {0, 0, 0x08, 3, 0, 0, 0, 3, 0, 0});
  msg = error_of([&] { K::read_idx(short_header); });
  CHECK(contains(msg, short_header));
  CHECK(contains(msg, "truncated"));

  // Header promises 3*2*2 = 12 bytes, only 5 follow.
  std::string truncated = dir.file("truncated");
  write_bytes(truncated, {0, 0, 0x08, 3, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4, 5});
  msg = error_of([&] { K::read_idx(truncated); });
  CHECK(contains(msg, truncated));
  CHECK(contains(msg, "12 data bytes"));
  CHECK(contains(msg, "only 5"));

  // A gzip file cut short.
  std::string cut = dir.file("cut.gz");
  K::write_idx(cut, images(20, 3), true);
  fs::resize_file(cut, fs::file_size(cut) / 2);
  msg = error_of([&] { K::read_idx(cut); });
  CHECK(contains(msg, cut));

  // A header that claims an absurd size must not allocate it or wrap around.
  std::string huge = dir.file("huge");
  write_bytes(huge, {0, 0, 0x08, 3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF});
  CHECK(contains(error_of([&] { K::read_idx(huge); }), huge));
}

TEST_CASE("fashion_mnist loads gzip or raw files from a directory") {
  TempDir dir;
  K::write_idx(dir.file("train-images-idx3-ubyte.gz"), images(5, 0), true);
  K::write_idx(dir.file("train-labels-idx1-ubyte.gz"), labels(5), true);
  K::write_idx(dir.file("t10k-images-idx3-ubyte"), images(3, 7), false);  // uncompressed names
  K::write_idx(dir.file("t10k-labels-idx1-ubyte"), labels(3), false);

  auto arrays = fmnist::load_arrays(dir.path.string());
  CHECK(arrays.x_train.shape() == K::Shape{5, 28, 28});
  CHECK(arrays.x_train.dtype() == K::DType::uint8);
  CHECK(arrays.y_test.shape() == K::Shape{3});
  CHECK(arrays.x_test.to_vector() == images(3, 7).to_vector());

  auto [train, test] = fmnist::load(dir.path.string());
  CHECK(train.cardinality() == 5);
  CHECK(test.cardinality() == 3);
  auto it = train.batch(4).make_iterator();
  K::Example batch;
  REQUIRE(it->next(batch));
  CHECK(batch[0].shape() == K::Shape{4, 28, 28, 1});
  CHECK(batch[0].dtype() == K::DType::float32);
  CHECK(batch[1].shape() == K::Shape{4});
  CHECK(batch[1].dtype() == K::DType::int32);
  auto x = batch[0].to_vector();
  CHECK(x[1] == doctest::Approx(1.0 / 255.0));
  CHECK(x[255] == doctest::Approx(1.0));
  CHECK(batch[1].to_vector() == std::vector<float>{0, 1, 2, 3});
}

TEST_CASE("fashion_mnist errors: missing files, count mismatch, bad labels") {
  TempDir dir;
  std::string msg = error_of([&] { fmnist::load(dir.path.string()); });
  CHECK(contains(msg, dir.path.string()));
  CHECK(contains(msg, "train-images-idx3-ubyte"));
  CHECK(contains(msg, "dataset-fashion-mnist"));

  K::write_idx(dir.file("train-images-idx3-ubyte.gz"), images(5, 0), true);
  K::write_idx(dir.file("train-labels-idx1-ubyte.gz"), labels(4), true);
  K::write_idx(dir.file("t10k-images-idx3-ubyte.gz"), images(2, 0), true);
  K::write_idx(dir.file("t10k-labels-idx1-ubyte.gz"), labels(2), true);
  msg = error_of([&] { fmnist::load_arrays(dir.path.string()); });
  CHECK(contains(msg, "5 images"));
  CHECK(contains(msg, "4 labels"));
  CHECK(contains(msg, dir.file("train-labels-idx1-ubyte.gz")));

  K::write_idx(dir.file("train-labels-idx1-ubyte.gz"),
               K::Tensor::from_vector({5}, std::vector<std::uint8_t>{0, 1, 2, 10, 4}), true);
  CHECK(contains(error_of([&] { fmnist::load_arrays(dir.path.string()); }), "label 10"));

  K::write_idx(dir.file("train-labels-idx1-ubyte.gz"), labels(5), true);
  K::write_idx(dir.file("train-images-idx3-ubyte.gz"), K::Tensor(K::Shape{5, 32, 32}, K::DType::uint8), true);
  CHECK(contains(error_of([&] { fmnist::load_arrays(dir.path.string()); }), "(5, 32, 32)"));
}

TEST_CASE("fashion_mnist directory resolution: argument, KERASCPP_DATA, default") {
  TempDir dir;
  const char* saved = std::getenv("KERASCPP_DATA");
  std::string saved_value = saved ? saved : "";

  ::unsetenv("KERASCPP_DATA");
  CHECK(fmnist::resolve_dir() == "/usr/share/datasets/fashion-mnist");
  CHECK(fmnist::resolve_dir("/somewhere") == "/somewhere");

  ::setenv("KERASCPP_DATA", dir.path.c_str(), 1);
  CHECK(fmnist::resolve_dir() == dir.path.string());
  CHECK(fmnist::resolve_dir("/explicit") == "/explicit");
  // KERASCPP_DATA may also be a data root with a fashion-mnist/ subdirectory.
  fs::create_directories(dir.path / "fashion-mnist");
  K::write_idx((dir.path / "fashion-mnist" / "train-images-idx3-ubyte.gz").string(), images(1, 0), true);
  CHECK(fmnist::resolve_dir() == (dir.path / "fashion-mnist").string());

  if (saved) ::setenv("KERASCPP_DATA", saved_value.c_str(), 1);
  else ::unsetenv("KERASCPP_DATA");
}

TEST_CASE("the real Fashion-MNIST, when installed") {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(dir + "/train-images-idx3-ubyte.gz") && !fs::exists(dir + "/train-images-idx3-ubyte")) {
    MESSAGE("skipped: " << dir << " not found (install the Debian package dataset-fashion-mnist)");
    return;
  }
  auto a = fmnist::load_arrays(dir);
  CHECK(a.x_train.shape() == K::Shape{60000, 28, 28});
  CHECK(a.y_train.shape() == K::Shape{60000});
  CHECK(a.x_test.shape() == K::Shape{10000, 28, 28});
  CHECK(a.y_test.shape() == K::Shape{10000});
  std::vector<int> per_class(10, 0);
  const auto* y = a.y_train.data<std::uint8_t>();
  int max_label = 0;
  for (std::int64_t i = 0; i < 60000; ++i) {
    max_label = std::max<int>(max_label, y[i]);
    if (y[i] < 10) ++per_class[y[i]];
  }
  CHECK(max_label == 9);
  for (int c = 0; c < 10; ++c) CHECK(per_class[static_cast<std::size_t>(c)] == 6000);  // balanced by design

  auto [train, test] = fmnist::load(dir);
  CHECK(train.cardinality() == 60000);
  CHECK(test.cardinality() == 10000);
  CHECK(test.batch(1024).cardinality() == 10);
}
