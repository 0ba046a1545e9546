// libFuzzer target: arbitrary bytes as an IDX file, raw or gzip-compressed (read_idx tells them
// apart by the gzip magic). A kerascpp::Error is fine; anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "data/idx_reader.hpp"
#include "kerascpp/error.hpp"
#include "temp_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = kerascpp_fuzz::write_temp_input(data, size, "-idx");
  try {
    (void)kerascpp::read_idx(path);
  } catch (const kerascpp::Error&) {}
  return 0;
}
