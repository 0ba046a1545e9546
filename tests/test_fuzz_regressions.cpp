// Inputs the fuzzers in fuzz/ found (and close relatives), fed to the same readers in the unit
// suite so that they stay fixed: each must give a kerascpp::Error or load cleanly, never crash,
// leak or throw anything else (scripts/asan.sh runs this under ASan + UBSan as the fuzzers do).
// Every file under tests/data/fuzz_regressions/<target>/ is replayed; the events files are raw
// event files (the raw mode of fuzz/events.cpp), round-trip findings are written out below.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "../fuzz/fuzz_model.hpp"
#include "data/idx_reader.hpp"
#include "io/event_file_reader.hpp"
#include "io/event_file_writer.hpp"
#include "io/h5_weights.hpp"
#include "kerascpp/error.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace fs = std::filesystem;

namespace {

// The input files in `folder` (relative to the source tree), READMEs aside.
std::vector<fs::path> regression_inputs(const std::string& folder) {
  const fs::path dir = fs::path(KERASCPP_SOURCE_DIR) / folder;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().filename() != "README") files.push_back(entry.path());
  return files;
}

// Runs `read` on every input in `folder`: a kerascpp::Error is a pass, another exception fails.
void replay(const std::string& folder, const std::function<void(const std::string&)>& read) {
  for (const fs::path& input : regression_inputs(folder)) {
    CAPTURE(input.string());
    try {
      read(input.string());
    } catch (const K::Error& e) { CHECK(std::string(e.what()).size() > 0); } catch (const std::exception& e) {
      FAIL("not a kerascpp::Error: " << e.what());
    }
  }
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("fuzz regressions: weights_h5 inputs give kerascpp::Error or load") {
  K::Model model = kerascpp_fuzz::make_fuzz_model();
  replay("tests/data/fuzz_regressions/weights_h5", [&](const std::string& path) {
    try {
      (void)K::io::read_weights_file(path);
    } catch (const K::Error&) {}
    model.load_weights(path);
  });
}

TEST_CASE("weights_h5: a compact dataset storing fewer bytes than its shape is refused before H5Dread") {
  // libhdf5 1.10 copied the missing values from NULL (SIGSEGV); the reader now compares the
  // dataset's storage size with its shape first.
  const std::string path =
      (fs::path(KERASCPP_SOURCE_DIR) / "tests/data/fuzz_regressions/weights_h5/hdf5-compact-short-data.weights.h5")
          .string();
  try {
    (void)K::io::read_weights_file(path);
    FAIL("expected kerascpp::IOError");
  } catch (const K::IOError& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find(path) != std::string::npos);
    CHECK(what.find("but stores") != std::string::npos);
    CHECK(what.find("kerascpp/training_state_epoch") != std::string::npos);  // names the entry
  }
}

TEST_CASE("fuzz regressions: idx inputs give kerascpp::Error or load") {
  replay("tests/data/fuzz_regressions/idx", [](const std::string& path) { (void)K::read_idx(path); });
}

TEST_CASE("fuzz regressions: raw event files give kerascpp::Error or parse") {
  replay("tests/data/fuzz_regressions/events", [](const std::string& path) {
    const std::string bytes = slurp(path);
    (void)K::io::parse_events(bytes, path);
  });
}

TEST_CASE("idx: a small gzip file declaring a huge shape is refused before allocating it") {
  // uint8, 3 dims 1000 x 1000 x 1000: 1 GB declared in 29 compressed bytes, no data. read_idx
  // allocated the whole tensor before finding out that the data is missing.
  const std::string path =
      (fs::path(KERASCPP_SOURCE_DIR) / "tests/data/fuzz_regressions/idx/gzip-bomb-1000x1000x1000-idx3-ubyte.gz")
          .string();
  try {
    (void)K::read_idx(path);
    FAIL("expected kerascpp::IOError");
  } catch (const K::IOError& e) {
    const std::string what = e.what();
    CHECK(what.find(path) != std::string::npos);
    CHECK(what.find("(1000, 1000, 1000)") != std::string::npos);
    CHECK(what.find("compressed bytes") != std::string::npos);
  }
}

TEST_CASE("events: a summary tag that is not UTF-8 is refused, and the file stays readable") {
  // fuzz/events.cpp round trip: add_scalar("epoch_loss\\\x01...\xff...") was written with only a
  // protobuf log line, and then the event file could not be parsed back (nor by TensorBoard).
  kerascpp_test::TempDir dir;
  K::io::EventFileWriter writer(dir.path.string());
  const std::string bad_tag = "epoch_loss\xff\xfe";
  try {
    writer.add_scalar(bad_tag, 1.0, 0);
    FAIL("expected kerascpp::ValueError");
  } catch (const K::ValueError& e) {
    const std::string what = e.what();
    CHECK(what.find("epoch_loss") != std::string::npos);
    CHECK(what.find("UTF-8") != std::string::npos);
  }
  const float values[] = {1.0f};
  CHECK_THROWS_AS(writer.add_histogram("kernel\xc3", values, 1, 0), K::ValueError);  // cut-off sequence
  writer.add_scalar("épоch_loss", 2.0, 1);                                           // valid UTF-8 beyond ASCII is fine
  const auto events = K::io::read_event_file(writer.path());
  REQUIRE(events.size() == 2);
  CHECK(events[1].values.at(0).tag == "épоch_loss");
}

// fuzz/known_hdf5_crashes/: files on which Debian 12's libhdf5 1.10.8 itself crashes (SIGSEGV:
// H5F__accum_read copies from a NULL buffer while H5Lexists reads a corrupt local heap), as any
// program using that libhdf5 does: a plain C program calling H5Fopen + H5Lexists, with the
// sec2, core or stdio driver alike. Upstream reports of this crash: HDFGroup/hdf5#584 and #586.
// Nothing checkable before libhdf5 parses a file tells these apart from good files, so the
// reader parses each file in a forked probe process first (io/h5_probe.hpp): the crash must
// reach the caller as an IOError naming the file, and the process must live on.
TEST_CASE("fuzz regressions: known libhdf5 crashes give an IOError, not a dead process") {
  const auto inputs = regression_inputs("fuzz/known_hdf5_crashes");
  REQUIRE(!inputs.empty());
  for (const fs::path& input : inputs) {
    CAPTURE(input.string());
    CHECK_THROWS_WITH_AS((void)K::io::read_weights_file(input.string()),
                         doctest::Contains(input.filename().string().c_str()), K::IOError);
  }
}
