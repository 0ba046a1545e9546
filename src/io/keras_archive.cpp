#include "io/keras_archive.hpp"

#include <fmt/format.h>
#include <zip.h>

#include <memory>

#include "check.hpp"
#include "io/atomic_file.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::io {

namespace {

constexpr const char* kConfig = "config.json";
constexpr const char* kMetadata = "metadata.json";
constexpr const char* kWeights = "model.weights.h5";
// config.json and metadata.json are small; a larger one is not an archive Keras or we wrote.
constexpr zip_uint64_t kMaxJsonBytes = 64u << 20;

std::string open_error(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string s = zip_error_strerror(&e);
  zip_error_fini(&e);
  return s;
}

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }  // discard: nothing is written on this path
};
using ZipHandle = std::unique_ptr<zip_t, ZipCloser>;

void add_member(zip_t* z, const char* name, const void* data, std::size_t size, bool compress,
                const std::string& path) {
  zip_source_t* src = zip_source_buffer(z, data, size, 0);
  zip_int64_t index = src ? zip_file_add(z, name, src, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8) : -1;
  if (index < 0) {
    if (src) zip_source_free(src);
    throw IOError(fmt::format("cannot write '{}': adding {} failed: {}", path, name, zip_strerror(z)));
  }
  KERASCPP_CHECK_IO(
      zip_set_file_compression(z, static_cast<zip_uint64_t>(index), compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) == 0,
      "cannot write '{}': setting the compression of {} failed: {}", path, name, zip_strerror(z));
}

std::vector<char> read_member(zip_t* z, const char* name, const std::string& path, bool json) {
  zip_stat_t st;
  zip_stat_init(&st);
  KERASCPP_CHECK_IO(zip_stat(z, name, 0, &st) == 0 && (st.valid & ZIP_STAT_SIZE),
                    "'{}' is not a Keras model archive: it has no {} (a .keras file holds config.json, "
                    "metadata.json and model.weights.h5; model.save(\"m.keras\") writes one)",
                    path, name);
  KERASCPP_CHECK_IO(!json || st.size <= kMaxJsonBytes,
                    "'{}': {} is {} bytes, more than a model config can be; the file is corrupted", path, name,
                    st.size);
  std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> f(zip_fopen(z, name, 0), zip_fclose);
  KERASCPP_CHECK_IO(f, "'{}': cannot open {} in the archive: {}", path, name, zip_strerror(z));
  std::vector<char> bytes(st.size);
  zip_uint64_t got = 0;
  while (got < st.size) {
    zip_int64_t n = zip_fread(f.get(), bytes.data() + got, st.size - got);
    KERASCPP_CHECK_IO(n > 0, "'{}': reading {} failed ({}): the archive is truncated or corrupted", path, name,
                      n < 0 ? zip_file_strerror(f.get()) : "unexpected end of data");
    got += static_cast<zip_uint64_t>(n);
  }
  // A complete read checks the member's CRC-32: one more read reports a mismatch.
  char extra;
  KERASCPP_CHECK_IO(zip_fread(f.get(), &extra, 1) >= 0, "'{}': {} is corrupted ({})", path, name,
                    zip_file_strerror(f.get()));
  return bytes;
}

}  // namespace

void write_keras_archive(const std::string& path, const KerasArchive& archive) {
  write_atomically(path, [&](const std::string& tmp) {
    int code = 0;
    ZipHandle z(zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
    KERASCPP_CHECK_IO(z, "cannot write '{}': {}", path, open_error(code));
    add_member(z.get(), kMetadata, archive.metadata_json.data(), archive.metadata_json.size(), true, path);
    add_member(z.get(), kConfig, archive.config_json.data(), archive.config_json.size(), true, path);
    add_member(z.get(), kWeights, archive.weights_h5.data(), archive.weights_h5.size(), false, path);
    KERASCPP_CHECK_IO(zip_close(z.get()) == 0, "cannot write '{}': {}", path, zip_strerror(z.get()));
    z.release();  // closed: zip_close freed it
  });
}

KerasArchive read_keras_archive(const std::string& path) {
  int code = 0;
  ZipHandle z(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
  if (!z) {
    KERASCPP_CHECK_IO(code != ZIP_ER_NOENT && code != ZIP_ER_OPEN, "cannot open '{}': {} (check the path)", path,
                      open_error(code));
    throw IOError(fmt::format("'{}' is not a readable .keras archive: {} (truncated, corrupted or not a zip file)",
                              path, open_error(code)));
  }
  KerasArchive a;
  std::vector<char> config = read_member(z.get(), kConfig, path, true);
  a.config_json.assign(config.begin(), config.end());
  if (zip_name_locate(z.get(), kMetadata, 0) >= 0) {
    std::vector<char> meta = read_member(z.get(), kMetadata, path, true);
    a.metadata_json.assign(meta.begin(), meta.end());
  }
  a.weights_h5 = read_member(z.get(), kWeights, path, false);
  return a;
}

}  // namespace kerascpp::io
