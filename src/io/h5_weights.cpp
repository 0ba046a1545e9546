#include "io/h5_weights.hpp"

#include <fmt/format.h>
#include <hdf5.h>

#include <filesystem>
#include <mutex>
#include <vector>

#include "check.hpp"
#include "io/atomic_file.hpp"
#include "io/h5_handles.hpp"
#include "io/h5_probe.hpp"
#include "io/h5_read.hpp"
#include "io/h5_write.hpp"
#include "kerascpp/error.hpp"

// The public entry points: file system checks, the HDF5 lock and error silencing around the
// reader (h5_read.cpp) and the writer (h5_write.cpp).
namespace kerascpp::io {

void write_weights_file(const std::string& path, const WeightsFile& file) {
  write_atomically(path, [&](const std::string& tmp_path) {
    std::vector<char> image;
    {
      std::lock_guard lock(h5::hdf5_mutex());
      h5::QuietHdf5 quiet;
      image = h5::build_image(file);
    }
    h5::write_image(tmp_path, image);
  });
}

WeightsFile read_weights_file(const std::string& path) { return read_weights_file(path, LayoutCheck{}); }

WeightsFile read_weights_file(const std::string& path, const LayoutCheck& check) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  KERASCPP_CHECK_IO(fs::exists(status),
                    "cannot read weights file '{}': it does not exist; check the path (relative "
                    "paths start at the working directory '{}')",
                    path, fs::current_path(ec).string());
  KERASCPP_CHECK_IO(!fs::is_directory(status),
                    "cannot read weights file '{}': it is a directory; give the .weights.h5 file "
                    "inside it",
                    path);
  // A FIFO or a device would make HDF5 block or read forever.
  KERASCPP_CHECK_IO(fs::is_regular_file(status),
                    "cannot read weights file '{}': it is not a regular file; give the .weights.h5 file "
                    "itself",
                    path);

  std::lock_guard lock(h5::hdf5_mutex());
  h5::QuietHdf5 quiet;
  h5::probe_in_child_process(path);  // libhdf5 crashes on some corrupt files: see h5_probe.hpp
  return h5::read_hdf5_file(path, check);
}

}  // namespace kerascpp::io
