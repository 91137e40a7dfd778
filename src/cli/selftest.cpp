#include "cli/cli.hpp"
#include "cli/selftest.hpp"

#include <cstdio>
#include <vector>

#include "common/gray.hpp"
#include "common/device.hpp"

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

void selftest_gray(SelftestReport& r) {
  // OpenCV 4.6 cvtColor(BGR2GRAY) on single pixels; the last three are where the old 14-bit
  // weights gave one more.
  struct Case {
    uint8_t r, g, b, want;
  };
  const Case cases[] = {{255, 0, 0, 76},   {0, 255, 0, 150},    {0, 0, 255, 29},  {255, 255, 255, 255},
                        {1, 0, 0, 0},      {128, 64, 32, 79},   {200, 120, 40, 135},
                        {0, 0, 250, 28},   {0, 1, 201, 23},     {0, 2, 152, 18}};
  bool all = true;
  std::string detail;
  for (const Case& c : cases) {
    const int got = gray_of(c.r, c.g, c.b);
    if (got != c.want) {
      all = false;
      detail += "rgb(" + std::to_string(c.r) + "," + std::to_string(c.g) + "," + std::to_string(c.b) +
                ") -> " + std::to_string(got) + ", OpenCV " + std::to_string(c.want) + "; ";
    }
  }
  r.check("gray: OpenCV's grey of 10 colours", all, detail);

  // FNV-1a 64 of OpenCV 4.6's grey of all 2^24 colours in the order of gray_all_colours
  // (cv2.cvtColor on a 4096x4096 image holding each colour once).
  constexpr uint64_t kOpenCvAllColoursFnv = 0x682177b55e012eddull;
  std::vector<uint8_t> grey;
  const Status s = gray_all_colours(&grey);
  if (!s.ok()) {
    r.check("gray: all 2^24 colours", false, s.message);
    return;
  }
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t v : grey) h = (h ^ v) * 0x100000001b3ull;
  char text[64];
  std::snprintf(text, sizeof text, "hash %016llx, OpenCV's %016llx", (unsigned long long)h,
                (unsigned long long)kOpenCvAllColoursFnv);
  r.check("gray: all 2^24 colours equal OpenCV's", grey.size() == (size_t(1) << 24) && h == kOpenCvAllColoursFnv,
          text);
}

}  // namespace parvis
