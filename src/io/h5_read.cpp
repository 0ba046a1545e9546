#include "io/h5_read.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "io/h5_handles.hpp"
#include "io/h5_layout.hpp"
#include "io/h5_object_header_check.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::io::h5 {
namespace {

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

// Everything a reading failure needs to name: the file and the object inside it.
struct Reader {
  const std::string& path;
  const std::vector<char>* image = nullptr;  // the bytes of an in-memory file, else read `path`
  FileGeometry geometry{};                   // set once the file is open

  // The `n` bytes at file offset `at` (the caller checked that they lie inside the file). With
  // pread, not a stream: libhdf5 1.10.8 frees pointers from uninitialised memory when it decodes
  // some corrupt link tables, and a stream's freed buffer full of file bytes made that a crash
  // instead of an error (found fuzzing version 2 files; the forked probe catches it either way).
  std::vector<unsigned char> bytes_at(std::uint64_t at, std::size_t n) const {
    std::vector<unsigned char> out(n);
    if (image) {
      std::copy_n(image->begin() + static_cast<std::ptrdiff_t>(at), n, out.begin());
    } else {
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      const ssize_t got = fd < 0 ? -1 : ::pread(fd, out.data(), n, static_cast<off_t>(at));
      if (fd >= 0) ::close(fd);
      if (got != static_cast<ssize_t>(n)) fail(fmt::format("cannot read {} bytes at offset {}", n, at));
    }
    return out;
  }
  // bytes_at, as the object header check takes it.
  ReadBytes byte_reader() const {
    return [this](std::uint64_t at, std::size_t n) { return bytes_at(at, n); };
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw IOError(fmt::format("cannot read weights file '{}': {}{}", path, what, hdf5_detail()));
  }
  Handle checked(hid_t id, Handle::Closer closer, const std::string& what) const {
    if (id < 0) fail(what);
    return Handle(id, closer);
  }
  void check(herr_t status, const std::string& what) const {
    if (status < 0) fail(what);
  }
};

// The address of the object a hard link points to; soft and external links are refused (like
// Keras: they can point outside the file).
haddr_t hard_link_address(const Reader& r, hid_t parent, const std::string& name, const std::string& where) {
  H5L_info_t link;
  r.check(H5Lget_info(parent, name.c_str(), &link, H5P_DEFAULT), "cannot inspect " + where + " (file corrupt?)");
  if (link.type != H5L_TYPE_HARD)
    r.fail(
        fmt::format("{} is a soft or external link; weights files must hold their data directly (re-save the "
                    "model)",
                    where));
#if H5_VERSION_GE(1, 12, 0)
  haddr_t addr = HADDR_UNDEF;
  r.check(H5VLnative_token_to_addr(parent, link.u.token, &addr), "cannot inspect " + where + " (file corrupt?)");
  return addr;
#else
  return link.u.address;
#endif
}

struct Link {
  std::string name;
  haddr_t address;
};

// The links of a group in name order (Keras' and our files record no creation order).
std::vector<Link> link_names(const Reader& r, hid_t group, const std::string& where) {
  H5G_info_t info;
  r.check(H5Gget_info(group, &info), "cannot list group " + where + " (file corrupt?)");
  const H5_index_t index = H5_INDEX_NAME;
  std::vector<Link> links;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    ssize_t size = H5Lget_name_by_idx(group, ".", index, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (size < 0) r.fail("cannot list group " + where + " (file corrupt?)");
    std::string name(static_cast<std::size_t>(size) + 1, '\0');
    if (H5Lget_name_by_idx(group, ".", index, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT) < 0)
      r.fail("cannot list group " + where + " (file corrupt?)");
    name.resize(static_cast<std::size_t>(size));
    const haddr_t address = hard_link_address(r, group, name, where + "/" + name);
    links.push_back({std::move(name), address});
  }
  return links;
}

// Refuses an object header that libhdf5 1.10.8 would leak memory on (see h5_object_header_check.hpp).
void check_object_header(const Reader& r, haddr_t addr, const std::string& where) {
  if (const auto problem = object_header_problem(r.geometry, addr, r.byte_reader()))
    r.fail(
        fmt::format("the object header of {} {}: the file is truncated or corrupt; re-save it or use "
                    "another copy",
                    where, *problem));
}

// Opens the object that the hard link `name` of `parent` points to, at `address`.
Handle open_object(const Reader& r, hid_t parent, const std::string& name, haddr_t address, const std::string& where) {
  check_object_header(r, address, where);
  return r.checked(H5Oopen(parent, name.c_str(), H5P_DEFAULT), H5Oclose, "cannot open " + where + " (file corrupt?)");
}

Handle open_object(const Reader& r, hid_t parent, const std::string& name, const std::string& where) {
  return open_object(r, parent, name, hard_link_address(r, parent, name, where), where);
}

bool is_group(hid_t object) { return H5Iget_type(object) == H5I_GROUP; }

bool has_link(const Reader& r, hid_t parent, const char* name) {
  htri_t exists = H5Lexists(parent, name, H5P_DEFAULT);
  if (exists < 0) r.fail(std::string("cannot look up '") + name + "' (file corrupt?)");
  return exists > 0;
}

// A dataset found in the file, inspected but not read yet.
struct Pending {
  Handle dset;
  DatasetInfo info;
  hid_t memory_type = H5I_INVALID_HID;
};

Pending inspect_dataset(const Reader& r, Handle dset, const std::string& where) {
  bool contiguous = false;
  bool compact = false;
  {
    // Keras refuses external and virtual datasets (they read other files); so do we.
    Handle dcpl = r.checked(H5Dget_create_plist(dset.get()), H5Pclose, "cannot inspect dataset " + where);
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    if (layout == H5D_VIRTUAL || H5Pget_external_count(dcpl.get()) > 0)
      r.fail(where + " is an external or virtual dataset; weights files must hold their data directly");
    contiguous = layout == H5D_CONTIGUOUS || layout == H5D_COMPACT;
    compact = layout == H5D_COMPACT;
  }
  Handle space =
      r.checked(H5Dget_space(dset.get()), H5Sclose, "cannot read the shape of " + where + " (file corrupt?)");
  Shape shape;
  switch (H5Sget_simple_extent_type(space.get())) {
    case H5S_SCALAR:
      break;
    case H5S_SIMPLE: {
      int rank = H5Sget_simple_extent_ndims(space.get());
      if (rank < 0) r.fail("cannot read the shape of " + where + " (file corrupt?)");
      std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
      if (rank > 0)
        r.check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), "cannot read the shape of " + where);
      for (auto d : dims) {
        if (d > static_cast<hsize_t>(std::numeric_limits<std::int64_t>::max()))
          r.fail(where + " declares an impossible dimension (file corrupt?)");
        shape.push_back(static_cast<std::int64_t>(d));
      }
      break;
    }
    default:
      r.fail(where + " has no data (null dataspace); Keras variables always have a shape");
  }

  Handle type = r.checked(H5Dget_type(dset.get()), H5Tclose, "cannot read the type of " + where + " (file corrupt?)");
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
    if (H5Aexists(dset.get(), "dtype") > 0) hint = "it is probably bfloat16; save the Keras model in float32";
    H5Eclear2(H5E_DEFAULT);
    r.fail(fmt::format("{} has an unsupported HDF5 type (class {}, {} bytes); {}", where, static_cast<int>(type_class),
                       type_size, hint));
  }

  // A corrupt or hostile shape must not make us allocate far more than the file can hold (Keras
  // guards against the same "shape bomb"). Uncompressed data lies in the file, so it cannot be
  // larger than the file; compressed (chunked) data gets deflate's best ratio, about 1:1032.
  std::uint64_t declared = type_size;
  for (auto d : shape) {
    if (d != 0 && declared > std::numeric_limits<std::uint64_t>::max() / 2048 / static_cast<std::uint64_t>(d))
      r.fail(where + " declares an impossible shape " + shape_str(shape) + " (file corrupt?)");
    declared *= static_cast<std::uint64_t>(d);
  }
  const std::uint64_t limit =
      contiguous ? r.geometry.file_bytes : std::max<std::uint64_t>(r.geometry.file_bytes * 1100, 1 << 20);
  if (declared > limit)
    r.fail(
        fmt::format("{} declares shape {} ({} bytes), more than the {}-byte file can hold: the file is "
                    "truncated or corrupt; re-save it or use another copy",
                    where, shape_str(shape), declared, r.geometry.file_bytes));
  // A compact dataset keeps its values inside its layout message, and libhdf5 1.10 reads them
  // without checking that they cover the shape: on a corrupt message H5Dread copied from NULL
  // (SIGSEGV, found by fuzz_weights_h5). Its storage size is that message's byte count.
  if (compact && H5Dget_storage_size(dset.get()) < declared)
    r.fail(
        fmt::format("{} declares shape {} ({} bytes) but stores {} bytes: the file is corrupt; re-save it "
                    "or use another copy",
                    where, shape_str(shape), declared, H5Dget_storage_size(dset.get())));
  return Pending{std::move(dset), DatasetInfo{where, std::move(shape), dtype}, memory_type};
}

