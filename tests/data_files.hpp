// Helpers for the file-source tests: write bytes to a file, read them back, compress them as
// gzip or zlib streams (through zlib, the library the readers use too), drain a Dataset.
#pragma once
#include <zlib.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "kerascpp/data/bytes.hpp"
#include "kerascpp/data/dataset.hpp"

namespace kerascpp_test {

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A whole gzip (gzip = true) or zlib stream of `bytes`.
inline std::string deflate_bytes(const std::string& bytes, bool gzip) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, gzip ? 31 : 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2");
  std::string out(deflateBound(&z, static_cast<uLong>(bytes.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate");
  return out;
}

// Every element of a dataset.
inline std::vector<kerascpp::Example> drain(const kerascpp::Dataset& ds) {
  std::vector<kerascpp::Example> out;
  auto it = ds.make_iterator();
  for (kerascpp::Example e; it->next(e);) out.push_back(e);
  return out;
}

// Component 0 of every element, as byte strings.
inline std::vector<std::string> strings_of(const kerascpp::Dataset& ds) {
  std::vector<std::string> out;
  for (const auto& e : drain(ds)) out.push_back(kerascpp::data::tensor_bytes(e.at(0)));
  return out;
}

// The message of the kerascpp error that `fn` throws ("" when it throws none).
template <class Error, class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) { return e.what(); }
  return "";
}

}  // namespace kerascpp_test
