// Keras 3 .weights.h5 files at the file level (src/io/h5_weights) and atomic writes
// (src/io/atomic_file). Keras' side of the layout is checked in tests/python/test_h5_layout.py.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "temp_dir.hpp"

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/atomic_file.hpp"
#include "io/h5_weights.hpp"
#include "kerascpp/error.hpp"

namespace fs = std::filesystem;
using kerascpp::DType;
using kerascpp::Shape;
using kerascpp::Tensor;
namespace io = kerascpp::io;

namespace {
using kerascpp_test::TempDir;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// The message of the kerascpp::Error that f throws ("" when it throws nothing).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const kerascpp::Error& e) { return e.what(); }
  return "";
}

Tensor arange(Shape shape, float start) {
  std::vector<float> v(static_cast<std::size_t>(kerascpp::shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = start + 0.5f * static_cast<float>(i);
  return Tensor::from_vector(std::move(shape), v);
}

void check_same(const Tensor& a, const Tensor& b) {
  REQUIRE(a.defined());
  REQUIRE(b.defined());
  CHECK(a.dtype() == b.dtype());
  CHECK(a.shape() == b.shape());
  CHECK(a.to_vector() == b.to_vector());
}

io::WeightsFile sample_file() {
  io::WeightsFile f;
  f.model_name = "functional";
  f.optimizer_name = "adam";
  f.layers.push_back({"input_layer", {}});
  f.layers.push_back({"conv2d", {arange({3, 3, 1, 2}, -4.0f), arange({2}, 0.25f)}});
  f.layers.push_back(
      {"batch_normalization", {arange({2}, 1.0f), arange({2}, 0.0f), arange({2}, 0.1f), arange({2}, 0.9f)}});
  f.layers.push_back({"max_pooling2d", {}});
  f.layers.push_back({"dense_1", {arange({8, 4}, -1.0f), arange({4}, 3.0f)}, "my_dense"});
  f.layers.push_back({"sequential/layers/dense", {arange({4, 3}, 2.0f)}});
  f.layers.push_back({"ints",
                      {Tensor::from_vector(Shape{3}, std::vector<std::int32_t>{-7, 0, 2147483647}),
                       Tensor::from_vector(Shape{2}, std::vector<std::int64_t>{-1, 9007199254740993}),
                       Tensor::from_vector(Shape{2, 2}, std::vector<std::uint8_t>{0, 1, 128, 255}),
                       Tensor::from_vector(Shape{}, std::vector<float>{2.5f}), Tensor::zeros({0, 3})}});
  f.has_optimizer = true;
  f.optimizer_vars = {Tensor::from_vector(Shape{}, std::vector<std::int64_t>{12}),
                      Tensor::from_vector(Shape{}, std::vector<float>{0.001f}), arange({2}, 5.0f)};
  f.extra = {{"epoch", Tensor::from_vector(Shape{}, std::vector<std::int64_t>{4})},
             {"data_order", Tensor::from_vector(Shape{4}, std::vector<std::int64_t>{3, 1, 0, 2})},
             {"rng", Tensor::from_vector(Shape{3}, std::vector<std::uint8_t>{9, 8, 7})},
             {"lr_scale", Tensor::from_vector(Shape{}, std::vector<float>{0.5f})}};
  return f;
}

}  // namespace

TEST_CASE("weights file round trip keeps groups, nested paths, dtypes, scalars and empty groups") {
  TempDir dir;
  const auto path = dir.file("model.weights.h5");
  const auto written = sample_file();
  io::write_weights_file(path, written);
  const auto read = io::read_weights_file(path);

  // Files record no creation order: layers come back in name order, found here by name.
  REQUIRE(read.layers.size() == written.layers.size());
  std::vector<std::string> names;
  for (const auto& g : read.layers) names.push_back(g.name);
  CHECK(std::is_sorted(names.begin(), names.end()));
  auto find = [&](const std::string& name) -> const io::WeightsGroup& {
    for (const auto& g : read.layers)
      if (g.name == name) return g;
    FAIL("layer " << name << " not read back");
    throw std::logic_error("unreachable");
  };
  for (const auto& expected : written.layers) {
    CAPTURE(expected.name);
    const auto& got = find(expected.name);
    REQUIRE(got.vars.size() == expected.vars.size());
    for (std::size_t v = 0; v < expected.vars.size(); ++v) check_same(got.vars[v], expected.vars[v]);
  }
  const auto& ints = find("ints");
  CHECK(ints.vars[3].rank() == 0);
  CHECK(ints.vars[3].numel() == 1);
  CHECK(ints.vars[4].shape() == Shape{0, 3});
  CHECK(find("input_layer").vars.empty());

  CHECK(read.has_optimizer);
  REQUIRE(read.optimizer_vars.size() == 3);
  CHECK(read.optimizer_vars[0].dtype() == DType::int64);
  CHECK(read.optimizer_vars[0].data<std::int64_t>()[0] == 12);
  for (std::size_t v = 0; v < 3; ++v) check_same(read.optimizer_vars[v], written.optimizer_vars[v]);

  REQUIRE(read.extra.size() == written.extra.size());
  for (const auto& [name, tensor] : written.extra) {
    CAPTURE(name);
    auto it = std::find_if(read.extra.begin(), read.extra.end(), [&](const auto& e) { return e.first == name; });
    REQUIRE(it != read.extra.end());
    check_same(it->second, tensor);
  }
}

TEST_CASE("variables beyond 10 come back in numeric order, not name order") {
  TempDir dir;
  const auto path = dir.file("many.weights.h5");
  io::WeightsFile f;
  io::WeightsGroup g{"dense", {}};
  for (int i = 0; i < 23; ++i) g.vars.push_back(Tensor::full({i + 1}, static_cast<float>(i)));
  f.layers.push_back(g);
  io::write_weights_file(path, f);
  const auto read = io::read_weights_file(path);
  REQUIRE(read.layers.size() == 1);
  REQUIRE(read.layers[0].vars.size() == 23);
  for (int i = 0; i < 23; ++i) {
    CHECK(read.layers[0].vars[i].shape() == Shape{i + 1});
    CHECK(read.layers[0].vars[i].to_vector()[0] == static_cast<float>(i));
  }
}

TEST_CASE("no optimizer group unless asked for; empty extra writes no extra group") {
  TempDir dir;
  const auto path = dir.file("plain.weights.h5");
  io::WeightsFile f;
  f.model_name = "sequential";
  f.layers.push_back({"dense", {arange({3, 4}, 0.0f), arange({4}, 1.0f)}});
  f.layers.push_back({"flatten", {}});
  io::write_weights_file(path, f);
  const auto read = io::read_weights_file(path);
  CHECK_FALSE(read.has_optimizer);
  CHECK(read.optimizer_vars.empty());
  CHECK(read.extra.empty());
  REQUIRE(read.layers.size() == 2);
  CHECK(read.layers[1].name == "flatten");
  CHECK(read.layers[1].vars.empty());

  // An optimizer that exists but has no variables yet still gets its group.
  f.has_optimizer = true;
  io::write_weights_file(path, f);
  CHECK(io::read_weights_file(path).has_optimizer);
}

TEST_CASE("bad names and tensors are refused before anything is replaced") {
  TempDir dir;
  const auto path = dir.file("model.weights.h5");
  io::write_weights_file(path, sample_file());
  const auto before = read_bytes(path);

  auto refused = [&](const io::WeightsFile& f) {
    auto msg = error_of([&] { io::write_weights_file(path, f); });
    CHECK(msg.find(path) != std::string::npos);
    CHECK(read_bytes(path) == before);
    CHECK(dir.entries() == std::vector<std::string>{"model.weights.h5"});  // no tmp file left over
  };
  io::WeightsFile dup;
  dup.layers = {{"dense", {}}, {"dense", {}}};
  refused(dup);
  io::WeightsFile bad_name;
  bad_name.layers = {{"a//b", {}}};
  refused(bad_name);
  io::WeightsFile empty_name;
  empty_name.layers = {{"", {}}};
  refused(empty_name);
  // An undefined tensor in the last layer: the writer fails mid-way through the file.
  io::WeightsFile undefined = sample_file();
  undefined.layers.push_back({"late", {arange({2}, 0.0f), Tensor()}});
  refused(undefined);
  io::WeightsFile bad_extra;
  bad_extra.extra = {{"a/b", Tensor::full({1}, 1.0f)}};
  refused(bad_extra);
}

TEST_CASE("write_atomically replaces the file only when the writer succeeds") {
  TempDir dir;
  const auto path = dir.file("state.txt");
  write_bytes(path, "old contents");
  ::chmod(path.c_str(), 0640);

  SUBCASE("a writer that throws mid-way leaves the old file and no tmp file") {
    auto msg = error_of([&] {
      io::write_atomically(path, [](const std::string& tmp) {
        write_bytes(tmp, "half of the new");
        throw std::runtime_error("simulated crash while writing");
      });
    });
    CHECK(msg.find(path) != std::string::npos);
    CHECK(msg.find("simulated crash") != std::string::npos);
    CHECK(read_bytes(path) == "old contents");
    CHECK(dir.entries() == std::vector<std::string>{"state.txt"});
  }
  SUBCASE("a successful writer replaces the contents and keeps the permissions") {
    std::string seen_tmp;
    io::write_atomically(path, [&](const std::string& tmp) {
      seen_tmp = tmp;
      CHECK(fs::path(tmp).parent_path() == fs::path(path).parent_path());
      write_bytes(tmp, "new contents");
    });
    CHECK(read_bytes(path) == "new contents");
    CHECK_FALSE(fs::exists(seen_tmp));
    CHECK(dir.entries() == std::vector<std::string>{"state.txt"});
    struct stat st{};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0640);
  }
  SUBCASE("a new file in the working directory") {
    const auto old_cwd = fs::current_path();
    fs::current_path(dir.path);
    io::write_atomically("fresh.txt", [](const std::string& tmp) { write_bytes(tmp, "x"); });
    fs::current_path(old_cwd);
    CHECK(read_bytes(dir.file("fresh.txt")) == "x");
  }
}

