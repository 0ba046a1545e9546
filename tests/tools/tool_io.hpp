// What the interop tools (tests/tools/*.cpp) share: reproducible uniform data, raw little-endian
// float32 files for the Python side, and JSON numbers written at full double precision.
#pragma once
#include <kerascpp/kerascpp.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace tool_io {

// n values in [lo, hi) from a std::mt19937 seeded with `seed` (24 random bits each).
inline std::vector<float> uniform(std::size_t n, std::uint32_t seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::vector<float> values(n);
  for (auto& v : values) v = lo + (hi - lo) * static_cast<float>(gen() >> 8) / 16777216.0f;
  return values;
}

inline void write_f32(const std::filesystem::path& path, const std::vector<float>& values) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  if (!out) throw kerascpp::Error("cannot write '" + path.string() + "'");
}

inline std::vector<float> read_f32(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw kerascpp::Error("cannot read '" + path.string() + "'");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() % sizeof(float)) throw kerascpp::Error("'" + path.string() + "' is not a whole number of float32");
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

// Each weight as <dir>/w<i><suffix>.f32.
inline void write_weights(const std::filesystem::path& dir, const std::vector<kerascpp::Tensor>& weights,
                          const char* suffix) {
  for (std::size_t i = 0; i < weights.size(); ++i)
    write_f32(dir / ("w" + std::to_string(i) + suffix + ".f32"), weights[i].to_vector());
}

inline std::string g17(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

inline std::string json_list(const std::vector<double>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + g17(values[i]);
  return out + "]";
}

}  // namespace tool_io
