// One pixel of a frame in its stream's own layout -> RGB and grey, __host__ __device__: what the
// device pipeline's kernels (device_pipeline.cu) compute per pixel, from the frame's bytes as
// the reader read them (planar Y, Cb, Cr; packed RGB/BGR; grey). It is the host's per-pixel
// formula (rect_to_rgb in src/video/convert.cpp): yuv_to_rgb of video/yuv.hpp with chroma
// repeated over its sx x sy block, then gray_of (common/gray.hpp), the shared grey formula.
// tests/cuda/video_convert_emulate.cu runs it on the host against frame_to_rgb_gray on every
// layout and odd sizes.
#pragma once
#include <cstddef>
#include <cstdint>

#include "common/gray.hpp"
#include "video/video.hpp"
#include "video/yuv.hpp"

#ifdef __CUDACC__
#define PARVIS_FRAME_HD __host__ __device__ __forceinline__
#else
#define PARVIS_FRAME_HD inline
#endif

namespace parvis::video {

// A frame's layout, by value to kernels (FrameFormat's methods are host code).
struct DevFrame {
  int width = 0, height = 0;
  int layout = 0;  // Layout as an int
  int sx = 1, sy = 1, chroma_width = 0;
  bool mono = false;
  size_t luma_bytes = 0, chroma_bytes = 0;
  YuvToRgb k{};
};

inline DevFrame dev_frame(const FrameFormat& f) {
  DevFrame d;
  d.width = f.width;
  d.height = f.height;
  d.layout = int(f.layout);
  d.sx = f.chroma_sx;
  d.sy = f.chroma_sy;
  d.chroma_width = f.chroma_width();
  d.mono = f.mono;
  d.luma_bytes = f.luma_bytes();
  d.chroma_bytes = f.chroma_bytes();
  d.k = yuv_to_rgb_coefficients(f.matrix, f.range);
  return d;
}

// The RGB of pixel (x, y).
PARVIS_FRAME_HD void frame_rgb_at(const DevFrame& f, const uint8_t* bytes, int x, int y, uint8_t* r,
                                  uint8_t* g, uint8_t* b) {
  const size_t i = size_t(y) * size_t(f.width) + size_t(x);
  switch (f.layout) {
    case int(Layout::Yuv):
      if (f.mono) {
        *r = *g = *b = luma_to_grey(f.k, bytes[i]);
      } else {
        const size_t c = size_t(y / f.sy) * size_t(f.chroma_width) + size_t(x / f.sx);
        const uint8_t* u = bytes + f.luma_bytes;
        yuv_to_rgb(f.k, bytes[i], u[c], u[f.chroma_bytes + c], r, g, b);
      }
      return;
    case int(Layout::Rgb24): *r = bytes[3 * i], *g = bytes[3 * i + 1], *b = bytes[3 * i + 2]; return;
    case int(Layout::Bgr24): *r = bytes[3 * i + 2], *g = bytes[3 * i + 1], *b = bytes[3 * i]; return;
    default: *r = *g = *b = bytes[i]; return;  // Gray
  }
}

// The grey of pixel (x, y): gray_of of its RGB.
PARVIS_FRAME_HD uint8_t frame_grey_at(const DevFrame& f, const uint8_t* bytes, int x, int y) {
  uint8_t r, g, b;
  frame_rgb_at(f, bytes, x, y, &r, &g, &b);
  return gray_of(r, g, b);
}

// The kernel body of the whole-frame conversion: grey pixels x0 .. x0 + 3 of row y into `out`
// (rows of `pitch` bytes, pitch % 4 == 0 and x0 + 4 <= pitch) as one 32-bit store; columns at
// or past the width get 0 (the matcher's rows are zero past the width).
PARVIS_FRAME_HD void grey_quad(const DevFrame& f, const uint8_t* bytes, uint8_t* out, size_t pitch,
                               int x0, int y) {
  uint32_t word = 0;
  for (int j = 0; j < 4; ++j)
    if (x0 + j < f.width) word |= uint32_t(frame_grey_at(f, bytes, x0 + j, y)) << (8 * j);
  uint8_t* at = out + size_t(y) * pitch + size_t(x0);
#ifdef __CUDA_ARCH__
  *reinterpret_cast<uint32_t*>(at) = word;
#else
  for (int j = 0; j < 4; ++j) at[j] = uint8_t(word >> (8 * j));
#endif
}

}  // namespace parvis::video
