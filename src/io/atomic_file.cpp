#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>

#include "check.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::io {
namespace {

// What went wrong at the OS level and what the user can do about it. `dir_exists`: the directory
// was found by stat, so an ENOENT comes from a file system that refuses new files (/proc), not
// from a missing directory.
std::string explain_errno(int err, const std::string& dir, bool dir_exists = true) {
  switch (err) {
    case ENOENT:
      if (dir_exists)
        return fmt::format(
            "directory '{}' exists but refuses new files ({}: a special file system such as /proc, or it "
            "was removed meanwhile); choose another path",
            dir, std::strerror(err));
      return fmt::format("directory '{}' does not exist; create it first (mkdir -p) or choose another path", dir);
    case ENOTDIR:
      return fmt::format("a component of '{}' is not a directory ({}); choose another path", dir, std::strerror(err));
    case EACCES:
    case EPERM:
      return fmt::format("directory '{}' is not writable ({}); fix its permissions or choose another path", dir,
                         std::strerror(err));
    case EROFS:
      return fmt::format("directory '{}' is on a read-only file system; choose another path", dir);
    case ENOSPC:
    case EDQUOT:
      return fmt::format("no space left on the device holding '{}'; free some space or choose another path", dir);
    default:
      return fmt::format("{} (in directory '{}')", std::strerror(err), dir);
  }
}

[[noreturn]] void fail(const std::string& path, const std::string& why, bool target_exists = false) {
  // Saying the old file survived matters to someone whose checkpoint just failed to save.
  throw IOError(fmt::format("cannot write '{}': {}.{}", path, why,
                            target_exists ? " The existing file was left unchanged." : ""));
}

// The tmp name is hidden (leading dot) so that globbing readers such as TensorBoard's directory
// watcher or a checkpoint finder never pick up a half-written file.
std::string tmp_name_for(const std::filesystem::path& dir, const std::string& base) {
  static std::atomic<unsigned long> counter{0};
  return (dir / fmt::format(".{}.tmp.{}.{}", base, static_cast<long>(::getpid()), counter++)).string();
}

}  // namespace

void write_atomically(const std::string& path, const std::function<void(const std::string& tmp_path)>& write) {
  namespace fs = std::filesystem;
  KERASCPP_CHECK_VALUE(!path.empty(), "cannot write a file with an empty path; pass the file name to write");
  const fs::path target(path);
  if (!target.has_filename()) fail(path, "the path ends in a directory separator; give a file name");
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  const std::string dir_str = dir.string();

  struct stat st{};
  if (::stat(dir_str.c_str(), &st) != 0) fail(path, explain_errno(errno, dir_str, /*dir_exists=*/false));
  if (!S_ISDIR(st.st_mode)) fail(path, fmt::format("'{}' is not a directory; choose another path", dir_str));
  // Keep the permission bits of the file being replaced; rename would otherwise silently
  // turn a 0644 checkpoint into whatever the tmp file got.
  bool keep_mode = false;
  mode_t mode = 0;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail(path, "it is a directory; give a file name");
    keep_mode = S_ISREG(st.st_mode);
    mode = st.st_mode & 07777;
  }
  const bool existed = keep_mode;

  // O_EXCL makes the tmp name ours alone even with several writers in one directory.
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = tmp_name_for(dir, target.filename().string());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) fail(path, explain_errno(errno, dir_str), existed);
  }
  if (fd < 0) fail(path, fmt::format("could not find a free temporary file name in '{}'", dir_str), existed);
  if (keep_mode) (void)::fchmod(fd, mode);  // best effort: the content matters more than the bits
  ::close(fd);

  auto discard_tmp = [&] { ::unlink(tmp.c_str()); };
  try {
    write(tmp);
  } catch (const std::exception& e) {
    discard_tmp();
    fail(path, e.what(), existed);
  } catch (...) {
    discard_tmp();
    fail(path, "the writer threw an unknown exception", existed);
  }

  // fsync before rename: otherwise a crash can leave the new name pointing at empty blocks.
  fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    discard_tmp();
    fail(path, fmt::format("the temporary file '{}' vanished while writing: {}", tmp, std::strerror(err)), existed);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    discard_tmp();
    fail(path, explain_errno(err, dir_str), existed);
  }
  if (::close(fd) != 0) {
    int err = errno;
    discard_tmp();
    fail(path, explain_errno(err, dir_str), existed);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    discard_tmp();
    fail(path, explain_errno(err, dir_str), existed);
  }

  // Persist the rename itself. The new file is already in place at this point, so a failure
  // here (some file systems refuse fsync on directories) is not reported as a failed write.
  int dir_fd = ::open(dir_str.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace kerascpp::io