TEST_CASE("a write that fails on disk (a file size limit standing in for a full disk) keeps the old file") {
  TempDir dir;
  const auto path = dir.file("model.weights.h5");
  io::write_weights_file(path, sample_file());
  const auto before = read_bytes(path);

  io::WeightsFile big;
  big.layers.push_back({"dense", {Tensor::full({256, 1024}, 1.0f)}});  // 1 MiB
  // Writes past RLIMIT_FSIZE fail with EFBIG, as writes on a full disk fail with ENOSPC; the
  // limit is lifted again before any check runs.
  rlimit old_limit{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old_limit;
  small.rlim_cur = 64 * 1024;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  const auto msg = error_of([&] { io::write_weights_file(path, big); });
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  CHECK(msg.find(path) != std::string::npos);
  CHECK(msg.find("size limit") != std::string::npos);
  CHECK(read_bytes(path) == before);
  CHECK(dir.entries() == std::vector<std::string>{"model.weights.h5"});
  CHECK(io::read_weights_file(path).layers.size() == sample_file().layers.size());
}

TEST_CASE("writing into a missing or unwritable directory names the path and the fix") {
  TempDir dir;
  const auto missing = dir.file("no/such/dir/model.weights.h5");
  auto msg = error_of([&] { io::write_weights_file(missing, sample_file()); });
  CHECK(msg.find(missing) != std::string::npos);
  CHECK(msg.find("does not exist") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.path / "no"));

  // root ignores permission bits, so as root use a directory no one may create files in.
  std::string locked_dir = (dir.path / "locked").string();
  if (::geteuid() == 0) {
    locked_dir = "/sys";
  } else {
    fs::create_directories(locked_dir);
    fs::permissions(locked_dir, fs::perms::owner_read | fs::perms::owner_exec);
  }
  const auto unwritable = locked_dir + "/model.weights.h5";
  msg = error_of([&] { io::write_weights_file(unwritable, sample_file()); });
  CHECK(msg.find(unwritable) != std::string::npos);
  CHECK((msg.find("not writable") != std::string::npos || msg.find("read-only") != std::string::npos));

  msg = error_of([&] { io::write_weights_file(dir.path.string(), sample_file()); });
  CHECK(msg.find("directory") != std::string::npos);
}

