// Reading and validating a `.weights.h5` file written by Keras 3 or by kerascpp.
#pragma once
#include <string>
#include <vector>

#include "io/h5_weights.hpp"

namespace kerascpp::io::h5 {

// Everything after the file system checks of read_weights_file: whether `path` is HDF5 at all,
// then its layout (given to `check`, when set, before any data is read), then its data.
// Callers hold hdf5_mutex() and a QuietHdf5.
WeightsFile read_hdf5_file(const std::string& path, const LayoutCheck& check);

// The same parsing and data reads as read_hdf5_file, into scratch memory only (no Tensor is
// made): what the forked probe of h5_probe.cpp runs. Throws what read_hdf5_file would.
void probe_hdf5_file(const std::string& path);

// What the reader reads: the file at `name`, or, when `image` is set, a whole file's bytes in
// memory (save_weights_to_bytes), named `name` in messages. Both go through the same checks.
struct Source {
  std::string name;
  const std::vector<char>* image = nullptr;
};
WeightsFile read_hdf5(const Source& source, const LayoutCheck& check);
void probe_hdf5(const Source& source);

}  // namespace kerascpp::io::h5
