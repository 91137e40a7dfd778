// Writing outputs so that a failure never leaves a partial file: everything is written
// to a temporary name in the same directory and renamed into place only when complete.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace parvis {

// Writes `n` bytes to `path` atomically (temp file + rename). "-" means stdout.
Status write_file_atomic(const std::string& path, const void* data, size_t n);

// Reads a whole file; "-" means stdin. A file (or stream) longer than `max_bytes` is refused
// after reading max_bytes + 1 bytes, so a device like /dev/zero cannot make it read forever.
Status read_file(const std::string& path, std::vector<uint8_t>* out, size_t max_bytes);

// Lower-cased extension of `path` without the dot ("" if none).
std::string file_extension(const std::string& path);

}  // namespace parvis
