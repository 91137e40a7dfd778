// Writing outputs so that a failed run never destroys or half-writes a file (docs/DESIGN.md,
// "Output files"). A command declares every output path right after parsing, before any
// computation (Outputs::declare checks the directory and the kind of file there), writes each
// output into a temporary in its target's directory, and commits the set only when everything,
// stdout included, was written: then the temporaries are renamed over their targets. A run that
// fails, or a signal (common/cleanup.hpp), removes only temporaries; no earlier file is removed.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace parvis {

class Outputs {
 public:
  // check_stdout: commit() also fails (exit 3) when stdout could not be written or flushed.
  explicit Outputs(bool check_stdout = true);
  ~Outputs();  // not committed: every temporary is removed, created directories too
  Outputs(const Outputs&) = delete;
  Outputs& operator=(const Outputs&) = delete;

  // Declares an output before any work: "-" is stdout. A symlink is followed to its final
  // target (the link stays a link). An existing character or block device or FIFO is written
  // in place at commit; a directory or socket is refused, and so is a target whose directory
  // is missing or not writable: bad input (exit 2), one line. A path given twice is a usage error.
  Status declare(const std::string& path);
  // Creates directory `dir` now (one level) when missing; removed again if the run fails
  // while it is still empty. A missing parent is bad input (exit 2).
  Status make_dir(const std::string& dir);

  // The whole content of a declared output.
  Status put(const std::string& path, const void* data, size_t n);
  // A declared output written as it goes: a descriptor of its temporary (a device or FIFO:
  // the target itself, opened now). Owned by this set; the caller only writes.
  Status stream(const std::string& path, int* fd);
  // A declared output that a child process writes by name: a fresh empty temporary beside the
  // target with the target's extension (ffmpeg picks the container by it).
  Status child_path(const std::string& path, std::string* name);

  // Renames every output into place, once stdout (when checked) was flushed without error.
  Status commit();

 private:
  struct Item;
  Item* find(const std::string& path);
  Status create_temp(Item* it);
  Status name_temp(Item* it, const std::string& extension);
  std::vector<std::unique_ptr<Item>> items_;
  std::vector<std::string> made_dirs_;
  bool check_stdout_;
  bool committed_ = false;
};

// One file written at once through the same rules (a temporary, then renamed; symlinks
// followed, devices written in place, mode kept). "-" means stdout.
Status write_file_atomic(const std::string& path, const void* data, size_t n);

// Writes all `n` bytes to `fd` (retrying short writes); a failure names `path` (exit 3).
Status write_fd(int fd, const void* data, size_t n, const std::string& path);

// Reads a whole file; "-" means stdin. A file (or stream) longer than `max_bytes` is refused
// after reading max_bytes + 1 bytes, so a device like /dev/zero cannot make it read forever.
Status read_file(const std::string& path, std::vector<uint8_t>* out, size_t max_bytes);

// Lower-cased extension of `path` without the dot ("" if none).
std::string file_extension(const std::string& path);

}  // namespace parvis