Tensor read_data(const Reader& r, const Pending& p) {
  Tensor tensor(p.info.shape, p.info.dtype, Device{});
  if (tensor.numel() > 0)
    r.check(H5Dread(p.dset.get(), p.memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, tensor.raw()),
            "cannot read the data of " + p.info.entry + " (file truncated or corrupt?)");
  return tensor;
}

// A `vars` group holds datasets "0".."n-1"; HDF5 lists them by name ("0", "1", "10", "11", "2"),
// so the order comes from the numbers, not from the listing.
std::vector<Pending> inspect_vars_group(const Reader& r, hid_t group, const std::string& where) {
  std::vector<std::pair<std::size_t, Link>> entries;
  for (auto& link : link_names(r, group, where)) {
    const std::string& name = link.name;
    const bool numeric = !name.empty() && name.size() < 10 &&
                         std::all_of(
                             name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                         (name == "0" || name[0] != '0');
    if (!numeric)
      r.fail(
          fmt::format("{} holds '{}', but Keras names variables 0, 1, 2, ...; this is not a Keras 3 "
                      "weights file",
                      where, name));
    entries.emplace_back(std::stoul(name), std::move(link));
  }
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Pending> vars;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].first != i)
      r.fail(
          fmt::format("{} has no variable {} (it has {} variables); the file is incomplete", where, i, entries.size()));
    const Link& link = entries[i].second;
    const std::string item = where + "/" + link.name;
    Handle object = open_object(r, group, link.name, link.address, item);
    if (H5Iget_type(object.get()) != H5I_DATASET) r.fail(item + " is not a dataset");
    vars.push_back(inspect_dataset(r, std::move(object), item));
  }
  return vars;
}

