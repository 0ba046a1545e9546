// list_files: glob(3) matches, sorted or shuffled by a seed.
#include "kerascpp/data/list_files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <glob.h>

#include <algorithm>
#include <random>

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::data {
namespace {

void glob_into(const std::string& pattern, std::vector<std::string>& out) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
  if (rc == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  KERASCPP_CHECK_IO(rc != GLOB_NOSPACE, "list_files: out of memory matching '{}'", pattern);
  KERASCPP_CHECK_IO(rc != GLOB_ABORTED, "list_files: a directory in '{}' could not be read", pattern);
}

}  // namespace

std::vector<std::string> list_files(const std::vector<std::string>& patterns, ListFilesOptions options) {
  std::vector<std::string> files;
  for (const std::string& p : patterns) glob_into(p, files);
  KERASCPP_CHECK_IO(!files.empty(), "list_files: no files match {}; check the pattern and the current directory",
                    patterns.size() == 1 ? fmt::format("'{}'", patterns[0])
                                         : fmt::format("any of ['{}']", fmt::join(patterns, "', '")));
  // Byte order, not glob's locale collation: the same list on every machine.
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  if (options.shuffle) {
    // Fisher-Yates over mt19937_64 written out: std::shuffle's algorithm differs between standard
    // libraries, and a seed must give the same order everywhere.
    std::mt19937_64 rng(options.seed ? *options.seed : next_random_seed());
    for (std::size_t i = files.size(); i > 1; --i) {
      const std::size_t j = static_cast<std::size_t>(rng() % i);
      std::swap(files[i - 1], files[j]);
    }
  }
  return files;
}

std::vector<std::string> list_files(const std::string& pattern, ListFilesOptions options) {
  return list_files(std::vector<std::string>{pattern}, options);
}

std::vector<std::string> list_files(std::initializer_list<std::string> patterns, ListFilesOptions options) {
  return list_files(std::vector<std::string>(patterns), options);
}

}  // namespace kerascpp::data
