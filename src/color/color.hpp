// HSV colour filter (seed 000): counts the pixels of a rectangle that fall in an HSV range,
// to tell a full (blue soap) capsule from an empty one.
#pragma once
#include <cstdint>
#include <string>

#include "common/timing.hpp"
#include "common/image.hpp"
#include "common/status.hpp"

namespace parvis::color {

// OpenCV's 8-bit HSV convention: H in 0..179, S and V in 0..255. Inclusive bounds.
struct HsvRange {
  int h_min = 100, h_max = 130;
  int s_min = 80, s_max = 255;
  int v_min = 50, v_max = 255;
};

struct Hsv {
  uint8_t h, s, v;
};

// The reference RGB -> HSV conversion with OpenCV's integer formulas (shared by all
// versions' host code and mirrored exactly by the device code).
Hsv rgb_to_hsv(uint8_t r, uint8_t g, uint8_t b);
bool in_range(Hsv p, const HsvRange& range);

// OpenCV's fixed-point reciprocals behind rgb_to_hsv (its sdiv_table and hdiv_table180, with
// hsv_shift = 12), for code that must mirror the conversion exactly (e.g. device code):
//   hsv_sdiv(v)       = round(255 * 2^12 / v),         0 for v = 0
//   hsv_hdiv180(diff) = round(180 * 2^12 / (6 * diff)), 0 for diff = 0
constexpr int kHsvShift = 12;
int hsv_sdiv(int v);
int hsv_hdiv180(int diff);

// 0 <= min <= max on every channel, H <= 179, S and V <= 255. Usage error (exit 1).
Status check_range(const HsvRange& range);
// `rgb` has 3 channels; `rect` is not empty and lies inside it. Bad input (exit 2).
Status check_count_input(const Image& rgb, Rect rect);
// The ranges --color knows by name ("blue" = the default HsvRange); others: usage error.
Status named_range(const std::string& name, HsvRange* out);

// What the colour check asks (`./main match` and `./main video`: --color / --hsv-min /
// --hsv-max / --full-ratio): count the matched rectangle's pixels in `range`, full when their
// share is at least full_ratio.
struct ColorCheck {
  bool enabled = false;
  std::string label;  // "blue", or "in-range" for a range given only by numbers
  HsvRange range;
  double full_ratio = 0.2;
};
// The options as given (empty strings: not given) -> *out; enabled when any of --color,
// --hsv-min, --hsv-max is. Usage errors (exit 1): unknown name, a bad H,S,V triple, a bad
// range, a ratio outside [0, 1].
Status parse_color_check(const std::string& name, const std::string& hsv_min,
                         const std::string& hsv_max, double full_ratio, ColorCheck* out);

struct CountResult {
  uint64_t matching = 0;  // pixels inside the range
  uint64_t total = 0;     // pixels in the rectangle
  Timings timings;
};

// Fills *out for a count of `matching` pixels in `rect`, timed from t0 (now_ms()): the CPU
// versions' common ending.
void finish_count(Rect rect, uint64_t matching, double t0, CountResult* out);

// `rgb` has 3 channels; `rect` lies inside it. Defined by each version.
Status count_in_rect(const Image& rgb, Rect rect, const HsvRange& range, CountResult* out);

}  // namespace parvis::color