// Every dataset of the file, found and inspected, none read yet.
struct PendingFile {
  std::vector<std::pair<std::string, std::vector<Pending>>> layers;
  std::vector<Pending> optimizer_vars;
  bool has_optimizer = false;
  std::vector<std::pair<std::string, Pending>> extra;
};

// Walks layers/...: every group holding `vars` is one entry, named by its path below `layers/`
// (nested models and layers with sublayers put their children below their own group).
void collect_layers(const Reader& r, hid_t group, const std::string& rel, const std::string& where, PendingFile& out,
                    int depth, int& groups_seen) {
  // Hard links can form cycles in a hostile file, and a few links per level make the walk
  // exponential; real models are neither this deep nor this large.
  if (depth > 64) r.fail(where + " is nested more than 64 levels deep (file corrupt?)");
  if (++groups_seen > 100000) r.fail("layers/ holds more than 100000 groups (hard-link loop? file corrupt?)");
  for (auto& [name, address] : link_names(r, group, where)) {
    const std::string child_where = where + "/" + name;
    Handle child = open_object(r, group, name, address, child_where);
    if (!is_group(child.get())) continue;  // Keras ignores stray datasets outside vars too
    if (name == "vars" && !rel.empty()) {
      out.layers.emplace_back(rel, inspect_vars_group(r, child.get(), child_where));
    } else {
      collect_layers(r, child.get(), rel.empty() ? name : rel + "/" + name, child_where, out, depth + 1, groups_seen);
    }
  }
}

