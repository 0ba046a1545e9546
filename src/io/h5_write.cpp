#include "io/h5_write.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "check.hpp"
#include "io/h5_handles.hpp"
#include "io/h5_layout.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::io::h5 {
namespace {

struct TypePair {
  hid_t file;    // what lands on disk, fixed little-endian so files are portable
  hid_t memory;  // what the tensor holds
};

TypePair h5_types(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return {H5T_IEEE_F32LE, H5T_NATIVE_FLOAT};
    case DType::int32:
      return {H5T_STD_I32LE, H5T_NATIVE_INT32};
    case DType::int64:
      return {H5T_STD_I64LE, H5T_NATIVE_INT64};
    case DType::uint8:
      return {H5T_STD_U8LE, H5T_NATIVE_UINT8};
    case DType::bfloat16:
    case DType::float16:
      break;  // variables stay float32 under every dtype policy, so weights files never need these
  }
  throw ValueError(fmt::format("HDF5 writer: no {} datasets; cast the tensor to float32 first", dtype_name(dtype)));
}

void check_tensor(const Tensor& t, const std::string& where) {
  KERASCPP_CHECK_VALUE(t.defined(), "{} is an empty (undefined) Tensor; give every variable a value before saving",
                       where);
  for (auto d : t.shape())
    KERASCPP_CHECK_SHAPE(d >= 0, "{} has unknown dimension in shape {}", where, shape_str(t.shape()));
}

// Layer paths are HDF5 paths under `layers/`; "." and ".." mean something else there, and a
// component called "vars" would collide with a variables group.
void check_layer_name(const std::string& name) {
  auto bad = [&](const std::string& why) {
    throw ValueError(fmt::format("layer name '{}' {}; use Keras-style names such as \"dense_1\"", name, why));
  };
  if (name.empty()) bad("is empty");
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    std::string part = name.substr(start, end - start);
    if (part.empty()) bad("has an empty path component");
    if (part == "." || part == "..") bad("contains '.' or '..'");
    if (part == "vars") bad("contains the reserved component \"vars\"");
    start = end + 1;
  }
}

void write_string_attribute(hid_t object, const char* name, const std::string& value) {
  // Keras (h5py) writes str attributes as scalar variable-length UTF-8 strings.
  Handle type = checked(H5Tcopy(H5T_C_S1), H5Tclose, "cannot create a string type");
  check(H5Tset_size(type.get(), H5T_VARIABLE), "cannot create a string type");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "cannot create a string type");
  Handle space = checked(H5Screate(H5S_SCALAR), H5Sclose, "cannot create a dataspace");
  Handle attr = checked(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                        fmt::format("cannot create attribute '{}'", name));
  const char* text = value.c_str();
  check(H5Awrite(attr.get(), type.get(), &text), fmt::format("cannot write attribute '{}'", name));
}

Handle create_group(hid_t parent, const std::string& name, const std::string& where) {
  // Default properties: old-style (symbol table) groups without creation order, as h5py and so
  // Keras write them. Tracking creation order would switch to v2 B-trees, which libhdf5 1.10
  // reads without enough checks: fuzzed copies of such files crashed the reader.
  return checked(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                 fmt::format("cannot create group {}", where));
}

// Nested layer paths share their parents ("model/layers/a", "model/layers/b").
Handle open_or_create_path(hid_t root, const std::string& path, const std::string& where) {
  Handle current = checked(H5Gopen2(root, ".", H5P_DEFAULT), H5Gclose, "cannot open group " + where);
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t end = std::min(path.find('/', start), path.size());
    std::string part = path.substr(start, end - start);
    htri_t exists = H5Lexists(current.get(), part.c_str(), H5P_DEFAULT);
    if (exists < 0) h5_fail("cannot look up " + where);
    current = exists
                  ? checked(H5Gopen2(current.get(), part.c_str(), H5P_DEFAULT), H5Gclose, "cannot open group " + where)
                  : create_group(current.get(), part, where);
    start = end + 1;
  }
  return current;
}

void write_dataset(hid_t parent, const std::string& name, const Tensor& t, const std::string& where) {
  check_tensor(t, where);
  std::vector<hsize_t> dims(t.shape().begin(), t.shape().end());
  Handle space = t.rank() == 0 ? checked(H5Screate(H5S_SCALAR), H5Sclose, "cannot create a dataspace")
                               : checked(H5Screate_simple(t.rank(), dims.data(), nullptr), H5Sclose,
                                         "cannot create a dataspace for " + where);
  auto types = h5_types(t.dtype());
  // Contiguous, uncompressed storage and no creation time stamp, as Keras (h5py) writes: the
  // same weights then give the same bytes (save_weights_to_bytes equals the file).
  Handle dcpl = checked(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "cannot create an HDF5 property list");
  check(H5Pset_obj_track_times(dcpl.get(), false), "cannot create an HDF5 property list");
  Handle dset = checked(H5Dcreate2(parent, name.c_str(), types.file, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                        H5Dclose, "cannot create dataset " + where);
  Tensor host = t.to(Device{});  // weights of GPU replicas are written from a host copy
  if (t.numel() > 0)
    check(H5Dwrite(dset.get(), types.memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, host.raw()),
          "cannot write dataset " + where);
}

// One `.../vars` group: datasets "0", "1", ... and the `name` attribute Keras ≥ 3.6 writes.
void write_vars_group(hid_t parent, const std::vector<Tensor>& vars, const std::string& name_attr,
                      const std::string& where) {
  Handle group = create_group(parent, "vars", where);
  write_string_attribute(group.get(), "name", name_attr);
  for (std::size_t i = 0; i < vars.size(); ++i)
    write_dataset(group.get(), std::to_string(i), vars[i], fmt::format("{}/{}", where, i));
}

// Bytes the file will take, so that the in-memory image is allocated once.
std::size_t estimated_file_size(const WeightsFile& file) {
  std::size_t bytes = 64 * 1024;
  auto add = [&](const Tensor& t) { bytes += 4096 + (t.defined() ? t.nbytes() : 0); };
  for (const auto& layer : file.layers) {
    bytes += 4096;
    for (const auto& t : layer.vars) add(t);
  }
  for (const auto& t : file.optimizer_vars) add(t);
  for (const auto& t : file.inner_optimizer_vars) add(t);
  for (const auto& entry : file.extra) add(entry.second);
  return bytes;
}

}  // namespace

