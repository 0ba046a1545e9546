#include "path_checks.hpp"

#include <filesystem>

#include "check.hpp"

namespace kerascpp::callbacks {
namespace fs = std::filesystem;

void check_output_file(const std::string& path, const char* callback, const char* argument, const char* example) {
  KERASCPP_CHECK_VALUE(!path.empty(), "{}: {} is empty; pass the file to write, {}", callback, argument, example);
  std::error_code ec;
  KERASCPP_CHECK_IO(!fs::is_directory(path, ec),
                    "{}: {} '{}' is a directory, not a file; pass a file path inside it, {}", callback, argument, path,
                    example);
}

void check_output_dir(const std::string& dir, const char* callback, const char* argument, const char* example) {
  KERASCPP_CHECK_VALUE(!dir.empty(), "{}: {} is empty; pass the directory to write into, {}", callback, argument,
                       example);
  std::error_code ec;
  KERASCPP_CHECK_IO(!fs::exists(dir, ec) || fs::is_directory(dir, ec),
                    "{}: {} '{}' exists and is not a directory; remove that file or choose another directory, {}",
                    callback, argument, dir, example);
}

}  // namespace kerascpp::callbacks
