// The direct SSD and SAD kernels of the simd and omp versions (seed 000): a template slid
// over a source, one exact integer score per position. Shared by simd.cpp (one thread) and
// omp.cpp (result rows spread over threads): each version only decides who computes which
// result rows.
//
// Two loop orders, each where it is best:
//
//   one position at a time (the seed's loop) — walk the template row 16 pixels per step:
//     SSD: widen the bytes to 16 bits, subtract, _mm_madd_epi16 squares and adds pairs
//          into 32-bit lanes, flushed into 64-bit lanes before they could overflow
//          (16 → 32 → 64-bit accumulation), so any template that fits in memory is exact.
//     SAD: one _mm_sad_epu8 (psadbw) per 16 pixels, straight into 64-bit lanes.
//     Used for SAD maps and to re-score single FFT candidates exactly.
//
//   many positions at a time (SSD maps) — the same madd, vectorised across 8 neighbouring
//     positions instead of along the template row: the source is stored as pairs
//     (I[x], I[x+1]) of 16-bit words, so one load gives 8 positions the two pixels that
//     meet one template pair (T[i], T[i+1]); subtract the broadcast pair, madd, add. No
//     horizontal sums, no lanes wasted on narrow templates (a 16×16 template keeps every
//     lane busy), 32 positions in registers per block, 32 → 64-bit flush as above.
//
// Each comes as scalar (here: the reference the vector loops must equal, and the path off x86)
// and as ONE vector definition in simd_kernels.inc over the ISA ops of cpu/simd.hpp,
// compiled by cpu_kernels.cpp for SSE2 (always there on x86-64) and AVX2 (chosen at run time
// with __builtin_cpu_supports; target("avx2"), so the Makefile needs no special flags).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/image.hpp"

#include "cpu/simd.hpp"

