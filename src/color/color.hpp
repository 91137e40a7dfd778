// HSV colour filter (seed 000): counts the pixels of a rectangle that fall in an HSV range,
// to tell a full (blue soap) capsule from an empty one.
#pragma once
#include <cstdint>

#include "common/cli.hpp"
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

struct CountResult {
  uint64_t matching = 0;  // pixels inside the range
  uint64_t total = 0;     // pixels in the rectangle
  Timings timings;
};

// `rgb` has 3 channels; `rect` lies inside it. Defined by each version.
Status count_in_rect(const Image& rgb, Rect rect, const HsvRange& range, CountResult* out);

}  // namespace parvis::color
