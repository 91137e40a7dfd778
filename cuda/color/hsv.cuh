// RGB -> HSV on the device, mirroring color::rgb_to_hsv (src/color/color.cpp, OpenCV's 8-bit
// integer formulas) step for step. The two fixed-point reciprocal tables are not re-derived
// here: they are filled from the host's own hsv_sdiv / hsv_hdiv180, so both sides use the very
// same numbers. tests/cuda/hsv_exhaustive.cu checks all 2^24 colours against the host function.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "color/color.hpp"
#include "common.cuh"

namespace parvis::cuda::hsv {

// One copy per translation unit (the colour version's, and the video device pipeline's): static,
// so that each unit's upload_tables below fills its own copy (an inline function would be
// merged across units by the linker, and one unit's tables would stay zero).
static __constant__ int c_sdiv[256];     // hsv_sdiv(v)
static __constant__ int c_hdiv180[256];  // hsv_hdiv180(diff)

// Uploads this unit's tables once per process (and per device context).
static inline Status upload_tables() {
  static bool done = false;
  if (done) return Status::Ok();
  int sdiv[256], hdiv[256];
  for (int i = 0; i < 256; ++i) {
    sdiv[i] = color::hsv_sdiv(i);
    hdiv[i] = color::hsv_hdiv180(i);
  }
  CUDA_CHECK(cudaMemcpyToSymbol(c_sdiv, sdiv, sizeof sdiv));
  CUDA_CHECK(cudaMemcpyToSymbol(c_hdiv180, hdiv, sizeof hdiv));
  // Landed before any stream's kernel reads them (cuda/common.cuh: the copies above may return
  // before their DMA is done, and the callers' streams are non-blocking).
  CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  done = true;
  return Status::Ok();
}

struct DevHsv {
  int h, s, v;
};

__device__ __forceinline__ DevHsv rgb_to_hsv(int r, int g, int b) {
  const int v = max(r, max(g, b));
  const int diff = v - min(r, min(g, b));
  const int half = 1 << (color::kHsvShift - 1);
  const int s = (diff * c_sdiv[v] + half) >> color::kHsvShift;
  int h;
  if (v == r) h = g - b;
  else if (v == g) h = b - r + 2 * diff;
  else h = r - g + 4 * diff;
  h = (h * c_hdiv180[diff] + half) >> color::kHsvShift;  // arithmetic shift, as on the host
  if (h < 0) h += 180;
  return DevHsv{h, s, v};
}

// The inclusive range, passed by value to kernels.
struct DevRange {
  int h_min, h_max, s_min, s_max, v_min, v_max;
};
inline DevRange to_dev(const color::HsvRange& r) {
  return DevRange{r.h_min, r.h_max, r.s_min, r.s_max, r.v_min, r.v_max};
}

__device__ __forceinline__ bool in_range(DevHsv p, const DevRange& r) {
  return p.h >= r.h_min && p.h <= r.h_max && p.s >= r.s_min && p.s <= r.s_max &&
         p.v >= r.v_min && p.v <= r.v_max;
}

}  // namespace parvis::cuda::hsv
