// Colour filter selftest: RGB -> HSV on colours worked out by hand from OpenCV's integer
// formula (color.cpp), the range bounds, a small count, and every one of the 2^24 colours
// against numbers taken from OpenCV 4.6's cvtColor(RGB2HSV) + inRange.
#include <cstdio>
#include <string>

#include "cli/cli.hpp"
#include "color/color.hpp"
#include "cli/selftest.hpp"

namespace parvis {

namespace {

using color::Hsv;
using color::HsvRange;

struct HsvCase {
  uint8_t r, g, b;
  Hsv want;
  const char* why;
};

// Each worked out with V = max, diff = V - min, S = (diff * sdiv(V) + 2048) >> 12,
// H = (numerator * hdiv180(diff) + 2048) >> 12 (+180 when negative); sdiv(255) = 4096,
// hdiv180(255) = round(122880 / 255) = 482.
const HsvCase kHsvCases[] = {
    {0, 0, 255, {120, 255, 255}, "pure blue: (0 - 0 + 4*255) * 482 -> 120.53 -> 120"},
    {255, 0, 0, {0, 255, 255}, "pure red: numerator G - B = 0"},
    {0, 255, 0, {60, 255, 255}, "pure green: (0 - 0 + 2*255) * 482 -> 60.51 -> 60"},
    {255, 255, 0, {30, 255, 255}, "yellow: R is max first, (255 - 0) * 482 -> 30.5 -> 30"},
    {0, 255, 255, {90, 255, 255}, "cyan: G is max before B, (255 - 0 + 510) * 482 -> 90.5 -> 90"},
    {255, 0, 255, {150, 255, 255}, "magenta: (0 - 255) * 482 -> -29.5 floors to -30, +180"},
    {128, 128, 128, {0, 0, 128}, "grey: diff 0 gives H = S = 0"},
    {0, 0, 0, {0, 0, 0}, "black"},
    {255, 255, 255, {0, 0, 255}, "white"},
    {30, 60, 200, {115, 217, 200}, "diff 170: H (-30 + 680) * 723 -> 115.2; S 170 * 5222 -> 217.2"},
    {100, 150, 50, {45, 170, 150}, "diff 100: H (50 - 100 + 200) * 1229 -> 45.5; S 100 * 6963 -> 170.5"},
    {10, 20, 31, {106, 173, 31}, "diff 21: H (-10 + 84) * 5851 -> 106.2; S 21 * 33693 -> 173.2"},
    {40, 80, 160, {110, 191, 160}, "diff 120: H 440 * 1024 -> 110.5; S 120 * 6528 -> 191.75"},
    {255, 0, 1, {0, 255, 255}, "hue just below 0: -1 * 482 + 2048 >> 12 = 0 (not 179)"},
    {255, 0, 10, {179, 255, 255}, "hue below 0: (-10 * 482 + 2048) >> 12 = -1 -> 179"},
    {1, 0, 0, {0, 255, 1}, "darkest red: S = (1 * 1044480 + 2048) >> 12 = 255"},
};

std::string hsv_text(Hsv p) {
  return "(" + std::to_string(p.h) + "," + std::to_string(p.s) + "," + std::to_string(p.v) + ")";
}

void conversions(SelftestReport& r) {
  for (const HsvCase& c : kHsvCases) {
    const Hsv got = color::rgb_to_hsv(c.r, c.g, c.b);
    const bool ok = got.h == c.want.h && got.s == c.want.s && got.v == c.want.v;
    r.check("color rgb(" + std::to_string(c.r) + "," + std::to_string(c.g) + "," +
                std::to_string(c.b) + ") -> hsv" + hsv_text(c.want),
            ok, "got " + hsv_text(got) + "; by hand: " + c.why);
  }
  // Every colour: FNV-1a 64 of the H, S, V bytes in R, G, B order (R slowest), equal to the
  // same hash of OpenCV 4.6's cvtColor(COLOR_RGB2HSV) output over the 2^24 colours.
  uint64_t hash = 0xcbf29ce484222325ull;
  auto mix = [&hash](uint8_t byte) { hash = (hash ^ byte) * 0x100000001b3ull; };
  for (int red = 0; red < 256; ++red)
    for (int green = 0; green < 256; ++green)
      for (int blue = 0; blue < 256; ++blue) {
        const Hsv p = color::rgb_to_hsv(uint8_t(red), uint8_t(green), uint8_t(blue));
        mix(p.h), mix(p.s), mix(p.v);
      }
  char got[32];
  std::snprintf(got, sizeof got, "%016llx", static_cast<unsigned long long>(hash));
  r.check("color rgb_to_hsv on all 2^24 colours = OpenCV 4.6 (hash)", hash == 0xd22f261eba9e21a0ull,
          std::string("got ") + got);
}

void range_bounds(SelftestReport& r) {
  const HsvRange blue;  // H 100..130, S 80..255, V 50..255
  struct Bound {
    uint8_t r, g, b;
    bool inside;
    const char* why;
  };
  const Bound bounds[] = {
      {0, 174, 255, true, "H = 100, the lower bound"}, {0, 175, 255, false, "H = 99"},
      {88, 0, 255, true, "H = 130, the upper bound"},  {89, 0, 255, false, "H = 131"},
      {175, 175, 255, true, "S = 80"},                 {176, 176, 255, false, "S = 79"},
      {0, 0, 50, true, "V = 50"},                      {0, 0, 49, false, "V = 49"},
  };
  for (const Bound& b : bounds) {
    const Hsv p = color::rgb_to_hsv(b.r, b.g, b.b);
    r.check(std::string("color blue range: ") + b.why + (b.inside ? " is in" : " is out"),
            color::in_range(p, blue) == b.inside, "hsv" + hsv_text(p));
  }
  HsvRange bad;
  bad.h_max = 180;
  r.check("color range: H max 180 -> exit 1", color::check_range(bad).code == kExitUsage);
  bad = HsvRange{};
  bad.s_min = 200, bad.s_max = 100;
  r.check("color range: min > max -> exit 1", color::check_range(bad).code == kExitUsage);
  HsvRange named;
  r.check("color named range: blue is the default",
          color::named_range("blue", &named).ok() && named.h_min == 100 && named.h_max == 130 &&
              named.s_min == 80 && named.v_min == 50);
  r.check("color named range: unknown -> exit 1", color::named_range("mauve", &named).code == kExitUsage);
}

void set_rgb(Image* img, int x, int y, uint8_t r, uint8_t g, uint8_t b) {
  uint8_t* p = img->at(x, y);
  p[0] = r, p[1] = g, p[2] = b;
}

void counts(SelftestReport& r) {
  // 4x3: blue at (1,0), (2,1), (3,2), (0,0); red at (2,0); the rest grey. The rectangle
  // x 1..3, y 0..1 (3x2) holds two of the blues.
  Image img;
  image_alloc(4, 3, 3, &img);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x) set_rgb(&img, x, y, 90, 90, 90);
  set_rgb(&img, 1, 0, 0, 0, 255);
  set_rgb(&img, 2, 1, 30, 60, 200);
  set_rgb(&img, 3, 2, 0, 0, 255);
  set_rgb(&img, 0, 0, 0, 0, 255);
  set_rgb(&img, 2, 0, 255, 0, 0);
  color::CountResult res;
  if (!r.expect_ok("color count 4x3", color::count_in_rect(img, Rect{1, 0, 3, 2}, HsvRange{}, &res))) return;
  r.check("color count 4x3: 2 of 6 blue", res.matching == 2 && res.total == 6,
          std::to_string(res.matching) + "/" + std::to_string(res.total));

