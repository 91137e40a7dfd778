// The colour filter's vector kernel (simd_kernels.inc), compiled here once for SSE2 and once for
// AVX2 (cpu/simd.hpp explains the two regions), and the row loop around it.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "color/cpu_kernels.hpp"
#include "cpu/simd.hpp"

namespace parvis::color::kernels {

#if PARVIS_SIMD_X86
namespace sse2 {
using Ops = simd::sse2::Ops;
#include "color/simd_kernels.inc"
}  // namespace sse2

PARVIS_AVX2_BEGIN
namespace avx2 {
using Ops = simd::avx2::Ops;
#include "color/simd_kernels.inc"
}  // namespace avx2
PARVIS_AVX2_END
#endif

namespace {

using CountPlanar = uint64_t (*)(const uint8_t*, const uint8_t*, const uint8_t*, int, const HsvTables&,
                                 const HsvRange&);

struct Picked {
  CountPlanar count = nullptr;  // nullptr: scalar only
  int lanes = 1;
  const char* isa = "scalar";
};

Picked pick() {
  switch (simd::best_isa()) {
#if PARVIS_SIMD_X86
    case simd::Isa::Avx2: return {avx2::count_planar, simd::avx2::Ops::kBytes / 4, "avx2"};
    case simd::Isa::Sse2: return {sse2::count_planar, simd::sse2::Ops::kBytes / 4, "sse2"};
#endif
    default: return {};
  }
}

const Picked& picked() {
  static const Picked p = pick();
  return p;
}

const HsvTables& tables() {
  static const HsvTables t = [] {
    HsvTables x{};
    for (int i = 0; i < 256; ++i) x.sdiv[i] = hsv_sdiv(i), x.hdiv180[i] = hsv_hdiv180(i);
    return x;
  }();
  return t;
}

}  // namespace

const char* isa() { return picked().isa; }

uint64_t count_rows(const Image& rgb, Rect rect, const HsvRange& range, int y0, int y1) {
  constexpr int kChunk = 256;  // pixels split into planes at a time
  const Picked& p = picked();
  const HsvTables& t = tables();
  alignas(32) uint8_t red[kChunk], green[kChunk], blue[kChunk];
  uint64_t matching = 0;
  for (int y = y0; y < y1; ++y) {
    const uint8_t* row = rgb.at(rect.x, y);
    int x = 0;
    if (p.count) {
      const int vector_end = rect.w / p.lanes * p.lanes;
      while (x < vector_end) {
        const int n = std::min(kChunk, vector_end - x);
        const uint8_t* px = row + size_t(x) * 3;
        for (int i = 0; i < n; ++i) red[i] = px[3 * i], green[i] = px[3 * i + 1], blue[i] = px[3 * i + 2];
        matching += p.count(red, green, blue, n, t, range);
        x += n;
      }
    }
    for (; x < rect.w; ++x) {
      const uint8_t* px = row + size_t(x) * 3;
      matching += in_range(rgb_to_hsv(px[0], px[1], px[2]), range) ? 1 : 0;
    }
  }
  return matching;
}

}  // namespace parvis::color::kernels
