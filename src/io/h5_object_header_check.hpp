// Checks an HDF5 object header from the file's bytes, before libhdf5 loads it.
//
// libhdf5 1.10.8 leaks memory when it cannot load an object header's continuation chunk:
// H5O_protect returns without freeing the continuation messages it decoded from the chunks
// before. One corrupt continuation length (a chunk of 2 GiB at the end of a 28 KB file, found by
// fuzz_weights_h5) or one continuation chunk failing its checksum leaves a block on HDF5's free
// lists for good, and at exit the library cannot shut down ("HDF5: infinite loop closing
// library"). H5Oopen, H5Oget_info and every other call that reads the header take that path, so
// the reader checks the header here first. This file holds the on-disk format knowledge for that:
// where the superblock keeps the end-of-file and root group addresses, how an object header's
// chunks chain, and the checksum of version 2 chunks.
#pragma once
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kerascpp::io::h5 {

// Where a file's HDF5 data lies and how wide the addresses and lengths in its object headers are.
struct FileGeometry {
  std::uint64_t file_bytes = 0;  // the size on disk (or of the in-memory image), not HDF5's idea of it
  std::uint64_t base = 0;        // where HDF5's address 0 lies in the file: after the userblock
  std::size_t sizeof_addr = 8;
  std::size_t sizeof_size = 8;
  std::uint64_t end = 0;       // where HDF5 stops reading: the file's end or the superblock's, if sooner
  haddr_t root = HADDR_UNDEF;  // the root group's object header
};

// The `n` bytes at file offset `at`, which the caller has checked lie inside the file; throws
// when they cannot be read.
using ReadBytes = std::function<std::vector<unsigned char>(std::uint64_t at, std::size_t n)>;

// The geometry of a file whose superblock libhdf5 has read already: `userblock`, `sizeof_addr`
// and `sizeof_size` as libhdf5 reports them (the sizes between 1 and 8), the end-of-file and root
// group addresses read here from the superblock's bytes. Where the superblock is too short to
// hold them, `end` is the file's end and `root` is HADDR_UNDEF.
FileGeometry read_superblock_geometry(std::uint64_t file_bytes, std::uint64_t userblock, std::size_t sizeof_addr,
                                      std::size_t sizeof_size, const ReadBytes& read);

// What is wrong with the object header at HDF5 address `addr` (say "lies at 12, outside the
// file"), or nothing. Chunk 0 and every continuation chunk it chains to must lie inside the file,
// a version 2 header's chunks must match their checksums, and no message may run past the end of
// its chunk. What does not look like an object header at all is left to libhdf5 to refuse.
std::optional<std::string> object_header_problem(const FileGeometry& file, haddr_t addr, const ReadBytes& read);

}  // namespace kerascpp::io::h5