  Status s = color::count_in_rect(img, Rect{2, 1, 3, 2}, HsvRange{}, &res);
  r.check("color count: rectangle outside the image -> exit 2", s.code == kExitBadInput, s.message);
  Image gray;
  image_alloc(4, 3, 1, &gray);
  s = color::count_in_rect(gray, Rect{0, 0, 1, 1}, HsvRange{}, &res);
  r.check("color count: grey image -> exit 2", s.code == kExitBadInput, s.message);

  // All 2^24 colours in a 4096x4096 image, pixel (x, y) = (R, G, B) with
  // R = y / 16, G = (y % 16) * 16 + x / 256, B = x % 256; counts from OpenCV 4.6's inRange.
  Image all;
  if (!image_alloc(4096, 4096, 3, &all).ok()) {
    r.check("color count all colours: allocation", false);
    return;
  }
  for (int y = 0; y < 4096; ++y)
    for (int x = 0; x < 4096; ++x) set_rgb(&all, x, y, uint8_t(y / 16), uint8_t((y % 16) * 16 + x / 256), uint8_t(x % 256));
  struct AllCase {
    Rect rect;
    HsvRange range;
    uint64_t want;
    const char* name;
  };
  const AllCase cases[] = {
      {{0, 0, 4096, 4096}, HsvRange{}, 2590000, "blue"},
      {{0, 0, 4096, 4096}, HsvRange{0, 10, 0, 255, 0, 255}, 1026243, "H 0..10 (with the greys)"},
      {{0, 0, 4096, 4096}, HsvRange{170, 179, 200, 255, 100, 200}, 155112, "H 170..179, S 200.., V 100..200"},
      {{2000, 1000, 300, 100}, HsvRange{}, 10947, "blue in the rectangle 300x100 at (2000,1000)"},
  };
  for (const AllCase& c : cases) {
    const std::string name = std::string("color count all 2^24 colours: ") + c.name;
    if (!r.expect_ok(name, color::count_in_rect(all, c.rect, c.range, &res))) return;
    r.check(name + " = " + std::to_string(c.want), res.matching == c.want && res.total == uint64_t(c.rect.w) * c.rect.h,
            "got " + std::to_string(res.matching) + "/" + std::to_string(res.total));
  }

