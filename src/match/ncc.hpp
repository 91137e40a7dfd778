// Normalized cross-correlation (--metric ncc = OpenCV's TM_CCOEFF_NORMED, --metric
// ccorr-normed = TM_CCORR_NORMED) from exact integer sums, then one fixed sequence of
// correctly rounded double operations: the same bits on the host and in CUDA kernels,
// whichever exact way a version found the sums (docs/DESIGN.md, "Normalized
// cross-correlation"). Header only, no dependencies, __host__ __device__ under nvcc.
#pragma once
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define PARVIS_NCC_HD __host__ __device__ __forceinline__
#else
#define PARVIS_NCC_HD inline
#endif

namespace parvis::match::ncc {

// The operations of the expression, each rounded once to nearest. On the device they are
// the explicit-rounding intrinsics, which nvcc never fuses. On the host they are plain
// operators: the only product followed by a sum is the exact x_hi * 2^32 of to_double
// (x_hi < 2^48), so a contraction into an FMA could not change a bit either.
PARVIS_NCC_HD double dmul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
PARVIS_NCC_HD double dadd(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
PARVIS_NCC_HD double ddiv(double a, double b) {
#ifdef __CUDA_ARCH__
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
PARVIS_NCC_HD double dsqrt(double a) {
#ifdef __CUDA_ARCH__
  return __dsqrt_rn(a);
#else
  return __builtin_sqrt(a);  // IEEE square root, correctly rounded
#endif
}

// A signed 128-bit integer with |x| < 2^80 as the nearest double: x = hi * 2^32 + lo with
// |hi| < 2^48 and 0 <= lo < 2^32 both exact in a double, hi * 2^32 exact, so the one
// rounding is the sum's: correctly rounded.
PARVIS_NCC_HD double to_double(__int128 x) {
  const int64_t hi = int64_t(x >> 32);
  const uint32_t lo = uint32_t(uint64_t(x) & 0xffffffffu);
  return dadd(dmul(double(hi), 4294967296.0), double(lo));
}

// The sums of one position: n = w * h pixels, window sums si = ΣI, sii = ΣI², the
// correlation sit = ΣI·T, and the template's st = ΣT, stt = ΣT² (each < 2^47).
//
// coeff (TM_CCOEFF_NORMED): num = n·sit − si·st, vi = n·sii − si², vt = n·stt − st²,
// exact in 128 bits (< 2^79), then r = num / sqrt(vi · vt) in doubles; a flat template
// (vt = 0) scores 1 everywhere, a flat window (vi = 0) 0 — OpenCV's values there.
// Otherwise (TM_CCORR_NORMED): r = sit / sqrt(sii · stt); a window or template of zeros
// scores 0. r is clamped to [−1, 1] (Cauchy–Schwarz bounds the exact value; rounding may
// step one ulp past it), and −0 becomes +0.
//
// Templates of at most kNarrowMaxN pixels keep every product below 2^63 (n² · 255² < 2^63), so
// num, v_I and v_T are computed in 64 bits and converted once, correctly rounded, as the
// 128-bit path's to_double would: the same doubles, faster (`wide` forces the 128-bit path,
// for the selftest).
constexpr uint64_t kNarrowMaxN = 11000000;

PARVIS_NCC_HD double score(bool coeff, uint64_t n, uint64_t si, uint64_t sii, uint64_t sit,
                           uint64_t st, uint64_t stt, bool wide = false) {
  double r;
  if (coeff && n <= kNarrowMaxN && !wide) {
    const int64_t num = int64_t(n * sit) - int64_t(si * st);
    const int64_t vi = int64_t(n * sii - si * si), vt = int64_t(n * stt - st * st);  // >= 0
    if (vt == 0) return 1.0;
    if (vi == 0) return 0.0;
    r = ddiv(double(num), dsqrt(dmul(double(vi), double(vt))));
  } else if (coeff) {
    const __int128 num = __int128(n) * __int128(sit) - __int128(si) * __int128(st);
    const __int128 vi = __int128(n) * __int128(sii) - __int128(si) * __int128(si);
    const __int128 vt = __int128(n) * __int128(stt) - __int128(st) * __int128(st);
    if (vt == 0) return 1.0;
    if (vi == 0) return 0.0;
    r = ddiv(to_double(num), dsqrt(dmul(to_double(vi), to_double(vt))));
  } else {
    if (sii == 0 || stt == 0) return 0.0;
    r = ddiv(double(sit), dsqrt(dmul(double(sii), double(stt))));
  }
  if (r > 1.0) r = 1.0;
  if (r < -1.0) r = -1.0;
  return r == 0.0 ? 0.0 : r;
}

// The ends of the rank key of a window whose exact ΣI·T lies in [sit_lo, sit_hi] (signed: the
// ends of an approximate correlation), clamped to [0, (ΣI² + ΣT²) / 2] (2·I·T <= I² + T²). With
// the window sums fixed, score() is monotone in ΣI·T: the numerator grows over a positive
// denominator, and each rounding, the clamp and the flat-window cases keep the order. So the
// keys of the scores at the ends bound the exact key: *lo (from sit_hi, the best end) <= key <=
// *hi. The FFT methods in double, past their rounding bound (cpu_fft.cpp, cuda/match/opt_normed.cu).
PARVIS_NCC_HD uint64_t key_of(double r);
PARVIS_NCC_HD void key_ends(bool coeff, uint64_t n, uint64_t si, uint64_t sii, int64_t sit_lo,
                            int64_t sit_hi, uint64_t st, uint64_t stt, uint64_t* lo, uint64_t* hi) {
  const int64_t cap = int64_t((sii + stt) / 2);
  sit_lo = sit_lo < 0 ? 0 : sit_lo > cap ? cap : sit_lo;
  sit_hi = sit_hi < 0 ? 0 : sit_hi > cap ? cap : sit_hi;
  *lo = key_of(score(coeff, n, si, sii, uint64_t(sit_hi), st, stt));
  *hi = key_of(score(coeff, n, si, sii, uint64_t(sit_lo), st, stt));
}

// The rank key of a score: larger scores get smaller keys, so that Position::score holds
// it and `better` (smallest first, then y, then x) ranks NCC like SSD. The IEEE bits of a
// double, sign-flipped into an unsigned order, then complemented. Scores are never NaN.
PARVIS_NCC_HD uint64_t key_of(double r) {
  uint64_t u;
  memcpy(&u, &r, sizeof u);
  u = (u >> 63) ? ~u : (u | (uint64_t(1) << 63));  // increasing with r
  return ~u;
}
PARVIS_NCC_HD double score_of_key(uint64_t key) {
  uint64_t u = ~key;
  u = (u >> 63) ? (u & ~(uint64_t(1) << 63)) : ~u;
  double r;
  memcpy(&r, &u, sizeof r);
  return r;
}

}  // namespace parvis::match::ncc
