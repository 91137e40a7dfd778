// The colour filter's CPU kernel, shared by the simd and omp versions: the pixels of rows
// [y0, y1) of a rectangle that fall in an HSV range. The rows are split into planes a chunk at a
// time (on the stack: nothing allocates) and counted by the vector kernel (simd_kernels.inc,
// SSE2 or AVX2, picked at run time like every simd kernel) or, for the last few pixels of a row
// and off x86, by the reference rgb_to_hsv.
#pragma once
#include <cstdint>

#include "color/color.hpp"

namespace parvis::color::kernels {

// OpenCV's reciprocals (hsv_sdiv, hsv_hdiv180) as tables, for the vector gathers.
struct HsvTables {
  int32_t sdiv[256];
  int32_t hdiv180[256];
};

uint64_t count_rows(const Image& rgb, Rect rect, const HsvRange& range, int y0, int y1);

// The instruction set count_rows uses ("avx2", "sse2" or "scalar").
const char* isa();

}  // namespace parvis::color::kernels