PendingFile inspect_contents(const Reader& r, hid_t root) {
  PendingFile file;
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
    int groups_seen = 0;
    collect_layers(r, layers.get(), "", layers_name, file, 0, groups_seen);
  }

  if (has_link(r, root, "optimizer")) {
    Handle optimizer = open_object(r, root, "optimizer", "optimizer");
    if (is_group(optimizer.get()) && has_link(r, optimizer.get(), "vars")) {
      Handle vars = open_object(r, optimizer.get(), "vars", "optimizer/vars");
      if (!is_group(vars.get())) r.fail("optimizer/vars is not a group");
      file.optimizer_vars = inspect_vars_group(r, vars.get(), "optimizer/vars");
      file.has_optimizer = true;
    }
  }
  // The `name` attributes are not read: Keras never reads them either, and libhdf5 1.10 reads
  // variable-length strings from the global heap without bounds checks, so one corrupt byte
  // there crashes the process (found by fuzzing) instead of raising an error.

  if (has_link(r, root, kExtraGroup)) {
    Handle extra = open_object(r, root, kExtraGroup, kExtraGroup);
    if (!is_group(extra.get())) r.fail(std::string(kExtraGroup) + " is not a group");
    for (auto& [name, address] : link_names(r, extra.get(), kExtraGroup)) {
      const std::string where = std::string(kExtraGroup) + "/" + name;
      Handle object = open_object(r, extra.get(), name, address, where);
      if (H5Iget_type(object.get()) != H5I_DATASET) r.fail(where + " is not a dataset");
      file.extra.emplace_back(name, inspect_dataset(r, std::move(object), where));
    }
  }
  return file;
}

WeightsLayout layout_of(const PendingFile& pending) {
  WeightsLayout layout;
  for (const auto& [name, vars] : pending.layers) {
    auto& group = layout.layers.emplace_back(name, std::vector<DatasetInfo>{}).second;
    for (const auto& p : vars) group.push_back(p.info);
  }
  for (const auto& p : pending.optimizer_vars) layout.optimizer_vars.push_back(p.info);
  layout.has_optimizer = pending.has_optimizer;
  for (const auto& [name, p] : pending.extra) layout.extra.emplace_back(name, p.info);
  return layout;
}

WeightsFile read_all(const Reader& r, const PendingFile& pending) {
  WeightsFile file;
  for (const auto& [name, vars] : pending.layers) {
    WeightsGroup group{name, {}};
    for (const auto& p : vars) group.vars.push_back(read_data(r, p));
    file.layers.push_back(std::move(group));
  }
  for (const auto& p : pending.optimizer_vars) file.optimizer_vars.push_back(read_data(r, p));
  file.has_optimizer = pending.has_optimizer;
  for (const auto& [name, p] : pending.extra) file.extra.emplace_back(name, read_data(r, p));
  file.model_name.clear();  // not read, see above
  file.optimizer_name.clear();
  return file;
}

// Reads every dataset's bytes into one scratch buffer: all the parsing read_all does, without a
// Tensor, so a forked probe touches no allocator lock a thread of its parent may have held.
void probe_all(const Reader& r, const PendingFile& pending) {
  std::vector<unsigned char> scratch;
  auto probe = [&](const Pending& p) {
    scratch.resize(static_cast<std::size_t>(shape_numel(p.info.shape)) * dtype_size(p.info.dtype));
    if (!scratch.empty())
      r.check(H5Dread(p.dset.get(), p.memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, scratch.data()),
              "cannot read the data of " + p.info.entry + " (file truncated or corrupt?)");
  };
  for (const auto& group : pending.layers)
    for (const auto& p : group.second) probe(p);
  for (const auto& p : pending.optimizer_vars) probe(p);
  for (const auto& entry : pending.extra) probe(entry.second);
}

// HDF5's signature, which starts the superblock at byte 0, 512, 1024, 2048, ... of a file.
bool has_hdf5_signature(const std::vector<char>& image) {
  static constexpr char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  for (std::size_t at = 0; at + sizeof kSignature <= image.size(); at = at == 0 ? 512 : at * 2)
    if (std::equal(kSignature, kSignature + sizeof kSignature, image.begin() + static_cast<std::ptrdiff_t>(at)))
      return true;
  return false;
}

// Opens an in-memory image with HDF5's core driver, without a file behind it. The core driver
// refuses an image when a file of the name it is opened under exists, so the name is one that
// cannot exist (/proc/self has no such entry; elsewhere there is no /proc).
Handle open_image(const Reader& r, const std::vector<char>& image) {
  Handle fapl = r.checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "cannot create an HDF5 property list");
  r.check(H5Pset_fapl_core(fapl.get(), 64 * 1024, false), "cannot set up an in-memory HDF5 file");
  r.check(H5Pset_file_image(fapl.get(), const_cast<char*>(image.data()), image.size()),
          "cannot hand the bytes to HDF5");  // HDF5 copies them
  return r.checked(H5Fopen("/proc/self/kerascpp-in-memory-weights", H5F_ACC_RDONLY, fapl.get()), H5Fclose,
                   "the bytes could not be opened as HDF5: they are truncated or corrupt; use the bytes "
                   "save_weights_to_bytes returned, unchanged");
}

