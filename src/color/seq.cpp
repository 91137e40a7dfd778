// HSV colour filter, the reference (seed 000, countBluePixel): convert every pixel of the
// rectangle to HSV with OpenCV's integer formulas and count those inside the range.
#include "color/color.hpp"

namespace parvis::color {

Status count_in_rect(const Image& rgb, Rect rect, const HsvRange& range, CountResult* out) {
  PARVIS_TRY(check_count_input(rgb, rect));
  const double t0 = now_ms();
  uint64_t matching = 0;
  for (int y = rect.y; y < rect.y + rect.h; ++y) {
    for (int x = rect.x; x < rect.x + rect.w; ++x) {
      const uint8_t* p = rgb.at(x, y);
      if (in_range(rgb_to_hsv(p[0], p[1], p[2]), range)) ++matching;
    }
  }
  finish_count(rect, matching, t0, out);
  return Status::Ok();
}

}  // namespace parvis::color
