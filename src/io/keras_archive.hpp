// Keras 3's `.keras` archive (keras/src/saving/saving_lib.py): a zip holding config.json (the model's
// serialized config), metadata.json ({"keras_version", "date_saved"}) and model.weights.h5 (the
// same HDF5 layout as save_weights). Read and written through libzip.
#pragma once
#include <string>
#include <vector>

namespace kerascpp::io {

struct KerasArchive {
  std::string config_json;
  std::string metadata_json;
  std::vector<char> weights_h5;
};

// Writes the archive atomically (write_atomically): a reader never sees half an archive.
void write_keras_archive(const std::string& path, const KerasArchive& archive);

// Reads the three members. A file that is missing, not a zip, truncated or corrupted (a member's
// CRC does not match), or that lacks config.json or model.weights.h5 is an IOError naming the
// file and what is wrong; metadata.json is optional, as Keras treats it.
KerasArchive read_keras_archive(const std::string& path);

}  // namespace kerascpp::io
