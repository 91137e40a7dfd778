#include "common/selftest.hpp"

#include <cstdio>

namespace parvis {

void SelftestReport::check(const std::string& name, bool ok, const std::string& detail) {
  if (ok) {
    ++passed;
    std::printf("ok    %s\n", name.c_str());
  } else {
    ++failed;
    std::printf("FAIL  %s%s%s\n", name.c_str(), detail.empty() ? "" : ": ", detail.c_str());
  }
}

void SelftestReport::skip(const std::string& name, const std::string& why) {
  ++skipped;
  std::printf("skip  %s (%s)\n", name.c_str(), why.c_str());
}

bool SelftestReport::expect_ok(const std::string& name, const Status& s) {
  if (s.ok()) return true;
  if (s.message.find(" is not implemented in ") != std::string::npos) skip(name, s.message);
  else check(name, false, s.message);
  return false;
}

}  // namespace parvis
