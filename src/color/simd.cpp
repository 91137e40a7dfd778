// HSV colour filter, simd version: the rectangle's rows through the vector kernel
// (cpu_kernels.hpp: OpenCV's integer HSV in SSE2/AVX2 i32 lanes), one thread.
#include "color/color.hpp"
#include "color/cpu_kernels.hpp"

namespace parvis::color {

Status count_in_rect(const Image& rgb, Rect rect, const HsvRange& range, CountResult* out) {
  PARVIS_TRY(check_count_input(rgb, rect));
  const double t0 = now_ms();
  finish_count(rect, kernels::count_rows(rgb, rect, range, rect.y, rect.y + rect.h), t0, out);
  return Status::Ok();
}

}  // namespace parvis::color
