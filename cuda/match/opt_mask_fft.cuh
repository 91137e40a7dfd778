// cuda-opt's masked FFT / NTT method (opt_mask_fft.cu; DESIGN.md "Masks"): the per-position
// arithmetic, __host__ __device__ so that tests/cuda/mask_fft_emulate.cu runs it on the host
// against seq's definition (nvcc, no GPU).
//
// With b = 0xFF where the mask counts, the unmasked FFT / NTT pipeline run on T & b gives
// SSD'(x, y) = ΣI²(whole window) − 2 ΣI·(T & b) + Σ(T & b)². The mask's row runs (mask::runs_of:
// maximal horizontal segments of counted pixels, and of ignored ones) give, from the row prefix
// sums of I and I², Σ m·I, Σ m·I² and Σ (1 − m)·I² of each window: R operations per position for
// R runs. Then ΣI·T over the counted pixels = (Σ m·I² + Σ(1 − m)·I² + ΣT'² − SSD') / 2 exactly,
// and every masked score follows from the exact sums (cuda_mask::score_word, the masked direct
// kernel's own ending).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "match/mask.hpp"
#include "match/mask_kernels.cuh"

namespace parvis::match::opt::mask_fft {

// Row prefix sums of the source, (Σ_{x'<x} I(y, x'), Σ_{x'<x} I(y, x')²) modulo 2^32 at
// pre[y * ld + x], x = 0..W. A run's sums are differences of two entries: exact while a run's
// true sum stays below 2^32 (runs narrower than 66052 pixels: 255² w < 2^32; mask_fft_fits).
// The host's version (the emulation); the device builds the same words with a block scan.
inline void prefix_row(const uint8_t* row, int W, uint2* pre) {
  uint32_t a = 0, b = 0;
  for (int x = 0; x < W; ++x) {
    pre[x] = make_uint2(a, b);
    a += row[x];
    b += uint32_t(row[x]) * row[x];
  }
  pre[W] = make_uint2(a, b);
}

// The window sums of one position over the mask's runs: runs[0, counted) count; runs[counted,
// total) are the ignored ones (mask::runs_of(mask, false)), or with `whole_rows` the template's
// h whole rows (fewer where the mask has more than h ignored runs: Σ (1 − m)·I² is then the
// whole window's ΣI² less Σ m·I²).
struct Sums {
  uint64_t si, sii;  // Σ m·I, Σ m·I²
  uint64_t zii;      // Σ (1 − m)·I²
};
__host__ __device__ inline Sums run_sums(const uint2* pre, size_t ld, const mask::Run* runs,
                                         int counted, int total, bool whole_rows, int x, int y) {
  Sums s{0, 0, 0};
  for (int r = 0; r < counted; ++r) {
    const mask::Run run = runs[r];
    const uint2* p = pre + size_t(y + run.j) * ld + x;
    const uint2 a = p[run.i0], b = p[run.i1];
    s.si += uint32_t(b.x - a.x);
    s.sii += uint32_t(b.y - a.y);
  }
  for (int r = counted; r < total; ++r) {
    const mask::Run run = runs[r];
    const uint2* p = pre + size_t(y + run.j) * ld + x;
    s.zii += uint32_t(p[run.i1].y - p[run.i0].y);
  }
  if (whole_rows) s.zii -= s.sii;
  return s;
}

// The template's part: n = Σ m, ΣT, ΣT² over the counted pixels (= Σ(T & b)²), and the kind
// (cuda_mask::kind_of: 0 SSD, 2 NCC, 3 ccorr-normed; SAD has no FFT form).
struct Consts {
  uint64_t n, st, stt;
  int kind;
};

// The score word (cuda_mask::score_word: the SSD, or the normed double's bits) of a position
// whose masked ΣI·T is `sit`: masked SSD = Σ m·I² − 2 ΣI·T + ΣT².
__host__ __device__ inline uint64_t word_of(uint64_t sit, const Sums& s, const Consts& c) {
  return cuda_mask::score_word(c.kind, s.sii + c.stt - 2 * sit, c.n, s.si, s.sii, sit, c.st, c.stt);
}

// The exact masked score word from the exact SSD' of T & b (the NTT's map).
__host__ __device__ inline uint64_t exact_word(uint64_t ssd_whole, const Sums& s, const Consts& c) {
  return word_of((s.sii + s.zii + c.stt - ssd_whole) / 2, s, c);
}

// The exact masked score word from the exact masked SSD (the re-scored candidates).
__host__ __device__ inline uint64_t word_from_masked_ssd(uint64_t ssd, const Sums& s,
                                                         const Consts& c) {
  return word_of((s.sii + c.stt - ssd) / 2, s, c);
}

// From cuFFT's approximate SSD' (|approx − exact| <= e): rank keys *opt <= exact rank <= *pess.
// ΣI·T = (ΣI²(window) + ΣT² − SSD') / 2 lies in [lo, hi] (widened by one unit for the doubles'
// rounding here, and capped by Σ m·2IT <= Σ m·(I² + T²)); every masked score is monotone in
// ΣI·T with the window sums fixed (SSD decreasing; ncc::score non-decreasing: its numerator
// grows with ΣI·T over a positive denominator, and each rounding and the clamp are monotone), so
// the ends' ranks bound the exact rank.
__host__ __device__ inline void rank_bounds(double approx, double e, const Sums& s,
                                            const Consts& c, uint64_t* opt, uint64_t* pess) {
  const double whole = double(s.sii + s.zii + c.stt);  // < 2^53: exact
  const double lo_d = floor((whole - approx - e) * 0.5) - 1.0;
  const double hi_d = ceil((whole - approx + e) * 0.5) + 1.0;
  const uint64_t cap = (s.sii + c.stt) / 2;
  uint64_t lo = lo_d <= 0.0 ? 0 : uint64_t(lo_d), hi = hi_d <= 0.0 ? 0 : uint64_t(hi_d);
  lo = lo < cap ? lo : cap;
  hi = hi < cap ? hi : cap;
  const bool normed = c.kind >= 2;
  *opt = cuda_mask::rank_of_word(normed, word_of(hi, s, c));   // the most ΣI·T: the best end
  *pess = cuda_mask::rank_of_word(normed, word_of(lo, s, c));
}

}  // namespace parvis::match::opt::mask_fft
