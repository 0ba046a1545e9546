// Atomic file replacement shared by every writer (weights, checkpoints, logs' sidecar files):
// a reader or a crash never sees a half-written file, only the old one or the new one.
#pragma once
#include <functional>
#include <string>

namespace kerascpp::io {

// Runs write(tmp_path) to a temporary file in the target's directory, fsyncs it, renames it onto
// `path` and fsyncs the directory. On any failure the tmp file is removed, `path` is untouched and a
// kerascpp::Error names the path (missing directory, unwritable directory, disk full) and the fix.
// The tmp file already exists (empty) when write() runs; write() may truncate or replace it.
// An existing target keeps its permission bits; a new one gets 0666 less the umask.
void write_atomically(const std::string& path, const std::function<void(const std::string& tmp_path)>& write);

}  // namespace kerascpp::io
