// The cases of the masks' host emulations (tests/cuda/mask_emulate.cu, mask_fft_emulate.cu):
// a linear congruential generator, grey images of `levels` levels spread over 0..255 (2 levels:
// flat windows and binary masks), and the sweep over odd sizes, mask kinds and levels.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "common/image.hpp"

namespace parvis::emulate {

inline uint32_t next(uint32_t* s) { return *s = *s * 1664525u + 1013904223u; }

inline Image random_image(int w, int h, uint32_t* seed, int levels) {
  Image img;
  if (!image_alloc(w, h, 1, &img).ok()) std::abort();
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      img.row(y)[x] = uint8_t((next(seed) >> 24) % uint32_t(levels) * (255 / (levels - 1)));
  return img;
}

// Runs check(W, H, w, h, mask_kind, levels, seed) -> failures on every source / template size,
// mask kind 0 .. mask_kinds - 1 and levels 256 (noise) and 2 (flat windows under the mask);
// prints the totals and returns the exit code (0: no failure).
template <typename Check>
int sweep(int mask_kinds, uint32_t seed_base, Check check) {
  size_t bad = 0, cases = 0;
  const int sizes[][4] = {{37, 29, 7, 5}, {64, 19, 16, 3}, {50, 41, 17, 9}, {40, 12, 1, 1},
                          {33, 33, 33, 1}, {21, 30, 1, 13}, {90, 40, 65, 6}, {71, 53, 23, 31}};
  for (const auto& s : sizes)
    for (int mk = 0; mk < mask_kinds; ++mk)
      for (int levels : {256, 2}) {
        bad += check(s[0], s[1], s[2], s[3], mk, levels, uint32_t(1000 * cases) + seed_base);
        ++cases;
      }
  std::printf("%zu cases, %zu failed checks\n", cases, bad);
  return bad == 0 ? 0 : 1;
}

}  // namespace parvis::emulate
