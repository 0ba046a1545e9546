// A crash guard for reading untrusted .weights.h5 files.
//
// Debian 12's libhdf5 1.10.8 segfaults on some corrupt files (fuzz/known_hdf5_crashes/: a NULL
// memcpy in H5F__accum_read, HDFGroup/hdf5#584), and nothing checkable before libhdf5 parses a
// file tells those apart from good ones. So the file is first parsed and read in a forked child
// process: if libhdf5 crashes or hangs there, the caller gets an IOError instead of losing the
// process (a notebook kernel, a training job).
#pragma once
#include <string>

#include "io/h5_read.hpp"

namespace kerascpp::io::h5 {

// Runs probe_hdf5_file(path) in a child process. Throws IOError when the child dies by a signal
// or a sanitizer report, or runs past a time limit that grows with the file size; returns
// otherwise (also when the file has an error the in-process read will report, or when fork is
// unavailable). Call with hdf5_mutex() held, so that no thread of ours is inside libhdf5 while
// the process forks. KERASCPP_H5_PROBE=0 turns the probe off.
void probe_in_child_process(const std::string& path);
// The same for a file or an in-memory image (probe_hdf5(source) in the child).
void probe_in_child_process(const Source& source);

}  // namespace kerascpp::io::h5
