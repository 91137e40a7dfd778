// The kernel analysis the fast versions plan with: separability, the range of the sums, exact
// division by a constant. Pure functions in a header, so that the CUDA versions use them without
// calling back into src/filter's .cpp files.
#pragma once
#include <cstdint>
#include <numeric>
#include <vector>

#include "filter/filter.hpp"

namespace parvis::filter {

// The kernel as an outer product col^T row of integer vectors (rank 1), when it is one.
inline bool separate(const Kernel& k, std::vector<int32_t>* col, std::vector<int32_t>* row) {
  const int n = k.size;
  auto tap = [&](int y, int x) { return int64_t(k.taps[size_t(y) * n + x]); };
  int ry = -1;  // a row with a nonzero tap
  for (int y = 0; y < n && ry < 0; ++y)
    for (int x = 0; x < n; ++x)
      if (tap(y, x) != 0) {
        ry = y;
        break;
      }
  if (ry < 0) return false;  // all zero: nothing to gain
  // row = that row divided by the gcd of its taps; col[y] = tap(y, x0) / row[x0].
  int64_t g = 0;
  for (int x = 0; x < n; ++x) g = std::gcd(g, tap(ry, x) < 0 ? -tap(ry, x) : tap(ry, x));
  std::vector<int32_t> r(static_cast<size_t>(n)), c(static_cast<size_t>(n));
  int x0 = -1;
  for (int x = 0; x < n; ++x) {
    r[size_t(x)] = int32_t(tap(ry, x) / g);
    if (x0 < 0 && r[size_t(x)] != 0) x0 = x;
  }
  for (int y = 0; y < n; ++y) {
    if (tap(y, x0) % r[size_t(x0)] != 0) return false;
    c[size_t(y)] = int32_t(tap(y, x0) / r[size_t(x0)]);
  }
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x)
      if (int64_t(c[size_t(y)]) * r[size_t(x)] != tap(y, x)) return false;
  *col = std::move(c);
  *row = std::move(r);
  return true;
}

// The smallest and largest sum(tap * px) over all pixel values 0..255.
inline void sum_range(const Kernel& k, int64_t* lo, int64_t* hi) {
  int64_t neg = 0, pos = 0;
  for (int32_t t : k.taps) (t < 0 ? neg : pos) += t;
  *lo = neg * 255;
  *hi = pos * 255;
}

// Exact floor(t / d) for every t in [0, t_max] as (t * magic) >> (bits + shift), magic < 2^bits
// (Granlund-Montgomery with the error bound checked for this range: t_max (magic d - 2^(bits +
// shift)) < 2^(bits + shift) suffices). False when no such pair exists (then divide otherwise).
struct Divider {
  uint32_t magic = 0;
  int shift = 0;
};
inline bool make_divider(int64_t d, int64_t t_max, int bits, Divider* out) {
  if (d < 1 || t_max < 0 || bits < 1 || bits > 32) return false;
  for (int shift = 0; shift < 32; ++shift) {
    const int n = bits + shift;
    const unsigned __int128 two_n = (unsigned __int128)1 << n;
    const unsigned __int128 magic = (two_n + uint64_t(d) - 1) / uint64_t(d);
    if (magic >> bits) break;  // larger shifts only make the magic larger
    const unsigned __int128 err = magic * uint64_t(d) - two_n;
    if ((unsigned __int128)uint64_t(t_max) * err < two_n) {
      out->magic = uint32_t(magic);
      out->shift = shift;
      return true;
    }
  }
  return false;
}

}  // namespace parvis::filter
