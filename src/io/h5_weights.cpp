#include "io/h5_weights.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>

#include "io/atomic_file.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::io {
namespace {

// Debian's libhdf5 is the serial, non-thread-safe build: every HDF5 call in this file runs
// under one lock so that callbacks on several replica threads cannot corrupt its global state.
std::mutex& hdf5_mutex() {
  static std::mutex m;
  return m;
}

// HDF5 prints its whole error stack to stderr by default; we turn failures into one
// kerascpp::Error instead, and restore whatever handler the process had afterwards.
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// The innermost HDF5 messages say what actually failed ("file signature not found",
// "truncated file: eof = ..."); the outer ones only repeat which API call it was.
std::string hdf5_detail() {
  std::vector<std::string> messages;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* out) -> herr_t {
        if (e->desc && *e->desc) static_cast<std::vector<std::string>*>(out)->push_back(e->desc);
        return 0;
      },
      &messages);
  H5Eclear2(H5E_DEFAULT);
  if (messages.empty()) return {};
  std::string detail = messages.back();
  if (messages.size() > 1 && messages[messages.size() - 2] != detail)
    detail = messages[messages.size() - 2] + ": " + detail;
  return " [HDF5: " + detail + "]";
}

// Owns one HDF5 identifier; closes it on every path out of a function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      closer_ = o.closer_;
      o.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset() {
    if (id_ >= 0 && closer_) closer_(id_);
    id_ = H5I_INVALID_HID;
  }
  // For the one close whose failure must be reported rather than swallowed by the destructor.
  herr_t close_checked() {
    herr_t status = id_ >= 0 && closer_ ? closer_(id_) : 0;
    id_ = H5I_INVALID_HID;
    return status;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Throws with the caller's context plus HDF5's own reason.
[[noreturn]] void h5_fail(const std::string& what) {
  throw Error(what + hdf5_detail());
}

Handle checked(hid_t id, Handle::Closer closer, const std::string& what) {
  if (id < 0) h5_fail(what);
  return Handle(id, closer);
}

void check(herr_t status, const std::string& what) {
  if (status < 0) h5_fail(what);
}

// How the reader opens files on disk (the writer builds its file in memory).
Handle file_access_plist() {
  Handle fapl = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "cannot create an HDF5 property list");
#if H5_VERSION_GE(1, 10, 7)
  // Our files are complete before they get their name (write_atomically), so HDF5's flock adds
  // nothing and only fails on file systems without locks (some NFS and Lustre mounts).
  check(H5Pset_file_locking(fapl.get(), false, true), "cannot configure HDF5 file locking");
#endif
  return fapl;
}

// ---------------------------------------------------------------------------------------------
// Writing

constexpr const char* kExtraGroup = "kerascpp";  // kerascpp's own training state; Keras ignores it

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
  }
  throw Error("unknown tensor dtype");
}

void check_tensor(const Tensor& t, const std::string& where) {
  if (!t.defined())
    throw Error(
        fmt::format("{} is an empty (undefined) Tensor; give every variable a value before saving", where));
  if (t.device().kind != Device::Kind::cpu)
    throw Error(fmt::format("{} lives on {}; copy it to the host before saving", where, t.device().str()));
  for (auto d : t.shape())
    if (d < 0) throw Error(fmt::format("{} has unknown dimension in shape {}", where, shape_str(t.shape())));
}

