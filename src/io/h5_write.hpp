// Building a `.weights.h5` file from a WeightsFile and putting it on disk.
// Callers hold hdf5_mutex() and a QuietHdf5 around build_image (write_image calls no HDF5).
#pragma once
#include <string>
#include <vector>

#include "io/h5_weights.hpp"

namespace kerascpp::io::h5 {

// The whole HDF5 file as bytes, assembled in memory (see h5_write.cpp for why).
std::vector<char> build_image(const WeightsFile& file);

// Writes `image` to the existing file `tmp_path`, naming the cause of a failure (disk full, ...).
void write_image(const std::string& tmp_path, const std::vector<char>& image);

}  // namespace kerascpp::io::h5