// The file is assembled in memory (HDF5's core driver) and written to disk by write_image().
// HDF5 writing to disk itself would report a full disk from H5Dwrite or H5Fclose, and after a
// failed H5Fclose libhdf5 1.10 keeps the half-closed file and crashes at exit; in memory it can
// only run out of memory. The price is a second copy of the weights in host memory while saving.
std::vector<char> build_image(const WeightsFile& file) {
  for (const auto& layer : file.layers) check_layer_name(layer.name);
  for (const auto& [name, tensor] : file.extra)
    KERASCPP_CHECK_VALUE(!(name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos),
                         "extra entry name '{}' must be non-empty, without '/', and not '.' or '..'", name);

  Handle fapl = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "cannot create an HDF5 property list");
  check(H5Pset_fapl_core(fapl.get(), estimated_file_size(file), false), "cannot set up an in-memory HDF5 file");
  Handle h5file = checked(H5Fcreate("kerascpp-weights-image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose,
                          "cannot create an in-memory HDF5 file");
  {
    Handle layers = create_group(h5file.get(), "layers", "layers");
    for (const auto& layer : file.layers) {
      const std::string where = "layers/" + layer.name + "/vars";
      Handle group = open_or_create_path(layers.get(), layer.name, "layers/" + layer.name);
      htri_t exists = H5Lexists(group.get(), "vars", H5P_DEFAULT);
      if (exists < 0) h5_fail("cannot look up " + where);
      KERASCPP_CHECK_VALUE(exists <= 0, "two layers are both named '{}'; give every layer a unique name", layer.name);
      std::string attr = layer.layer_name;
      if (attr.empty()) attr = layer.name.substr(layer.name.rfind('/') + 1);
      write_vars_group(group.get(), layer.vars, attr, where);
    }

    if (file.has_optimizer || !file.optimizer_vars.empty()) {
      Handle optimizer = create_group(h5file.get(), "optimizer", "optimizer");
      write_vars_group(optimizer.get(), file.optimizer_vars, file.optimizer_name, "optimizer/vars");
      if (!file.inner_optimizer_vars.empty()) {
        Handle inner = create_group(optimizer.get(), "inner_optimizer", "optimizer/inner_optimizer");
        write_vars_group(inner.get(), file.inner_optimizer_vars, file.inner_optimizer_name,
                         "optimizer/inner_optimizer/vars");
      }
    }

    // The model's own variables: none for Sequential and Functional, but Keras always writes
    // the group, named after the model.
    write_vars_group(h5file.get(), {}, file.model_name, "vars");

    if (!file.extra.empty()) {
      Handle extra = create_group(h5file.get(), kExtraGroup, kExtraGroup);
      for (const auto& [name, tensor] : file.extra) {
        const std::string where = std::string(kExtraGroup) + "/" + name;
        htri_t exists = H5Lexists(extra.get(), name.c_str(), H5P_DEFAULT);
        if (exists < 0) h5_fail("cannot look up " + where);
        KERASCPP_CHECK_VALUE(exists <= 0, "extra entry '{}' appears twice; give each a unique name", name);
        write_dataset(extra.get(), name, tensor, where);
      }
    }
  }  // every object closed before the image is taken, so that all metadata is in it
  check(H5Fflush(h5file.get(), H5F_SCOPE_GLOBAL), "cannot finish the HDF5 file");
  ssize_t size = H5Fget_file_image(h5file.get(), nullptr, 0);
  if (size < 0) h5_fail("cannot take the HDF5 file image");
  std::vector<char> image(static_cast<std::size_t>(size));
  if (H5Fget_file_image(h5file.get(), image.data(), image.size()) != size) h5_fail("cannot take the HDF5 file image");
  check(h5file.close_checked(), "cannot close the in-memory HDF5 file");
  return image;
}

void write_image(const std::string& tmp_path, const std::vector<char>& image) {
  int fd = ::open(tmp_path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  KERASCPP_CHECK_IO(fd >= 0, "cannot open '{}': {}", tmp_path, std::strerror(errno));
  std::size_t done = 0;
  while (done < image.size()) {
    ssize_t n = ::write(fd, image.data() + done, image.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      const std::string progress = fmt::format("after {} of {} bytes", done, image.size());
      KERASCPP_CHECK_IO(err != ENOSPC && err != EDQUOT, "{}",
                        "no space left on the device " + progress + "; free some space or choose another path");
      KERASCPP_CHECK_IO(err != EFBIG, "{}",
                        "the file system or the process' file size limit (ulimit -f) refused the file " + progress);
      throw IOError(fmt::format("writing failed {}: {}", progress, std::strerror(err)));
    }
    done += static_cast<std::size_t>(n);
  }
  KERASCPP_CHECK_IO(::close(fd) == 0, "writing failed: {}", std::strerror(errno));
}
}  // namespace kerascpp::io::h5
