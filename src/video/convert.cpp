// A frame's bytes -> RGB and grey on the host (video.hpp): the reference every version's
// frames are defined by. Per pixel it is yuv_to_rgb (video/yuv.hpp), then gray_of
// (common/gray.hpp); the loops below only hoist the per-sample products into 256-entry tables
// and walk a chroma row once per pixel row, which changes no bit.
#include <cstring>

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

namespace {

// The products of yuv_to_rgb for every 8-bit value: tables, so that a pixel costs three
// additions and three clamps. tab.y[Y] = ky (Y - y_offset); tab.rv[V] = kr_v (V - 128); ...
struct YuvTables {
  int32_t y[256], rv[256], gu[256], gv[256], bu[256];
  explicit YuvTables(const YuvToRgb& k) {
    for (int i = 0; i < 256; ++i) {
      y[i] = k.ky * (i - k.y_offset);
      rv[i] = k.kr_v * (i - 128);
      gu[i] = -k.kg_u * (i - 128);
      gv[i] = -k.kg_v * (i - 128);
      bu[i] = k.kb_u * (i - 128);
    }
  }
};

void yuv_frame(const FrameFormat& f, const uint8_t* bytes, Image* rgb, Image* gray) {
  const YuvTables t(yuv_to_rgb_coefficients(f.matrix, f.range));
  const int w = f.width, cw = f.chroma_width(), sx = f.chroma_sx;
  const uint8_t* y_plane = bytes;
  const uint8_t* u_plane = bytes + f.luma_bytes();
  const uint8_t* v_plane = u_plane + f.chroma_bytes();
  for (int y = 0; y < f.height; ++y) {
    const uint8_t* yr = y_plane + size_t(y) * size_t(w);
    uint8_t* out = rgb->row(y);
    uint8_t* g = gray->row(y);
    if (f.mono) {
      for (int x = 0; x < w; ++x) {
        const uint8_t v = round_shift16_clamp(t.y[yr[x]]);
        out[3 * x] = out[3 * x + 1] = out[3 * x + 2] = v;
        g[x] = gray_of(v, v, v);
      }
      continue;
    }
    const size_t crow = size_t(y / f.chroma_sy) * size_t(cw);
    const uint8_t* ur = u_plane + crow;
    const uint8_t* vr = v_plane + crow;
    for (int cx = 0, x = 0; cx < cw; ++cx) {
      const int32_t r_c = t.rv[vr[cx]], g_c = t.gu[ur[cx]] + t.gv[vr[cx]], b_c = t.bu[ur[cx]];
      for (const int x_end = x + sx < w ? x + sx : w; x < x_end; ++x) {
        const int32_t yy = t.y[yr[x]];
        const uint8_t r = round_shift16_clamp(yy + r_c);
        const uint8_t gg = round_shift16_clamp(yy + g_c);
        const uint8_t b = round_shift16_clamp(yy + b_c);
        out[3 * x] = r, out[3 * x + 1] = gg, out[3 * x + 2] = b;
        g[x] = gray_of(r, gg, b);
      }
    }
  }
}

}  // namespace

void frame_to_rgb_gray(const FrameFormat& f, const uint8_t* bytes, Image* rgb, Image* gray) {
  const int w = f.width;
  switch (f.layout) {
    case Layout::Yuv: yuv_frame(f, bytes, rgb, gray); return;
    case Layout::Rgb24:
    case Layout::Bgr24: {
      const bool bgr = f.layout == Layout::Bgr24;
      for (int y = 0; y < f.height; ++y) {
        const uint8_t* in = bytes + size_t(y) * size_t(w) * 3;
        uint8_t* out = rgb->row(y);
        uint8_t* g = gray->row(y);
        if (!bgr) std::memcpy(out, in, size_t(w) * 3);
        for (int x = 0; x < w; ++x) {
          const uint8_t r = in[3 * x + (bgr ? 2 : 0)], gg = in[3 * x + 1], b = in[3 * x + (bgr ? 0 : 2)];
          if (bgr) out[3 * x] = r, out[3 * x + 1] = gg, out[3 * x + 2] = b;
          g[x] = gray_of(r, gg, b);
        }
      }
      return;
    }
    case Layout::Gray:
      for (int y = 0; y < f.height; ++y) {
        const uint8_t* in = bytes + size_t(y) * size_t(w);
        uint8_t* out = rgb->row(y);
        for (int x = 0; x < w; ++x) out[3 * x] = out[3 * x + 1] = out[3 * x + 2] = in[x];
        std::memcpy(gray->row(y), in, size_t(w));  // gray_of(v, v, v) = v
      }
      return;
  }
}

}  // namespace parvis::video
