// Inputs the fuzzers in fuzz/ found (and close relatives), fed to the same readers in the unit
// suite so that they stay fixed: each must give a kerascpp::Error or load cleanly, never crash,
// leak or throw anything else (scripts/asan.sh runs this under ASan + UBSan as the fuzzers do).
// Every file under tests/data/fuzz_regressions/<target>/ is replayed; the events files are raw
// event files (the raw mode of fuzz/events.cpp), round-trip findings are written out below.
#include <doctest/doctest.h>
#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
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
    CHECK(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0);  // no file, group, dataset, ... left open
    try {
      model.load_weights(path);
    } catch (const K::Error&) {
      CHECK(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0);
      throw;
    }
  });
}

namespace {

constexpr const char* kShutdownChildInput = "KERASCPP_TEST_WEIGHTS_H5_INPUT";

// Runs this test binary on the case below for `input` (stdout and stderr together): a fresh
// process, so that libhdf5's shutdown at its exit sees only what reading that one input left.
std::string output_of_shutdown_child(const fs::path& input, int& status) {
  std::vector<std::string> env_strings{std::string(kShutdownChildInput) + "=" + input.string()};
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, kShutdownChildInput, std::strlen(kShutdownChildInput)) != 0) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string filter = "--test-case=weights_h5 shutdown child*";
  std::string no_skip = "--no-skip";
  std::string self = "/proc/self/exe";
  char* const argv[] = {self.data(), filter.data(), no_skip.data(), nullptr};

  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    execve(self.c_str(), argv, envp.data());
    _exit(127);
  }
  close(fds[1]);
  std::string output;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    output.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return output;
}

}  // namespace

// The child side of the case below (skipped unless run with --no-skip): reads one input as the
// case above does, then returns, and the process exits, which shuts libhdf5 down.
TEST_CASE(
    "weights_h5 shutdown child: read the input named by KERASCPP_TEST_WEIGHTS_H5_INPUT (skipped in a normal run: "
    "the case below runs it in a child process with --no-skip)" *
    doctest::skip()) {
  const char* path = std::getenv(kShutdownChildInput);
  REQUIRE(path != nullptr);
  K::Model model = kerascpp_fuzz::make_fuzz_model();
  try {
    (void)K::io::read_weights_file(path);
  } catch (const K::Error&) {}
  try {
    model.load_weights(path);
  } catch (const K::Error&) {}
}

// libhdf5 1.10.8 leaks a free-list block when it fails to load an object header chunk: a
// continuation chunk beyond the end of the file (hdf5-2gib-header-malloc, hdf5-terabyte-malloc)
// or a version 2 chunk failing its checksum (hdf5-v2-*). No HDF5 id stayed open, but at exit the
// library could not shut down and printed "HDF5: infinite loop closing library". The reader now
// checks object headers itself before HDF5 reads them (io/h5_object_header_check.hpp).
TEST_CASE("fuzz regressions: refused weights_h5 inputs leave libhdf5 able to shut down") {
  for (const fs::path& input : regression_inputs("tests/data/fuzz_regressions/weights_h5")) {
    CAPTURE(input.string());
    int status = 0;
    const std::string output = output_of_shutdown_child(input, status);
    CAPTURE(output);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(output.find("1 passed") != std::string::npos);  // the child case ran
    CHECK(output.find("infinite loop closing library") == std::string::npos);
  }
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
