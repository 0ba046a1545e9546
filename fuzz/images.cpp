// libFuzzer target: arbitrary bytes through decode_image (JPEG via libjpeg-turbo, PNG via libpng),
// asking for each of the channel counts in turn. A kerascpp::Error is fine; anything else (a
// crash, a leak, a longjmp that skips a destructor) is a finding. The seeds in
// fuzz/corpus/images/ are small JPEG and PNG files of each layout, written by Pillow
// (tests/python/test_image_data.py makes the same kinds).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kerascpp/data/bytes.hpp"
#include "kerascpp/data/images.hpp"
#include "kerascpp/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const kerascpp::Tensor bytes =
      kerascpp::data::bytes_tensor(std::string_view(reinterpret_cast<const char*>(data), size));
  static const std::int64_t kChannels[] = {0, 1, 3, 4};
  const std::int64_t channels = kChannels[size % 4];
  try {
    (void)kerascpp::data::decode_image(bytes, {.channels = channels, .dct_method = size % 2 ? "INTEGER_ACCURATE" : ""});
  } catch (const kerascpp::Error&) {}
  return 0;
}
