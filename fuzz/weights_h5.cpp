// libFuzzer target: arbitrary bytes as a `.weights.h5` file, read with read_weights_file and
// loaded into a small fixed model. A kerascpp::Error is the expected outcome for a bad file;
// any other exception, a crash, a leak or undefined behaviour is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "fuzz_model.hpp"
#include "io/h5_weights.hpp"
#include "temp_input.hpp"

// The library parses every weights file in a forked probe process first (io/h5_probe.hpp), which
// turns any crash while parsing, ours included, into an IOError, and costs a fork per read (25x
// fewer executions under ASan). The fuzzer reads in-process so that it sees our reader's crashes
// at full speed; scripts/fuzz.sh sorts out libhdf5's own known crash and replays it with the
// probe on, where it must be contained.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("KERASCPP_H5_PROBE", "0", /*overwrite=*/0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static kerascpp::Model model = kerascpp_fuzz::make_fuzz_model();
  const std::string path = kerascpp_fuzz::write_temp_input(data, size, ".weights.h5");
  try {
    (void)kerascpp::io::read_weights_file(path);
  } catch (const kerascpp::Error&) {}
  try {
    model.load_weights(path);  // all-or-nothing: a refused file leaves the model as it was
  } catch (const kerascpp::Error&) {}
  return 0;
}
