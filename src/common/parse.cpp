#include "common/parse.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace parvis {

Status parse_int(const std::string& s, int64_t lo, int64_t hi, int64_t* out) {
  if (s.empty()) return Status::usage("empty number");
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return Status::usage("'" + s + "' is not an integer");
  if (v < lo || v > hi)
    return Status::usage("'" + s + "' is out of range [" + std::to_string(lo) + ", " +
                         std::to_string(hi) + "]");
  *out = v;
  return Status::Ok();
}

Status parse_size(const std::string& s, int* w, int* h) {
  const size_t x = s.find_first_of("xX");
  if (x == std::string::npos) return Status::usage("size '" + s + "' is not WxH");
  int64_t a, b;
  Status sa = parse_int(s.substr(0, x), 1, INT32_MAX, &a);
  Status sb = parse_int(s.substr(x + 1), 1, INT32_MAX, &b);
  if (!sa.ok() || !sb.ok()) return Status::usage("size '" + s + "' is not WxH with positive sides");
  *w = int(a);
  *h = int(b);
  return Status::Ok();
}

}  // namespace parvis
