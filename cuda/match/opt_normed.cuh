// The per-thread bodies of cuda-opt's normed kernels (opt_normed.cu), __host__ __device__ so that
// tests/cuda/normed_emulate.cu runs them on the host against seq's normed_row_from_ssd.
#pragma once
#include <cstddef>
#include <cstdint>

#include "emulable.cuh"
#include "match/ncc.hpp"

namespace parvis::match::opt::normed {

constexpr int kColThreads = 64, kColRows = 32;  // W1: 4 columns x kColRows outputs a thread
constexpr int kPrefixThreads = 256;             // W2: one block per row
constexpr int kKeyBlockX = 32, kKeyBlockY = 8;  // W3, W4

struct Consts {
  uint64_t n, st, stt;  // the template's w h, ΣT, ΣT²
  bool coeff;           // NCC (TM_CCOEFF_NORMED); else ccorr-normed
};

// W1's four columns: the bytes of one 32-bit load added to the sums.
__host__ __device__ inline void add_columns(uint32_t wv, uint64_t si[4], uint64_t sq[4]) {
  PARVIS_UNROLL
  for (int k = 0; k < 4; ++k) {
    const uint32_t p = (wv >> (8 * k)) & 0xffu;
    si[k] += p;
    sq[k] += p * p;
  }
}

// W1, the thread of columns x..x+3 (x % 4 == 0, x < W) and output rows y0 .. y0+kColRows-1:
// C(y, x) = Σ_{j<h} I(y+j, x) and the same of I², for y < map_h, 64-bit, rows `ld` apart. One
// 32-bit load per source row: rows are 16-byte aligned with zero bytes past W, so columns past W
// sum to 0 (ld >= x + 4 for every thread). The first window's h rows are loaded eight at a time
// (fold_by_eight).
__host__ __device__ inline void col_sums_thread(const uint8_t* src, size_t pitch, int W, int h,
                                                int map_h, uint64_t* ci, uint64_t* cq, int ld,
                                                int x, int y0) {
  const int y1 = y0 + kColRows < map_h ? y0 + kColRows : map_h;
  if (x >= W || y0 >= map_h) return;
  const uint8_t* top = src + size_t(y0) * pitch + x;
  uint64_t si[4] = {0, 0, 0, 0}, sq[4] = {0, 0, 0, 0};
  fold_by_eight(0, h, [&](int j) { return ldg(reinterpret_cast<const uint32_t*>(top + size_t(j) * pitch)); },
                [&](uint32_t wv) { add_columns(wv, si, sq); });
  const uint8_t* bottom = top + size_t(h) * pitch;
  for (int y = y0;; ++y, top += pitch, bottom += pitch) {
    const size_t o = size_t(y) * ld + x;
    PARVIS_UNROLL
    for (int k = 0; k < 4; ++k) {
      ci[o + k] = si[k];
      cq[o + k] = sq[k];
    }
    if (y + 1 >= y1) break;
    const uint32_t a = ldg(reinterpret_cast<const uint32_t*>(bottom));  // row y + h comes in
    const uint32_t b = ldg(reinterpret_cast<const uint32_t*>(top));     // row y goes out
    PARVIS_UNROLL
    for (int k = 0; k < 4; ++k) {
      const uint32_t pa = (a >> (8 * k)) & 0xffu, pb = (b >> (8 * k)) & 0xffu;
      si[k] += pa;
      si[k] -= pb;
      sq[k] += pa * pa;
      sq[k] -= pb * pb;
    }
  }
}

// W3, one position: ΣI and ΣI² from the row prefixes P (P(y, x + w) − P(y, x)), ΣI·T from the
// exact SSD (SSD = ΣI² − 2ΣI·T + ΣT², so ΣI·T = (ΣI² + ΣT² − SSD) / 2 exactly), then ncc.hpp's
// expression: seq's bits.
__host__ __device__ inline double score_at(const uint64_t* pi, const uint64_t* pq, int ld,
                                           uint64_t ssd, int w, int x, int y, const Consts& c) {
  const size_t r = size_t(y) * ld;
  const uint64_t si = pi[r + x + w] - pi[r + x], sii = pq[r + x + w] - pq[r + x];
  const uint64_t sit = (sii + c.stt - ssd) / 2;
  return ncc::score(c.coeff, c.n, si, sii, sit, c.st, c.stt);
}

}  // namespace parvis::match::opt::normed