// Layer paths are HDF5 paths under `layers/`; "." and ".." mean something else there, and a
// component called "vars" would collide with a variables group.
void check_layer_name(const std::string& name) {
  auto bad = [&](const std::string& why) {
    throw Error(fmt::format("layer name '{}' {}; use Keras-style names such as \"dense_1\"", name, why));
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
    current = exists ? checked(H5Gopen2(current.get(), part.c_str(), H5P_DEFAULT), H5Gclose,
                               "cannot open group " + where)
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
  // Default creation properties give contiguous, uncompressed storage, as Keras writes.
  Handle dset = checked(
      H5Dcreate2(parent, name.c_str(), types.file, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose, "cannot create dataset " + where);
  if (t.numel() > 0)
    check(H5Dwrite(dset.get(), types.memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.raw()),
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
  for (const auto& entry : file.extra) add(entry.second);
  return bytes;
}

// The file is assembled in memory (HDF5's core driver) and written to disk by write_image().
// HDF5 writing to disk itself would report a full disk from H5Dwrite or H5Fclose, and after a
// failed H5Fclose libhdf5 1.10 keeps the half-closed file and crashes at exit; in memory it can
// only run out of memory. The price is a second copy of the weights in host memory while saving.
std::vector<char> build_image(const WeightsFile& file) {
  for (const auto& layer : file.layers) check_layer_name(layer.name);
  for (const auto& [name, tensor] : file.extra)
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
      throw Error(
          fmt::format("extra entry name '{}' must be non-empty, without '/', and not '.' or '..'", name));

  Handle fapl = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "cannot create an HDF5 property list");
  check(H5Pset_fapl_core(fapl.get(), estimated_file_size(file), false),
        "cannot set up an in-memory HDF5 file");
  Handle h5file = checked(H5Fcreate("kerascpp-weights-image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                          H5Fclose, "cannot create an in-memory HDF5 file");
  {
    Handle layers = create_group(h5file.get(), "layers", "layers");
    for (const auto& layer : file.layers) {
      const std::string where = "layers/" + layer.name + "/vars";
      Handle group = open_or_create_path(layers.get(), layer.name, "layers/" + layer.name);
      htri_t exists = H5Lexists(group.get(), "vars", H5P_DEFAULT);
      if (exists < 0) h5_fail("cannot look up " + where);
      if (exists > 0)
        throw Error(
            fmt::format("two layers are both named '{}'; give every layer a unique name", layer.name));
      std::string attr = layer.layer_name;
      if (attr.empty()) attr = layer.name.substr(layer.name.rfind('/') + 1);
      write_vars_group(group.get(), layer.vars, attr, where);
    }

    if (file.has_optimizer || !file.optimizer_vars.empty()) {
      Handle optimizer = create_group(h5file.get(), "optimizer", "optimizer");
      write_vars_group(optimizer.get(), file.optimizer_vars, file.optimizer_name, "optimizer/vars");
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
        if (exists > 0)
          throw Error(fmt::format("extra entry '{}' appears twice; give each a unique name", name));
        write_dataset(extra.get(), name, tensor, where);
      }
    }
  }  // every object closed before the image is taken, so that all metadata is in it
  check(H5Fflush(h5file.get(), H5F_SCOPE_GLOBAL), "cannot finish the HDF5 file");
  ssize_t size = H5Fget_file_image(h5file.get(), nullptr, 0);
  if (size < 0) h5_fail("cannot take the HDF5 file image");
  std::vector<char> image(static_cast<std::size_t>(size));
  if (H5Fget_file_image(h5file.get(), image.data(), image.size()) != size)
    h5_fail("cannot take the HDF5 file image");
  check(h5file.close_checked(), "cannot close the in-memory HDF5 file");
  return image;
}

void write_image(const std::string& tmp_path, const std::vector<char>& image) {
  int fd = ::open(tmp_path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw Error(fmt::format("cannot open '{}': {}", tmp_path, std::strerror(errno)));
  std::size_t done = 0;
  while (done < image.size()) {
    ssize_t n = ::write(fd, image.data() + done, image.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      const std::string progress = fmt::format("after {} of {} bytes", done, image.size());
      if (err == ENOSPC || err == EDQUOT)
        throw Error("no space left on the device " + progress + "; free some space or choose another path");
      if (err == EFBIG)
        throw Error("the file system or the process' file size limit (ulimit -f) refused the file " +
                    progress);
      throw Error(fmt::format("writing failed {}: {}", progress, std::strerror(err)));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) throw Error(fmt::format("writing failed: {}", std::strerror(errno)));
}

// ---------------------------------------------------------------------------------------------
// Reading

// Everything a reading failure needs to name: the file and the object inside it.
struct Reader {
  const std::string& path;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("cannot read weights file '{}': {}{}", path, what, hdf5_detail()));
  }
  Handle checked(hid_t id, Handle::Closer closer, const std::string& what) const {
    if (id < 0) fail(what);
    return Handle(id, closer);
  }
  void check(herr_t status, const std::string& what) const {
    if (status < 0) fail(what);
  }
};

// Link names of a group in name order (Keras' and our files record no creation order).
std::vector<std::string> link_names(const Reader& r, hid_t group, const std::string& where) {
  H5G_info_t info;
  r.check(H5Gget_info(group, &info), "cannot list group " + where + " (file corrupt?)");
  const H5_index_t index = H5_INDEX_NAME;
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    ssize_t size = H5Lget_name_by_idx(group, ".", index, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (size < 0) r.fail("cannot list group " + where + " (file corrupt?)");
    std::string name(static_cast<std::size_t>(size) + 1, '\0');
    if (H5Lget_name_by_idx(group, ".", index, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT) < 0)
      r.fail("cannot list group " + where + " (file corrupt?)");
    name.resize(static_cast<std::size_t>(size));
    // Like Keras, refuse soft and external links: they can point outside the file.
    H5L_info_t link;
    r.check(H5Lget_info(group, name.c_str(), &link, H5P_DEFAULT), "cannot inspect " + where + "/" + name);
    if (link.type != H5L_TYPE_HARD)
      r.fail(
          fmt::format("{}/{} is a soft or external link; weights files must hold their data directly "
                      "(re-save the model)",
                      where, name));
    names.push_back(std::move(name));
  }
  return names;
}

Handle open_object(const Reader& r, hid_t parent, const std::string& name, const std::string& where) {
  return r.checked(H5Oopen(parent, name.c_str(), H5P_DEFAULT), H5Oclose,
                   "cannot open " + where + " (file corrupt?)");
}

bool is_group(hid_t object) {
  return H5Iget_type(object) == H5I_GROUP;
}

bool has_link(const Reader& r, hid_t parent, const char* name) {
  htri_t exists = H5Lexists(parent, name, H5P_DEFAULT);
  if (exists < 0) r.fail(std::string("cannot look up '") + name + "' (file corrupt?)");
  return exists > 0;
}

Tensor read_dataset(const Reader& r, hid_t dset, const std::string& where) {
  {
    // Keras refuses external and virtual datasets (they read other files); so do we.
    Handle dcpl = r.checked(H5Dget_create_plist(dset), H5Pclose, "cannot inspect dataset " + where);
    if (H5Pget_layout(dcpl.get()) == H5D_VIRTUAL || H5Pget_external_count(dcpl.get()) > 0)
      r.fail(where + " is an external or virtual dataset; weights files must hold their data directly");
  }
  Handle space =
      r.checked(H5Dget_space(dset), H5Sclose, "cannot read the shape of " + where + " (file corrupt?)");
  Shape shape;
  switch (H5Sget_simple_extent_type(space.get())) {
    case H5S_SCALAR:
      break;
    case H5S_SIMPLE: {
      int rank = H5Sget_simple_extent_ndims(space.get());
      if (rank < 0) r.fail("cannot read the shape of " + where + " (file corrupt?)");
      std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
      if (rank > 0)
        r.check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr),
                "cannot read the shape of " + where);
      for (auto d : dims) shape.push_back(static_cast<std::int64_t>(d));
      break;
    }
    default:
      r.fail(where + " has no data (null dataspace); Keras variables always have a shape");
  }

  Handle type =
      r.checked(H5Dget_type(dset), H5Tclose, "cannot read the type of " + where + " (file corrupt?)");
  const H5T_class_t type_class = H5Tget_class(type.get());
  const std::size_t type_size = H5Tget_size(type.get());
  DType dtype;
  hid_t memory_type;
  if (type_class == H5T_FLOAT) {
    // float64/float16 variables (Keras dtype policies) are converted by HDF5 on read.
    dtype = DType::float32;
    memory_type = H5T_NATIVE_FLOAT;
  } else if (type_class == H5T_INTEGER) {
    const bool is_signed = H5Tget_sign(type.get()) == H5T_SGN_2;
    if (!is_signed && type_size == 1) {
      dtype = DType::uint8;
      memory_type = H5T_NATIVE_UINT8;
    } else if (type_size < 4 || (type_size == 4 && is_signed)) {
      dtype = DType::int32;
      memory_type = H5T_NATIVE_INT32;
    } else {
      dtype = DType::int64;
      memory_type = H5T_NATIVE_INT64;
    }
  } else {
    std::string hint = "kerascpp reads float and integer datasets";
    if (H5Aexists(dset, "dtype") > 0) hint = "it is probably bfloat16; save the Keras model in float32";
    H5Eclear2(H5E_DEFAULT);
    r.fail(fmt::format("{} has an unsupported HDF5 type (class {}, {} bytes); {}", where,
                       static_cast<int>(type_class), type_size, hint));
  }

  // Guard against a corrupt or hostile shape that would make us allocate far more than the
  // file could hold (Keras guards against the same "shape bomb").
  std::int64_t numel = 1;
  for (auto d : shape) {
    if (d != 0 && numel > std::numeric_limits<std::int64_t>::max() / 8 / d)
      r.fail(where + " declares an impossible shape " + shape_str(shape) + " (file corrupt?)");
    numel *= d;
  }
  const auto declared = static_cast<std::uint64_t>(numel) * dtype_size(dtype);
  const auto stored = static_cast<std::uint64_t>(H5Dget_storage_size(dset));
  if (declared > (std::uint64_t{1} << 32) && declared / 1000 > stored)
    r.fail(fmt::format("{} declares shape {} but stores only {} bytes (file corrupt or hostile)", where,
                       shape_str(shape), stored));

  Tensor tensor(shape, dtype);
  if (numel > 0)
    r.check(H5Dread(dset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, tensor.raw()),
            "cannot read the data of " + where + " (file truncated or corrupt?)");
  return tensor;
}

// A `vars` group holds datasets "0".."n-1"; HDF5 lists them by name ("0", "1", "10", "11", "2"),
// so the order comes from the numbers, not from the listing.
std::vector<Tensor> read_vars_group(const Reader& r, hid_t group, const std::string& where) {
  std::vector<std::pair<std::size_t, std::string>> entries;
  for (auto& name : link_names(r, group, where)) {
    const bool numeric = !name.empty() && name.size() < 10 &&
                         std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                         (name == "0" || name[0] != '0');
    if (!numeric)
      r.fail(
          fmt::format("{} holds '{}', but Keras names variables 0, 1, 2, ...; this is not a Keras 3 "
                      "weights file",
                      where, name));
    entries.emplace_back(std::stoul(name), name);
  }
  std::sort(entries.begin(), entries.end());
  std::vector<Tensor> vars;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].first != i)
      r.fail(fmt::format("{} has no variable {} (it has {} variables); the file is incomplete", where, i,
                         entries.size()));
    const std::string item = where + "/" + entries[i].second;
    Handle object = open_object(r, group, entries[i].second, item);
    if (H5Iget_type(object.get()) != H5I_DATASET) r.fail(item + " is not a dataset");
    vars.push_back(read_dataset(r, object.get(), item));
  }
  return vars;
}