namespace parvis::match::kernels {

// ------------------------------------------------------------------------- data layouts
// The source as bytes, each row followed by zero slack: the 16-byte loads of the
// one-position loop may run up to 15 bytes past a window's last pixel and must stay in
// the buffer (those bytes are masked out and never change a score).
constexpr int kSlack = 32;

struct PaddedSource {
  int width = 0, height = 0;
  size_t stride = 0;
  std::vector<uint8_t> pixels;
  const uint8_t* row(int y) const { return pixels.data() + size_t(y) * stride; }
};

inline void pad_source(const Image& gray, PaddedSource* out) {
  out->width = gray.width;
  out->height = gray.height;
  out->stride = (size_t(gray.width) + kSlack + 63) & ~size_t(63);
  out->pixels.assign(out->stride * size_t(gray.height) + kSlack, 0);
  for (int y = 0; y < gray.height; ++y)
    std::memcpy(out->pixels.data() + size_t(y) * out->stride, gray.row(y), size_t(gray.width));
}

// The source as pairs for the many-positions loop: at each x, (I[x], I[x+1]) as two 16-bit
// words of one 32-bit value (I[width] reads as 0). Rows are padded so that a block of
// positions past the map's right edge still reads inside the row (those scores are
// computed and dropped).
constexpr int kBlock = 32;  // positions per block of the many-positions loop (AVX2: 4 × 8)

struct PairedSource {
  int width = 0, height = 0;
  size_t stride = 0;  // uint32 elements per row
  std::vector<uint32_t> pairs;
  const uint32_t* row(int y) const { return pairs.data() + size_t(y) * stride; }
};

inline void pair_source_alloc(int width, int height, PairedSource* out) {
  out->width = width;
  out->height = height;
  out->stride = (size_t(width) + kBlock + 16) & ~size_t(15);
  out->pairs.resize(out->stride * size_t(height));
}
// Fills rows [y0, y1); versions may split the rows over threads.
inline void pair_source_rows(const Image& gray, int y0, int y1, PairedSource* out) {
  const int w = gray.width;
  for (int y = y0; y < y1; ++y) {
    const uint8_t* s = gray.row(y);
    uint32_t* d = out->pairs.data() + size_t(y) * out->stride;
    for (int x = 0; x + 1 < w; ++x) d[x] = uint32_t(s[x]) | uint32_t(s[x + 1]) << 16;
    d[w - 1] = s[w - 1];
    std::fill(d + w, d + out->stride, 0u);
  }
}

// The template in the forms the loops read.
struct TemplateRows {
  int w = 0, h = 0;
  // One-position loop: rows zero-padded to a multiple of 16 (`stride` elements), as bytes
  // (SAD) and 16-bit words (SSD); w / 16 full steps, then a last step of `tail` pixels
  // whose source bytes are ANDed with `tail_mask`.
  size_t stride = 0;
  int full_steps = 0;
  int tail = 0;
  std::vector<uint8_t> bytes;
  std::vector<int16_t> words;
  alignas(16) uint8_t tail_mask[16] = {};
  alignas(32) uint16_t tail_mask16[16] = {};   // the same as 16-bit lanes (0xFFFF for i < tail)
  alignas(16) uint8_t narrow_mask[16] = {};  // 0xFF for i < w: a whole row when w <= 16
  // Many-positions loop: each row as (w + 1) / 2 pairs (T[2p], T[2p+1]) of 16-bit words;
  // an odd width leaves the last pair's second word 0, and that lane is masked.
  int pairs = 0;
  std::vector<uint32_t> word_pairs;
  // --mask (mask.hpp): the template above is ANDed with it (an ignored pixel reads 0), and the
  // masked kernels AND the source with it too, so an ignored pixel adds 0 to every sum. As
  // bytes 0xFF / 0 (`stride` per row, 0 past w: it covers the tail too; without a mask 0xFF
  // for every pixel, which the scalar loops use), as 16-bit words 0xFFFF / 0, and per pair
  // two such words (masked templates only).
  bool masked = false;
  std::vector<uint8_t> mask_bytes;
  std::vector<uint16_t> mask_words;
  std::vector<uint32_t> mask_pairs;
};

// `mask`: none (nullptr), or a grey image of the template's size whose nonzero pixels count.
inline void prepare_template(const Image& gray, TemplateRows* t, const Image* mask = nullptr) {
  const int w = gray.width, h = gray.height;
  t->w = w;
  t->h = h;
  t->stride = (size_t(w) + 15) & ~size_t(15);
  t->full_steps = w / 16;
  t->tail = w % 16;
  t->bytes.assign(t->stride * size_t(h), 0);
  t->words.assign(t->stride * size_t(h), 0);
  t->pairs = (w + 1) / 2;
  t->word_pairs.assign(size_t(t->pairs) * size_t(h), 0);
  t->masked = mask != nullptr;
  t->mask_bytes.assign(t->stride * size_t(h), 0);
  t->mask_words.assign(t->masked ? t->stride * size_t(h) : 0, 0);
  t->mask_pairs.assign(t->masked ? size_t(t->pairs) * size_t(h) : 0, 0);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const bool counts = !mask || mask->row(y)[x] != 0;
      t->mask_bytes[size_t(y) * t->stride + size_t(x)] = counts ? 0xFF : 0x00;
      if (t->masked && counts) {
        t->mask_words[size_t(y) * t->stride + size_t(x)] = 0xFFFF;
        t->mask_pairs[size_t(y) * size_t(t->pairs) + size_t(x / 2)] |= uint32_t(0xFFFF) << (16 * (x & 1));
      }
      const uint8_t v = counts ? gray.row(y)[x] : 0;
      t->bytes[size_t(y) * t->stride + size_t(x)] = v;
      t->words[size_t(y) * t->stride + size_t(x)] = int16_t(v);
      t->word_pairs[size_t(y) * size_t(t->pairs) + size_t(x / 2)] |= uint32_t(v) << (16 * (x & 1));
    }
  for (int i = 0; i < 16; ++i) {
    t->tail_mask[i] = i < t->tail ? 0xFF : 0x00;
    t->tail_mask16[i] = i < t->tail ? 0xFFFF : 0x0000;
    t->narrow_mask[i] = i < w ? 0xFF : 0x00;
  }
}

// The kernel types: one position's score, or one whole result row (map_width scores).
using ScoreAtFn = uint64_t (*)(const PaddedSource& s, const TemplateRows& t, int x, int y);
using SadRowFn = void (*)(const PaddedSource& s, const TemplateRows& t, int y, uint64_t* out);
using SsdRowFn = void (*)(const PairedSource& p, const TemplateRows& t, int y, uint64_t* out);

