// `./main selftest`: the seeds' worked examples and small hand-checked cases, run through
// the linked version's entry points. Each operation adds its cases in src/<op>/selftest.cpp.
#pragma once
#include <string>

#include "common/status.hpp"

namespace parvis {

class SelftestReport {
 public:
  // Records one check; prints "ok|FAIL <name>" (with `detail` on failure).
  void check(const std::string& name, bool passed, const std::string& detail = "");
  // An operation this version lacks: its checks are skipped, not failed.
  void skip(const std::string& name, const std::string& why);
  // Convenience: a Status that is "not implemented" becomes a skip; other errors fail.
  // Returns true when `s` is ok and the caller should go on checking.
  bool expect_ok(const std::string& name, const Status& s);
  int passed = 0, failed = 0, skipped = 0;
};

// The grey conversion (common/gray.hpp): hand-checked colours and all 2^24 colours, computed
// where this version computes (gray_all_colours), against OpenCV's grey pinned as a hash.
void selftest_gray(SelftestReport& r);
void selftest_match(SelftestReport& r);
void selftest_color(SelftestReport& r);
void selftest_filter(SelftestReport& r);
void selftest_blur(SelftestReport& r);
void selftest_integral(SelftestReport& r);

}  // namespace parvis
