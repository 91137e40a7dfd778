// HSV colour filter, omp version: the simd version's vector kernel (cpu_kernels.hpp) with the
// rectangle's rows spread over OpenMP threads (static schedule), the counts summed.
#include <omp.h>

#include <algorithm>

#include "color/color.hpp"
#include "color/cpu_kernels.hpp"

namespace parvis::color {

Status count_in_rect(const Image& rgb, Rect rect, const HsvRange& range, CountResult* out) {
  PARVIS_TRY(check_count_input(rgb, rect));
  const double t0 = now_ms();
  // A template-sized rectangle is a few microseconds of work: threads only for large ones.
  constexpr int64_t kPixelsPerThread = 1 << 16;
  const int64_t pixels = int64_t(rect.w) * rect.h;
  const int threads = int(std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), pixels / kPixelsPerThread)));
  // One thread: no parallel region at all (a team of another size than the match's would make
  // libgomp build a new team each frame, i.e. allocate).
  uint64_t matching = 0;
  if (threads == 1) {
    matching = kernels::count_rows(rgb, rect, range, rect.y, rect.y + rect.h);
  } else {
#pragma omp parallel num_threads(threads) reduction(+ : matching)
    {
      const int t = omp_get_thread_num(), n = omp_get_num_threads();
      const int y0 = rect.y + int(int64_t(rect.h) * t / n), y1 = rect.y + int(int64_t(rect.h) * (t + 1) / n);
      matching += kernels::count_rows(rgb, rect, range, y0, y1);
    }
  }
  finish_count(rect, matching, t0, out);
  return Status::Ok();
}

}  // namespace parvis::color