// Walks layers/...: every group holding `vars` is one entry, named by its path below `layers/`
// (nested models and layers with sublayers put their children below their own group).
void collect_layers(const Reader& r, hid_t group, const std::string& rel, const std::string& where,
                    std::vector<WeightsGroup>& out, int depth) {
  // Hard links can form cycles in a hostile file; real models are never this deep.
  if (depth > 64) r.fail(where + " is nested more than 64 levels deep (file corrupt?)");
  for (auto& name : link_names(r, group, where)) {
    const std::string child_where = where + "/" + name;
    Handle child = open_object(r, group, name, child_where);
    if (!is_group(child.get())) continue;  // Keras ignores stray datasets outside vars too
    if (name == "vars" && !rel.empty()) {
      out.push_back({rel, read_vars_group(r, child.get(), child_where)});
    } else {
      collect_layers(r, child.get(), rel.empty() ? name : rel + "/" + name, child_where, out, depth + 1);
    }
  }
}

WeightsFile read_contents(const Reader& r) {
  Handle fapl = file_access_plist();
  Handle h5file = r.checked(H5Fopen(r.path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose,
                            "it could not be opened as HDF5: it is truncated or corrupt; re-save it or use "
                            "another copy");
  hid_t root = h5file.get();
  WeightsFile file;

  // Keras 2.13 saved the same tree under another name; Keras 3 still reads it.
  const char* layers_name = "layers";
  if (!has_link(r, root, layers_name)) {
    if (has_link(r, root, "_layer_checkpoint_dependencies")) {
      layers_name = "_layer_checkpoint_dependencies";
    } else if (has_link(r, root, "model_weights") || H5Aexists(root, "layer_names") > 0) {
      r.fail(
          "it is a legacy Keras 2 .h5 file (model_weights/...), not a Keras 3 .weights.h5 file; "
          "re-save it with Keras 3 model.save_weights(\"name.weights.h5\")");
    } else {
      H5Eclear2(H5E_DEFAULT);
      r.fail(
          "it has no 'layers' group, so it is not a Keras 3 .weights.h5 file; save weights with "
          "model.save_weights(\"name.weights.h5\")");
    }
  }
  {
    Handle layers = open_object(r, root, layers_name, layers_name);
    if (!is_group(layers.get())) r.fail(std::string("'") + layers_name + "' is not a group");
    collect_layers(r, layers.get(), "", layers_name, file.layers, 0);
  }

  if (has_link(r, root, "optimizer")) {
    Handle optimizer = open_object(r, root, "optimizer", "optimizer");
    if (is_group(optimizer.get()) && has_link(r, optimizer.get(), "vars")) {
      Handle vars = open_object(r, optimizer.get(), "vars", "optimizer/vars");
      if (!is_group(vars.get())) r.fail("optimizer/vars is not a group");
      file.optimizer_vars = read_vars_group(r, vars.get(), "optimizer/vars");
      file.has_optimizer = true;
    }
  }
  // The `name` attributes are not read back: Keras never reads them either, and libhdf5 1.10
  // reads variable-length strings from the global heap without bounds checks, so one corrupt
  // byte there crashes the process (found by fuzzing) instead of raising an error.
  file.model_name.clear();
  file.optimizer_name.clear();

  if (has_link(r, root, kExtraGroup)) {
    Handle extra = open_object(r, root, kExtraGroup, kExtraGroup);
    if (!is_group(extra.get())) r.fail(std::string(kExtraGroup) + " is not a group");
    for (auto& name : link_names(r, extra.get(), kExtraGroup)) {
      const std::string where = std::string(kExtraGroup) + "/" + name;
      Handle object = open_object(r, extra.get(), name, where);
      if (H5Iget_type(object.get()) != H5I_DATASET) r.fail(where + " is not a dataset");
      file.extra.emplace_back(name, read_dataset(r, object.get(), where));
    }
  }
  return file;
}

}  // namespace

