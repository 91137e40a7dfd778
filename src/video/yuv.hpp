// THE colour conversion of parvis's video path (docs/DESIGN.md, "Video"): Y'CbCr <-> R'G'B'
// in 16-bit fixed point, integers only, for host and device code alike. Every version turns a
// YUV frame into RGB with yuv_to_rgb below (and RGB into grey with gray_of, common/gray.hpp),
// so a frame's RGB is the same bits everywhere; the generator (images/gen_video.cpp) and the
// annotated output use rgb_to_yuv.
//
// Matrices: BT.601 (Kr 0.299, Kb 0.114) and BT.709 (Kr 0.2126, Kb 0.0722). Ranges: full
// (Y and C in 0..255, JFIF) and limited ("studio swing": Y 16..235, C 16..240). The
// coefficients are the real ones times 2^16, rounded to the nearest integer; a forward chroma
// row is then adjusted by one unit where needed so that it sums to 0 (grey stays at C = 128).
#pragma once
#include <cstdint>

#ifdef __CUDACC__
#define PARVIS_YUV_HD __host__ __device__ __forceinline__
#else
#define PARVIS_YUV_HD inline
#endif

namespace parvis::video {

enum class YuvMatrix : uint8_t { Bt601, Bt709 };
enum class YuvRange : uint8_t { Limited, Full };

// YUV -> RGB:  c = C - 128,  y = Y - y_offset
//   R = clamp(floor((ky*y + kr_v*cr            + 2^15) / 2^16))
//   G = clamp(floor((ky*y - kg_u*cb - kg_v*cr  + 2^15) / 2^16))
//   B = clamp(floor((ky*y + kb_u*cb            + 2^15) / 2^16))
// i.e. rounded half up, then clamped to 0..255.
struct YuvToRgb {
  int32_t y_offset, ky, kr_v, kg_u, kg_v, kb_u;
};

PARVIS_YUV_HD YuvToRgb yuv_to_rgb_coefficients(YuvMatrix m, YuvRange r) {
  // ky = 2^16 (full) or 2^16 * 255/219 (limited); chroma terms 2(1-Kr), 2Kb(1-Kb)/Kg,
  // 2Kr(1-Kr)/Kg, 2(1-Kb), times 255/224 when limited.
  if (m == YuvMatrix::Bt601)
    return r == YuvRange::Full ? YuvToRgb{0, 65536, 91881, 22553, 46802, 116130}
                               : YuvToRgb{16, 76309, 104597, 25675, 53279, 132201};
  return r == YuvRange::Full ? YuvToRgb{0, 65536, 103206, 12276, 30679, 121609}
                             : YuvToRgb{16, 76309, 117489, 13975, 34925, 138438};
}

// floor((v + 2^15) / 2^16) clamped to 0..255, without shifting a negative number: every sum
// above lies in (-2^25, 2^27), so adding 1024 * 2^16 keeps it positive.
PARVIS_YUV_HD uint8_t round_shift16_clamp(int32_t v) {
  constexpr int32_t kBias = 1024;
  const int32_t q = ((v + (kBias << 16) + (1 << 15)) >> 16) - kBias;
  return uint8_t(q < 0 ? 0 : q > 255 ? 255 : q);
}

PARVIS_YUV_HD void yuv_to_rgb(const YuvToRgb& k, int y, int u, int v, uint8_t* r, uint8_t* g,
                              uint8_t* b) {
  const int32_t yy = k.ky * (y - k.y_offset);
  const int32_t cb = u - 128, cr = v - 128;
  *r = round_shift16_clamp(yy + k.kr_v * cr);
  *g = round_shift16_clamp(yy - k.kg_u * cb - k.kg_v * cr);
  *b = round_shift16_clamp(yy + k.kb_u * cb);
}

// A grey (mono) sample: R = G = B = the luma alone (chroma 128).
PARVIS_YUV_HD uint8_t luma_to_grey(const YuvToRgb& k, int y) {
  return round_shift16_clamp(k.ky * (y - k.y_offset));
}

// RGB -> YUV, the same matrices:
//   Y = floor((y_r R + y_g G + y_b B + y_offset * 2^16 + 2^15) / 2^16)
//   C = floor((c_r R + c_g G + c_b B + 128 * 2^16 + 2^15) / 2^16)       (clamped to 0..255)
// (every sum is non-negative, so the shift is a floor).
struct RgbToYuv {
  int32_t y_offset;
  int32_t y_r, y_g, y_b, cb_r, cb_g, cb_b, cr_r, cr_g, cr_b;
};

PARVIS_YUV_HD RgbToYuv rgb_to_yuv_coefficients(YuvMatrix m, YuvRange r) {
  if (m == YuvMatrix::Bt601)
    return r == YuvRange::Full
               ? RgbToYuv{0, 19595, 38470, 7471, -11058, -21710, 32768, 32768, -27439, -5329}
               : RgbToYuv{16, 16829, 33039, 6416, -9713, -19071, 28784, 28784, -24103, -4681};
  return r == YuvRange::Full
             ? RgbToYuv{0, 13933, 46871, 4732, -7509, -25259, 32768, 32768, -29763, -3005}
             : RgbToYuv{16, 11966, 40254, 4064, -6596, -22188, 28784, 28784, -26145, -2639};
}

PARVIS_YUV_HD uint8_t clamp_yuv(int32_t v) { return uint8_t(v < 0 ? 0 : v > 255 ? 255 : v); }

PARVIS_YUV_HD void rgb_to_yuv(const RgbToYuv& k, int r, int g, int b, uint8_t* y, uint8_t* u,
                              uint8_t* v) {
  *y = clamp_yuv((k.y_r * r + k.y_g * g + k.y_b * b + (k.y_offset << 16) + (1 << 15)) >> 16);
  *u = clamp_yuv((k.cb_r * r + k.cb_g * g + k.cb_b * b + (128 << 16) + (1 << 15)) >> 16);
  *v = clamp_yuv((k.cr_r * r + k.cr_g * g + k.cr_b * b + (128 << 16) + (1 << 15)) >> 16);
}

}  // namespace parvis::video
