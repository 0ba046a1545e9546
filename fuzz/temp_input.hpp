// The readers under test take a path, so each input is written to one scratch file per process
// (in /dev/shm when there is one: a fuzz run writes it hundreds of times a second).
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace kerascpp_fuzz {

inline std::string write_temp_input(const std::uint8_t* data, std::size_t size, const char* suffix) {
  static const std::string path = [suffix] {
    const char* dir = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/kerascpp_fuzz_" + std::to_string(::getpid()) + suffix;
  }();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();  // the harness itself is broken; no input can be judged
  }
  return path;
}

}  // namespace kerascpp_fuzz
