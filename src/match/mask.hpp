// Template-matching masks (--mask M, issue 14): a grey image of the template's size whose
// nonzero pixels count and whose zeros are ignored, for SSD, SAD, NCC and ccorr-normed.
// Every score is the unmasked one with each sum taken over the counted pixels only:
//   SSD = Σ m·(I − T)²,  SAD = Σ m·|I − T|,
//   NCC / ccorr-normed: ncc.hpp's expression with n = Σ m and ΣI, ΣI², ΣI·T, ΣT, ΣT² over
//   the counted pixels (m ∈ {0, 1}).
// With b = 0xFF where m counts and 0 elsewhere, every one of those sums is the unmasked sum of
// the ANDed pixels (I & b, T & b): an ignored pixel adds 0 to each. The kernels of every version
// use that form — one AND of the source with the mask — and this file holds the direct
// definition (seq, score_at, subpixel), the checks and the template's part. DESIGN.md "Masks".
#pragma once
#include <cstdint>
#include <vector>

#include "match/match_common.hpp"

namespace parvis::match::mask {

inline bool active(const Params& p) { return !p.mask.empty(); }

// The mask of `params` against the template: one channel, the template's size, at least one
// counting pixel. Bad input (exit 2); Ok when there is no mask.
Status check(const Params& params, int template_width, int template_height);

// The mask as bytes 0xFF (counts) / 0x00 (ignored), and the template ANDed with it.
Image binary(const Image& mask);
Image apply(const Image& gray_template, const Image& binary_mask);

// The template's part of the sums over the counted pixels: n = Σ m, ΣT, ΣT².
TemplateSums template_sums(const Image& gray_template, const Image& mask);

// A maximal run of mask row j whose pixels all count (`counted`) or are all ignored: columns
// [i0, i1). The FFT methods sum Σ m·I and Σ m·I² over the counted runs from prefix sums of the
// source rows (cpu_mask_fft.hpp, cuda/match/opt_mask_fft.cu); cuda-opt also over the ignored.
struct Run {
  int j, i0, i1;
};
std::vector<Run> runs_of(const Image& mask, bool counted = true);

// ---- the direct definition (seq; score_at and subpixel on every version) -----------------
// The SSD or SAD of the window at (x, y) over the counted pixels.
template <Metric M>
inline uint64_t cost_at(const Image& src, const Image& tpl, const Image& mask, int x, int y) {
  uint64_t sum = 0;
  for (int j = 0; j < tpl.height; ++j) {
    const uint8_t* s = src.row(y + j) + x;
    const uint8_t* t = tpl.row(j);
    const uint8_t* m = mask.row(j);
    for (int i = 0; i < tpl.width; ++i)
      if (m[i]) sum += pixel_cost<M>(int(s[i]) - int(t[i]));
  }
  return sum;
}

// ΣI, ΣI², ΣI·T of the window at (x, y) over the counted pixels.
inline void sums_at(const Image& src, const Image& tpl, const Image& mask, int x, int y,
                    uint64_t* si, uint64_t* sii, uint64_t* sit) {
  uint64_t a = 0, b = 0, c = 0;
  for (int j = 0; j < tpl.height; ++j) {
    const uint8_t* s = src.row(y + j) + x;
    const uint8_t* t = tpl.row(j);
    const uint8_t* m = mask.row(j);
    for (int i = 0; i < tpl.width; ++i)
      if (m[i]) a += s[i], b += uint32_t(s[i]) * s[i], c += uint32_t(s[i]) * t[i];
  }
  *si = a, *sii = b, *sit = c;
}

// The rank (Position::score) of the window at (x, y): the exact SSD / SAD, or the normed key.
uint64_t rank_at(const Image& src, const Image& tpl, const Image& mask, Metric metric, int x,
                 int y);

// One row of normed scores from the masked sums of each position: `scores` holds the masked
// SSD on entry (ΣI·T = (ΣI² + ΣT² − SSD) / 2, exact) and the rank keys on return; si / sii the
// masked ΣI and ΣI²; `map_row` (when not null) gets the doubles.
void normed_row(Metric metric, const TemplateSums& ts, const uint64_t* si, const uint64_t* sii,
                int map_width, uint64_t* scores, double* map_row);

}  // namespace parvis::match::mask