  // Ranges and rectangles from a fixed generator (odd widths, every corner of the cube): this
  // version's count against the reference conversion, pixel by pixel, computed here.
  uint32_t state = 12345;
  auto next = [&state](int n) { state = state * 1664525u + 1013904223u; return int((state >> 8) % uint32_t(n)); };
  int agreed = 0, tried = 0;
  std::string first_miss;
  for (int i = 0; i < 24; ++i) {
    HsvRange range;
    range.h_min = next(180), range.h_max = range.h_min + next(180 - range.h_min);
    range.s_min = next(256), range.s_max = range.s_min + next(256 - range.s_min);
    range.v_min = next(256), range.v_max = range.v_min + next(256 - range.v_min);
    Rect rect;
    rect.w = 1 + next(700), rect.h = 1 + next(300);
    rect.x = next(4096 - rect.w + 1), rect.y = next(4096 - rect.h + 1);
    uint64_t want = 0;
    for (int y = rect.y; y < rect.y + rect.h; ++y)
      for (int x = rect.x; x < rect.x + rect.w; ++x) {
        const uint8_t* p = all.at(x, y);
        want += color::in_range(color::rgb_to_hsv(p[0], p[1], p[2]), range) ? 1 : 0;
      }
    ++tried;
    if (color::count_in_rect(all, rect, range, &res).ok() && res.matching == want) ++agreed;
    else if (first_miss.empty()) first_miss = "rect " + std::to_string(rect.w) + "x" + std::to_string(rect.h) + ": got " +
                                              std::to_string(res.matching) + ", reference " + std::to_string(want);
  }
  r.check("color count = reference loop on " + std::to_string(tried) + " random ranges and rectangles",
          agreed == tried, first_miss);
}

}  // namespace

void selftest_color(SelftestReport& r) {
  conversions(r);
  range_bounds(r);
  counts(r);
}

}  // namespace parvis