// What check_object_header needs from the superblock, which libhdf5 has read already.
FileGeometry read_file_geometry(const Reader& r, hid_t file, std::uint64_t file_bytes) {
  Handle fcpl = r.checked(H5Fget_create_plist(file), H5Pclose, "cannot read its superblock (file corrupt?)");
  hsize_t userblock = 0;
  std::size_t sizeof_addr = 0, sizeof_size = 0;
  r.check(H5Pget_userblock(fcpl.get(), &userblock), "cannot read its superblock (file corrupt?)");
  r.check(H5Pget_sizes(fcpl.get(), &sizeof_addr, &sizeof_size), "cannot read its superblock (file corrupt?)");
  if (sizeof_addr < 1 || sizeof_addr > 8 || sizeof_size < 1 || sizeof_size > 8)
    r.fail("its superblock declares impossible address sizes (file corrupt?)");
  return read_superblock_geometry(file_bytes, userblock, sizeof_addr, sizeof_size, r.byte_reader());
}

// Checks the root group's object header (no link leads to it: its address comes from the
// superblock), then inspects every dataset.
PendingFile inspect_file(Reader& reader, hid_t file, std::uint64_t file_bytes) {
  reader.geometry = read_file_geometry(reader, file, file_bytes);
  if (reader.geometry.root != HADDR_UNDEF) check_object_header(reader, reader.geometry.root, "the root group");
  return inspect_contents(reader, file);
}

// Opens `path`, inspects every dataset and hands the reader and what it found to `finish`.
template <class Finish>
auto open_and_inspect(const Source& source, Finish&& finish) {
  const std::string& path = source.name;
  Reader reader{path};
  if (source.image) {
    KERASCPP_CHECK_IO(has_hdf5_signature(*source.image),
                      "cannot read weights '{}': the bytes are not an HDF5 file (no HDF5 signature); give "
                      "what save_weights_to_bytes returned or the contents of a .weights.h5 file",
                      path);
    Handle h5file = open_image(reader, *source.image);
    reader.image = source.image;
    const PendingFile pending = inspect_file(reader, h5file.get(), source.image->size());
    return finish(reader, pending);
  }
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 == 0) {
    H5Eclear2(H5E_DEFAULT);
    throw IOError(
        fmt::format("cannot read weights file '{}': it is not an HDF5 file (no HDF5 signature); "
                    "give a .weights.h5 file saved by Keras 3 or kerascpp",
                    path));
  }
  if (is_hdf5 < 0) reader.fail("it cannot be opened (permissions?)");

  Handle fapl = file_access_plist();
  Handle h5file = reader.checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose,
                                 "it could not be opened as HDF5: it is truncated or corrupt; re-save it or "
                                 "use another copy");
  // The size on disk, not HDF5's idea of it (which comes from the superblock, a field to distrust).
  std::error_code ec;
  const std::uint64_t file_bytes = std::filesystem::file_size(path, ec);
  if (ec) reader.fail("cannot get its size: " + ec.message());
  const PendingFile pending = inspect_file(reader, h5file.get(), file_bytes);
  return finish(reader, pending);
}

}  // namespace

WeightsFile read_hdf5(const Source& source, const LayoutCheck& check) {
  return open_and_inspect(source, [&](const Reader& reader, const PendingFile& pending) {
    if (check) check(layout_of(pending));
    return read_all(reader, pending);
  });
}

void probe_hdf5(const Source& source) {
  open_and_inspect(source, [](const Reader& reader, const PendingFile& pending) {
    probe_all(reader, pending);
    return 0;
  });
}

WeightsFile read_hdf5_file(const std::string& path, const LayoutCheck& check) { return read_hdf5({path}, check); }

void probe_hdf5_file(const std::string& path) { probe_hdf5({path}); }

}  // namespace kerascpp::io::h5
