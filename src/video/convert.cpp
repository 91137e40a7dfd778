// A frame's bytes -> RGB and grey on the host (video.hpp): the reference every version's
// frames are defined by. Per pixel it is yuv_to_rgb (video/yuv.hpp), then gray_of
// (common/gray.hpp); the row loops (convert_rows.inc) compute the chroma terms once per chroma
// row and are written for the vectorizer, which changes no bit; rect_to_rgb is the per-pixel
// formula itself, and tests/video_yuv_reference.py checks the frame path against numpy.
#include <cstring>
#include <vector>

#include "cpu/simd.hpp"
#include "video/video.hpp"

namespace parvis::video {

size_t FrameFormat::frame_bytes() const {
  switch (layout) {
    case Layout::Yuv: return luma_bytes() * (alpha ? 2 : 1) + 2 * chroma_bytes();
    case Layout::Rgb24:
    case Layout::Bgr24: return luma_bytes() * 3;
    case Layout::Gray: return luma_bytes();
  }
  return 0;
}

std::string FrameFormat::describe() const {
  std::string s = std::to_string(width) + "x" + std::to_string(height) + " ";
  switch (layout) {
    case Layout::Rgb24: return s + "rgb24";
    case Layout::Bgr24: return s + "bgr24";
    case Layout::Gray: return s + "gray";
    case Layout::Yuv: break;
  }
  if (mono) s += "mono";
  else if (chroma_sx == 2 && chroma_sy == 2) s += "yuv420";
  else if (chroma_sx == 2 && chroma_sy == 1) s += "yuv422";
  else if (chroma_sx == 4 && chroma_sy == 1) s += "yuv411";
  else s += "yuv444";
  if (alpha) s += "+alpha";
  s += range == YuvRange::Full ? " full" : " limited";
  s += matrix == YuvMatrix::Bt601 ? " bt601" : " bt709";
  return s;
}

// The row loops, compiled twice: for the baseline and (x86) for AVX2, picked at run time.
// Both compute the same integers; only the vector width differs.
namespace rows_generic {
#include "video/convert_rows.inc"
}  // namespace rows_generic
#if PARVIS_SIMD_X86
PARVIS_AVX2_BEGIN
namespace rows_avx2 {
#include "video/convert_rows.inc"
}  // namespace rows_avx2
PARVIS_AVX2_END
#endif

namespace {

void yuv_frame(const FrameFormat& f, const uint8_t* bytes, Image* rgb, Image* gray) {
  const int w = f.width;
  if (f.mono) {
    const YuvToRgb k = yuv_to_rgb_coefficients(f.matrix, f.range);
    uint8_t grey_of_luma[256];
    for (int i = 0; i < 256; ++i) grey_of_luma[i] = luma_to_grey(k, i);  // gray_of(v, v, v) = v
    for (int y = 0; y < f.height; ++y) {
      const uint8_t* yr = bytes + size_t(y) * size_t(w);
      uint8_t* g = gray->row(y);
      for (int x = 0; x < w; ++x) g[x] = grey_of_luma[yr[x]];
      if (rgb) {
        uint8_t* out = rgb->row(y);
        for (int x = 0; x < w; ++x) out[3 * x] = out[3 * x + 1] = out[3 * x + 2] = g[x];
      }
    }
    return;
  }
  // Scratch rows, per thread, grown when a wider frame comes (not per frame).
  thread_local std::vector<int32_t> terms;
  thread_local std::vector<uint8_t> planes;
  if (terms.size() < 3 * size_t(w)) terms.resize(3 * size_t(w)), planes.resize(3 * size_t(w));
#if PARVIS_SIMD_X86
  if (simd::best_isa() == simd::Isa::Avx2) {
    rows_avx2::yuv_frame_rows(f, bytes, rgb, gray, terms.data(), planes.data());
    return;
  }
#endif
  rows_generic::yuv_frame_rows(f, bytes, rgb, gray, terms.data(), planes.data());
}

// Packed RGB or BGR: grey, and RGB when asked.
void packed_frame(const FrameFormat& f, const uint8_t* bytes, Image* rgb, Image* gray) {
  const int w = f.width;
  const bool bgr = f.layout == Layout::Bgr24;
  for (int y = 0; y < f.height; ++y) {
    const uint8_t* in = bytes + size_t(y) * size_t(w) * 3;
    uint8_t* g = gray->row(y);
    for (int x = 0; x < w; ++x) {
      const uint8_t* p = in + 3 * x;
      g[x] = bgr ? gray_of(p[2], p[1], p[0]) : gray_of(p[0], p[1], p[2]);
    }
    if (!rgb) continue;
    uint8_t* out = rgb->row(y);
    if (!bgr) {
      std::memcpy(out, in, size_t(w) * 3);
      continue;
    }
    for (int x = 0; x < w; ++x) out[3 * x] = in[3 * x + 2], out[3 * x + 1] = in[3 * x + 1], out[3 * x + 2] = in[3 * x];
  }
}

}  // namespace

void frame_to_rgb_gray(const FrameFormat& f, const uint8_t* bytes, Image* rgb, Image* gray) {
  const int w = f.width;
  switch (f.layout) {
    case Layout::Yuv: yuv_frame(f, bytes, rgb, gray); return;
    case Layout::Rgb24:
    case Layout::Bgr24: packed_frame(f, bytes, rgb, gray); return;
    case Layout::Gray:
      for (int y = 0; y < f.height; ++y) {
        const uint8_t* in = bytes + size_t(y) * size_t(w);
        std::memcpy(gray->row(y), in, size_t(w));  // gray_of(v, v, v) = v
        if (!rgb) continue;
        uint8_t* out = rgb->row(y);
        for (int x = 0; x < w; ++x) out[3 * x] = out[3 * x + 1] = out[3 * x + 2] = in[x];
      }
      return;
  }
}

void rect_to_rgb(const FrameFormat& f, const uint8_t* bytes, Rect r, Image* rgb) {
  const int w = f.width;
  const YuvToRgb k = yuv_to_rgb_coefficients(f.matrix, f.range);
  const uint8_t* u_plane = bytes + f.luma_bytes();
  const uint8_t* v_plane = u_plane + f.chroma_bytes();
  for (int y = r.y; y < r.y + r.h; ++y) {
    const size_t crow = size_t(y / f.chroma_sy) * size_t(f.chroma_width());
    for (int x = r.x; x < r.x + r.w; ++x) {
      uint8_t* out = rgb->at(x, y);
      const size_t i = size_t(y) * size_t(w) + size_t(x);
      switch (f.layout) {
        case Layout::Yuv:
          if (f.mono) out[0] = out[1] = out[2] = luma_to_grey(k, bytes[i]);
          else
            yuv_to_rgb(k, bytes[i], u_plane[crow + size_t(x / f.chroma_sx)],
                       v_plane[crow + size_t(x / f.chroma_sx)], &out[0], &out[1], &out[2]);
          break;
        case Layout::Rgb24: out[0] = bytes[3 * i], out[1] = bytes[3 * i + 1], out[2] = bytes[3 * i + 2]; break;
        case Layout::Bgr24: out[0] = bytes[3 * i + 2], out[1] = bytes[3 * i + 1], out[2] = bytes[3 * i]; break;
        case Layout::Gray: out[0] = out[1] = out[2] = bytes[i]; break;
      }
    }
  }
}

}  // namespace parvis::video