void write_weights_file(const std::string& path, const WeightsFile& file) {
  write_atomically(path, [&](const std::string& tmp_path) {
    std::vector<char> image;
    {
      std::lock_guard lock(hdf5_mutex());
      QuietHdf5 quiet;
      image = build_image(file);
    }
    write_image(tmp_path, image);
  });
}

WeightsFile read_weights_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status))
    throw Error(
        fmt::format("cannot read weights file '{}': it does not exist; check the path (relative "
                    "paths start at the working directory '{}')",
                    path, fs::current_path(ec).string()));
  if (fs::is_directory(status))
    throw Error(
        fmt::format("cannot read weights file '{}': it is a directory; give the .weights.h5 file "
                    "inside it",
                    path));

  std::lock_guard lock(hdf5_mutex());
  QuietHdf5 quiet;
  Reader reader{path};
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 == 0) {
    H5Eclear2(H5E_DEFAULT);
    throw Error(
        fmt::format("cannot read weights file '{}': it is not an HDF5 file (no HDF5 signature); "
                    "give a .weights.h5 file saved by Keras 3 or kerascpp",
                    path));
  }
  if (is_hdf5 < 0) reader.fail("it cannot be opened (permissions?)");
  return read_contents(reader);
}

}  // namespace kerascpp::io
