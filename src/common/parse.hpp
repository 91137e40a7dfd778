// Numbers and sizes in text: the command line's options and the files' headers (Y4M) alike.
#pragma once
#include <cstdint>
#include <string>

#include "common/status.hpp"

namespace parvis {

// Parses "WxH" (e.g. "1920x1080") into positive ints.
Status parse_size(const std::string& s, int* w, int* h);
// Parses a decimal integer within [lo, hi].
Status parse_int(const std::string& s, int64_t lo, int64_t hi, int64_t* out);

}  // namespace parvis
