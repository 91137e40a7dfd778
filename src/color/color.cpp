// HSV colour filter, the part shared by every version: OpenCV's 8-bit RGB -> HSV conversion,
// the range test, the checks and the options of the colour check. No version-specific code here.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/parse.hpp"
#include "color/color.hpp"

namespace parvis::color {

// round(a / b) for positive a, b. OpenCV rounds its tables from doubles with cvRound (half to
// even); the two agree because none of the quotients below is ever exactly k + 1/2 (255 * 2^13
// and 180 * 2^13 / 6 = 15 * 2^14 would need a divisor with 2^13 in it).
static int round_div(int a, int b) { return (2 * a + b) / (2 * b); }

int hsv_sdiv(int v) { return v == 0 ? 0 : round_div(255 << kHsvShift, v); }
int hsv_hdiv180(int diff) { return diff == 0 ? 0 : round_div((180 << kHsvShift) / 6, diff); }

// OpenCV's RGB2HSV_b with hrange = 180 (imgproc/color_hsv), step by step:
//   V    = max(R, G, B),  diff = V - min(R, G, B)
//   S    = (diff * sdiv(V) + 2^11) >> 12                   ~ round(255 * diff / V)
//   the hue numerator, in units where 60 degrees = diff, chosen by which channel is the
//   maximum (R first, then G, as OpenCV tests them):
//     V == R: G - B              (-diff ..  diff, i.e. -30 .. 30 after scaling)
//     V == G: B - R + 2 diff     ( diff .. 3 diff,        30 .. 90)
//     else  : R - G + 4 diff     (3 diff .. 5 diff,       90 .. 150)
//   H    = (numerator * hdiv180(diff) + 2^11) >> 12        ~ round(numerator * 30 / diff)
//   H   += 180 when negative.
// The shift floors (an arithmetic shift, as OpenCV relies on), so -0.5 rounds to 0 and
// anything below to -1 -> 179: e.g. (255, 0, 1) gives H = 0, (255, 0, 10) gives H = 179.
// Grey (diff = 0) gives H = S = 0.
Hsv rgb_to_hsv(uint8_t red, uint8_t green, uint8_t blue) {
  const int r = red, g = green, b = blue;
  const int v = std::max({r, g, b});
  const int diff = v - std::min({r, g, b});
  const int half = 1 << (kHsvShift - 1);

  const int s = (diff * hsv_sdiv(v) + half) >> kHsvShift;

  int h;
  if (v == r) h = g - b;
  else if (v == g) h = b - r + 2 * diff;
  else h = r - g + 4 * diff;
  h = (h * hsv_hdiv180(diff) + half) >> kHsvShift;
  if (h < 0) h += 180;

  return Hsv{uint8_t(h), uint8_t(s), uint8_t(v)};
}

bool in_range(Hsv p, const HsvRange& range) {
  return p.h >= range.h_min && p.h <= range.h_max &&  //
         p.s >= range.s_min && p.s <= range.s_max &&  //
         p.v >= range.v_min && p.v <= range.v_max;
}

static Status check_channel(const char* name, int lo, int hi, int limit) {
  if (lo < 0 || hi > limit || lo > hi)
    return Status::usage(std::string("HSV range: ") + name + " " + std::to_string(lo) + ".." +
                         std::to_string(hi) + " must satisfy 0 <= min <= max <= " +
                         std::to_string(limit));
  return Status::Ok();
}

Status check_range(const HsvRange& range) {
  PARVIS_TRY(check_channel("H", range.h_min, range.h_max, 179));
  PARVIS_TRY(check_channel("S", range.s_min, range.s_max, 255));
  PARVIS_TRY(check_channel("V", range.v_min, range.v_max, 255));
  return Status::Ok();
}

Status check_count_input(const Image& rgb, Rect rect) {
  if (rgb.channels != 3)
    return Status::bad_input("the colour filter needs an RGB image (3 channels), got " +
                             std::to_string(rgb.channels));
  if (rect.w <= 0 || rect.h <= 0 || rect.x < 0 || rect.y < 0 ||
      int64_t(rect.x) + rect.w > rgb.width || int64_t(rect.y) + rect.h > rgb.height)
    return Status::bad_input("rectangle " + std::to_string(rect.w) + "x" +
                             std::to_string(rect.h) + " at (" + std::to_string(rect.x) + "," +
                             std::to_string(rect.y) + ") is empty or not inside the " +
                             std::to_string(rgb.width) + "x" + std::to_string(rgb.height) +
                             " image");
  return Status::Ok();
}

void finish_count(Rect rect, uint64_t matching, double t0, CountResult* out) {
  out->matching = matching;
  out->total = uint64_t(rect.w) * uint64_t(rect.h);
  out->timings = Timings{};
  out->timings.compute_ms = now_ms() - t0;
}

Status named_range(const std::string& name, HsvRange* out) {
  if (name == "blue") {
    *out = HsvRange{};  // H 100..130, S >= 80, V >= 50 (DESIGN.md)
    return Status::Ok();
  }
  return Status::usage("unknown colour '" + name + "' (known: blue; or give --hsv-min/--hsv-max)");
}

// "H,S,V" -> three integers in 0..255 (H is bounded to 179 by check_range).
static Status parse_hsv(const std::string& option, const std::string& text, int* h, int* s, int* v) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == ',') parts.emplace_back();
    else parts.back() += c;
  }
  if (parts.size() != 3) return Status::usage(option + " wants H,S,V (e.g. 100,80,50), got '" + text + "'");
  int* dst[3] = {h, s, v};
  for (int i = 0; i < 3; ++i) {
    int64_t x;
    Status st = parse_int(parts[i], 0, 255, &x);
    if (!st.ok()) return Status::usage(option + ": " + st.message);
    *dst[i] = int(x);
  }
  return Status::Ok();
}

Status parse_color_check(const std::string& name, const std::string& hsv_min,
                         const std::string& hsv_max, double full_ratio, ColorCheck* out) {
  ColorCheck c;
  c.enabled = !name.empty() || !hsv_min.empty() || !hsv_max.empty();
  c.label = name.empty() ? "in-range" : name;
  if (!name.empty()) PARVIS_TRY(named_range(name, &c.range));
  HsvRange& r = c.range;
  if (!hsv_min.empty()) PARVIS_TRY(parse_hsv("--hsv-min", hsv_min, &r.h_min, &r.s_min, &r.v_min));
  if (!hsv_max.empty()) PARVIS_TRY(parse_hsv("--hsv-max", hsv_max, &r.h_max, &r.s_max, &r.v_max));
  PARVIS_TRY(check_range(r));
  if (!(full_ratio >= 0.0 && full_ratio <= 1.0)) return Status::usage("--full-ratio must lie in [0, 1]");
  c.full_ratio = full_ratio;
  *out = c;
  return Status::Ok();
}

}  // namespace parvis::color