TEST_CASE("reading a missing, non-HDF5, truncated or foreign file throws an Error naming it") {
  TempDir dir;
  const auto missing = dir.file("missing.weights.h5");
  auto msg = error_of([&] { io::read_weights_file(missing); });
  CHECK(msg.find(missing) != std::string::npos);
  CHECK(msg.find("does not exist") != std::string::npos);

  const auto text = dir.file("notes.weights.h5");
  write_bytes(text, "this is not HDF5 at all, just some text that is long enough to look like a file");
  msg = error_of([&] { io::read_weights_file(text); });
  CHECK(msg.find(text) != std::string::npos);
  CHECK(msg.find("not an HDF5 file") != std::string::npos);

  const auto empty = dir.file("empty.weights.h5");
  write_bytes(empty, "");
  CHECK(error_of([&] { io::read_weights_file(empty); }).find(empty) != std::string::npos);

  const auto good = dir.file("good.weights.h5");
  io::write_weights_file(good, sample_file());
  const auto bytes = read_bytes(good);
  const auto truncated = dir.file("truncated.weights.h5");
  write_bytes(truncated, bytes.substr(0, bytes.size() / 2));
  msg = error_of([&] { io::read_weights_file(truncated); });
  CHECK(msg.find(truncated) != std::string::npos);
  CHECK(msg.find("truncated") != std::string::npos);

  // The same file with its `layers` link renamed (same length, so HDF5 still parses it).
  auto renamed = bytes;
  const auto at = renamed.find("layers");
  REQUIRE(at != std::string::npos);
  renamed.replace(at, 6, "layerz");
  const auto foreign = dir.file("foreign.weights.h5");
  write_bytes(foreign, renamed);
  msg = error_of([&] { io::read_weights_file(foreign); });
  CHECK(msg.find(foreign) != std::string::npos);
  CHECK(msg.find("no 'layers' group") != std::string::npos);

  msg = error_of([&] { io::read_weights_file(dir.path.string()); });
  CHECK(msg.find("directory") != std::string::npos);
}

TEST_CASE("errors from one bad file do not disturb the next good one") {
  TempDir dir;
  const auto good = dir.file("good.weights.h5");
  io::write_weights_file(good, sample_file());
  for (int i = 0; i < 3; ++i) {
    const auto bad = dir.file("bad" + std::to_string(i) + ".weights.h5");
    write_bytes(bad, read_bytes(good).substr(0, 100 * (i + 1)));
    CHECK_FALSE(error_of([&] { io::read_weights_file(bad); }).empty());
    CHECK(io::read_weights_file(good).layers.size() == sample_file().layers.size());
  }
}