// ------------------------------------------------------------------------- scalar
// The reference loops, as plain as seq's.
// One position's SSD against the stored template, whole window: on a masked template the
// unmasked SSD against T & b, as the vector ssd_at (what the masked FFT method re-scores).
inline uint64_t ssd_at_scalar(const PaddedSource& s, const TemplateRows& t, int x, int y) {
  uint64_t sum = 0;
  for (int j = 0; j < t.h; ++j) {
    const uint8_t* src = s.row(y + j) + x;
    const uint8_t* tpl = t.bytes.data() + size_t(j) * t.stride;
    for (int i = 0; i < t.w; ++i) {
      const int d = int(src[i]) - int(tpl[i]);
      sum += uint64_t(d * d);
    }
  }
  return sum;
}

// The rows below: a masked template's ignored pixels read 0 on both sides (mask_bytes is 0xFF
// everywhere without a mask), one definition for both.
inline uint64_t sad_at_scalar(const PaddedSource& s, const TemplateRows& t, int x, int y) {
  uint64_t sum = 0;
  for (int j = 0; j < t.h; ++j) {
    const uint8_t* src = s.row(y + j) + x;
    const uint8_t* tpl = t.bytes.data() + size_t(j) * t.stride;
    const uint8_t* m = t.mask_bytes.data() + size_t(j) * t.stride;
    for (int i = 0; i < t.w; ++i) {
      const uint8_t a = src[i] & m[i];
      sum += uint64_t(a > tpl[i] ? a - tpl[i] : tpl[i] - a);
    }
  }
  return sum;
}

inline void sad_row_scalar(const PaddedSource& s, const TemplateRows& t, int y, uint64_t* out) {
  const int map_w = s.width - t.w + 1;
  for (int x = 0; x < map_w; ++x) out[x] = sad_at_scalar(s, t, x, y);
}

// SSD from the paired layout (the low word of each pair is the pixel itself).
inline void ssd_row_scalar(const PairedSource& p, const TemplateRows& t, int y, uint64_t* out) {
  const int map_w = p.width - t.w + 1;
  for (int x = 0; x < map_w; ++x) {
    uint64_t sum = 0;
    for (int j = 0; j < t.h; ++j) {
      const uint32_t* src = p.row(y + j) + x;
      const uint8_t* tpl = t.bytes.data() + size_t(j) * t.stride;
      const uint8_t* m = t.mask_bytes.data() + size_t(j) * t.stride;
      for (int i = 0; i < t.w; ++i) {
        const int d = int(src[i] & m[i]) - int(tpl[i]);  // the pixel is the pair's low word
        sum += uint64_t(d * d);
      }
    }
    out[x] = sum;
  }
}

// How many steps a 32-bit lane takes before it could pass 2^32 - 1 (then it is flushed
// into 64 bits). One-position step (16 pixels): at most 4 squares per lane (SSE2: 2 madds of
// 8 pixels into 4 lanes; AVX2: 1 madd of 16 into 8 lanes, 2 per lane: the same limit is simply
// safe) → 16512 steps. Many-positions step: 2 squares per lane → 33025 template pairs.
constexpr int kSteps32 = int(0xFFFFFFFFu / (4u * 255u * 255u));
constexpr int kPairs32 = int(0xFFFFFFFFu / (2u * 255u * 255u));

// ------------------------------------------------------------------------- dispatch
struct Kernels {
  const char* isa;     // "avx2", "sse2" or "scalar"
  ScoreAtFn ssd_at;    // one position (re-scoring FFT candidates)
  ScoreAtFn sad_at;
  SsdRowFn ssd_row;    // whole result rows (maps)
  SadRowFn sad_row;
  // The same for a masked template (TemplateRows::masked): the source ANDed with the mask.
  // (ssd_at on a masked template is the unmasked SSD against T & b: what the FFT method of
  // cpu_mask_fft.hpp re-scores.)
  SsdRowFn ssd_row_masked;
  SadRowFn sad_row_masked;
};

// The widest kernels this CPU runs (simd::best_isa(): PARVIS_SIMD=sse2 or =scalar in the
// environment caps the choice, so tests and benchmarks can run the narrower paths).
Kernels pick_kernels();  // cpu_kernels.cpp

}  // namespace parvis::match::kernels
