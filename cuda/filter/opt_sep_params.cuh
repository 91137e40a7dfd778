// cuda-opt's separable filter path, host side: a kernel's taps as sign col^T row + centre delta
// (sep_decompose), the packed arithmetic's finish for them (sep_params) and the grid of strips
// (sep_grid), for the kernels of opt_sep.cuh and opt_sep_async.cuh; tests/cuda/filter_sep_emulate.cu
// runs them on the host. Which kernel runs on which grid: opt_sep_plan.cuh.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "filter/kernel_math.hpp"
#include "filter/opt_sep.cuh"

namespace parvis::filter {
namespace {

// taps = sign col^T row + centre delta(R, R) with col, row >= 0 (kernel_math.hpp's separate() on the
// kernel, else on the kernel with its centre tap replaced by the one that makes it rank 1, found
// from an off-centre tap: tap(R, x) tap(y, R) / tap(y, x)). Exact: separate() checks every tap.
inline bool sep_decompose(const Kernel& k, std::vector<int32_t>* col, std::vector<int32_t>* row,
                          int32_t* centre, int32_t* sign) {
  const int n = k.size, R = n / 2;
  Kernel m = k;
  *centre = 0;
  if (!separate(m, col, row)) {
    int64_t v = 0;
    bool found = false;
    for (int y = 0; y < n && !found; ++y)
      for (int x = 0; x < n && !found; ++x) {
        const int64_t t = k.taps[size_t(y) * n + x];
        if (y == R || x == R || t == 0) continue;
        const int64_t num = int64_t(k.taps[size_t(R) * n + x]) * k.taps[size_t(y) * n + R];
        if (num % t != 0) return false;
        v = num / t;
        found = true;
      }
    if (!found || v < INT32_MIN / 2 || v > INT32_MAX / 2) return false;
    m.taps[size_t(R) * n + R] = int32_t(v);
    *centre = int32_t(int64_t(k.taps[size_t(R) * n + R]) - v);
    if (!separate(m, col, row)) return false;
  }
  *sign = 1;
  bool row_neg = true, col_neg = true;
  for (int i = 0; i < n; ++i) row_neg = row_neg && (*row)[size_t(i)] <= 0, col_neg = col_neg && (*col)[size_t(i)] <= 0;
  for (int i = 0; i < n; ++i) {
    if (row_neg) (*row)[size_t(i)] = -(*row)[size_t(i)];
    if (col_neg) (*col)[size_t(i)] = -(*col)[size_t(i)];
    if ((*row)[size_t(i)] < 0 || (*col)[size_t(i)] < 0) return false;
  }
  if (row_neg != col_neg) *sign = -1;
  return true;
}

// The separable plan of a kernel on `channels`-byte pixels: false (and why) when the kernel or
// the image is not for this path. Fills the taps and the finish of `p`; the grid is sep_grid's.
inline bool sep_params(const Kernel& k, Border border, int channels, const DeviceDivider& dv, SepParams* p,
                       std::string* why) {
  std::vector<int32_t> col, row;
  if (border != Border::Zero) return *why = "zero border only", false;
  if (k.size != 3 && k.size != 5) return *why = "sizes 3 and 5 only", false;
  if (channels != 1 && channels != 3) return *why = "grey or RGB only", false;
  int32_t centre = 0, sign = 1;
  if (!sep_decompose(k, &col, &row, &centre, &sign)) return *why = "not separable (with a centre tap)", false;
  int64_t sr = 0, sc = 0;
  for (int i = 0; i < k.size; ++i) sr += row[size_t(i)], sc += col[size_t(i)];
  const int64_t vmax = sr * sc * 255, d = k.divisor;
  *p = SepParams{};
  for (int i = 0; i < k.size; ++i) p->row[i] = row[size_t(i)], p->col[i] = col[size_t(i)];
  int s = 0;  // d = 2^s, if it is one
  while (s < 30 && (int64_t(1) << s) < d) ++s;
  const bool pow2 = (int64_t(1) << s) == d && s <= 8;
  // (sum + half) >> s = ((sum + half) 2^(8 - s)) >> 8: the column taps and the half scaled, the
  // scaled sum below 256 d 2^(8 - s) = 2^16 while vmax + half < 256 d. A shift of s <= 8 keeps the
  // high lane's bits out of the low lane's quotient byte.
  auto scale_to_256 = [&](int64_t half) {
    for (int i = 0; i < k.size; ++i) p->col[i] <<= 8 - s;
    p->half2 = (uint32_t(half) << (8 - s)) * 0x10001u;
  };
  p->sign = sign;
  if (centre != 0 || sign < 0) {  // taps = sign G + centre delta; G < 2^16 in the packed lanes
    if (vmax >= 65536) return *why = "sums beyond 16 bits", false;
    const int64_t c = centre / d, h = sign > 0 ? d / 2 : d - 1 - d / 2;  // h: what rounds g
    const bool scaled = pow2 && d > 1 && vmax + h < 256 * d;
    const int64_t gmax = scaled ? 255 : vmax, bias = sign > 0 ? 0 : (gmax + 255) / 256 * 256;
    if (centre % d == 0 && c >= 0 && (d == 1 || scaled) && c * 255 + bias + (sign > 0 ? gmax : 0) < 65536) {
      p->finish = SepFinish::CentreMul;
      p->cmul = uint32_t(c);
      p->g_scaled = scaled;
      if (scaled) scale_to_256(h);
      else p->half2 = 0;  // d = 1: g = G
      p->bias2 = uint32_t(bias) * 0x10001u;
      p->top2 = uint32_t(bias + 255) * 0x10001u;
      return true;
    }
    if (!dv.exact) return *why = "no magic number for the divisor", false;
    p->finish = SepFinish::PerByte;
    p->centre = centre;
    p->half = dv.half;
    p->lo = dv.lo;
    p->cap = dv.cap;
    p->magic = dv.magic;
    p->shift = dv.shift;
    return true;
  }
  if (pow2 && vmax + d / 2 < 256 * d && vmax + d / 2 < 65536) {
    p->finish = SepFinish::Pow2;
    scale_to_256(d / 2);
    return true;
  }
  const int64_t ymax = vmax + d / 2;
  if (ymax < 65536 && ymax / d <= 255) {  // PackedMagic, where every y of the kernel checks out
    const uint64_t m = ((uint64_t(1) << 24) + uint64_t(d) - 1) / uint64_t(d);
    bool exact = ymax * m < (uint64_t(1) << 32);
    for (int64_t y = 0; exact && y <= ymax; ++y) exact = int64_t((uint64_t(y) * m) >> 24) == y / d;
    if (exact) {
      p->finish = SepFinish::PackedMagic;
      p->pmagic = uint32_t(m);
      p->half2 = uint32_t(d / 2) * 0x10001u;
      return true;
    }
  }
  if (!dv.exact) return *why = "no magic number for the divisor", false;
  if (vmax + dv.half >= 65536) return *why = "sums beyond 16 bits", false;
  p->finish = SepFinish::Magic;
  p->half2 = uint32_t(dv.half) * 0x10001u;
  p->cap = dv.cap;
  p->magic = dv.magic;
  p->shift = dv.shift;
  return true;
}

// The grid: warp columns of kSepWarpBytes, strips of `strip_rows` rows; 0 rows = as many strips as
// fill `resident_warps` (one wave), at least 8 rows a strip (the (K - 1) / rows re-read).
inline void sep_grid(const Geometry& g, long long resident_warps, int strip_rows, SepParams* p) {
  p->warps_x = (g.row_bytes + kSepWarpBytes - 1) / kSepWarpBytes;
  if (strip_rows <= 0) {
    const long long strips = std::max(1LL, resident_warps / p->warps_x);
    strip_rows = int(std::max(8LL, (g.height + strips - 1) / strips));
  }
  p->strip_rows = std::min(strip_rows, std::max(g.height, 1));
  p->warps = (long long)p->warps_x * ((g.height + p->strip_rows - 1) / p->strip_rows);
}

}  // namespace
}  // namespace parvis::filter
