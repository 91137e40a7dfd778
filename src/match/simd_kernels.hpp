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
// Each comes as scalar (the reference the vector loops must equal, and the path off x86),
// SSE2 (always there on x86-64) and AVX2 (chosen at run time with __builtin_cpu_supports;
// compiled through target("avx2"), so the Makefile needs no special flags).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/image.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PARVIS_MATCH_X86 1
#else
#define PARVIS_MATCH_X86 0
#endif

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
  alignas(16) uint8_t narrow_mask[16] = {};  // 0xFF for i < w: a whole row when w <= 16
  // Many-positions loop: each row as (w + 1) / 2 pairs (T[2p], T[2p+1]) of 16-bit words;
  // an odd width leaves the last pair's second word 0, and that lane is masked.
  int pairs = 0;
  std::vector<uint32_t> word_pairs;
};

inline void prepare_template(const Image& gray, TemplateRows* t) {
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
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const uint8_t v = gray.row(y)[x];
      t->bytes[size_t(y) * t->stride + size_t(x)] = v;
      t->words[size_t(y) * t->stride + size_t(x)] = int16_t(v);
      t->word_pairs[size_t(y) * size_t(t->pairs) + size_t(x / 2)] |= uint32_t(v) << (16 * (x & 1));
    }
  for (int i = 0; i < 16; ++i) {
    t->tail_mask[i] = i < t->tail ? 0xFF : 0x00;
    t->narrow_mask[i] = i < w ? 0xFF : 0x00;
  }
}

// The kernel types: one position's score, or one whole result row (map_width scores).
using ScoreAtFn = uint64_t (*)(const PaddedSource& s, const TemplateRows& t, int x, int y);
using SadRowFn = void (*)(const PaddedSource& s, const TemplateRows& t, int y, uint64_t* out);
using SsdRowFn = void (*)(const PairedSource& p, const TemplateRows& t, int y, uint64_t* out);

// ------------------------------------------------------------------------- scalar
// The reference loops, as plain as seq's.
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

inline uint64_t sad_at_scalar(const PaddedSource& s, const TemplateRows& t, int x, int y) {
  uint64_t sum = 0;
  for (int j = 0; j < t.h; ++j) {
    const uint8_t* src = s.row(y + j) + x;
    const uint8_t* tpl = t.bytes.data() + size_t(j) * t.stride;
    for (int i = 0; i < t.w; ++i) sum += uint64_t(src[i] > tpl[i] ? src[i] - tpl[i] : tpl[i] - src[i]);
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
      for (int i = 0; i < t.w; ++i) {
        const int d = int(src[i] & 0xFFFF) - int(tpl[i]);
        sum += uint64_t(d * d);
      }
    }
    out[x] = sum;
  }
}

#if PARVIS_MATCH_X86
// How many steps a 32-bit lane takes before it could pass 2^32 - 1 (then it is flushed
// into 64 bits). One-position SSE2 step: 4 squares per lane (4 * 255^2 = 260100) → 16512
// steps (AVX2 adds 2 per lane per step; the same limit is simply safe). Many-positions
// step: 2 squares per lane → 33025 template pairs.
constexpr int kSteps32 = int(0xFFFFFFFFu / (4u * 255u * 255u));
constexpr int kPairs32 = int(0xFFFFFFFFu / (2u * 255u * 255u));

// ------------------------------------------------------------------------- SSE2
// 16 pixels: squared differences, added in pairs into the four 32-bit lanes of acc.
static inline __m128i ssd16_sse2(__m128i src8, const int16_t* tpl, __m128i acc) {
  const __m128i zero = _mm_setzero_si128();
  __m128i lo = _mm_sub_epi16(_mm_unpacklo_epi8(src8, zero), _mm_loadu_si128((const __m128i*)tpl));
  __m128i hi = _mm_sub_epi16(_mm_unpackhi_epi8(src8, zero), _mm_loadu_si128((const __m128i*)(tpl + 8)));
  acc = _mm_add_epi32(acc, _mm_madd_epi16(lo, lo));
  return _mm_add_epi32(acc, _mm_madd_epi16(hi, hi));
}
// Four 32-bit lanes (read as unsigned) added into two 64-bit lanes.
static inline __m128i widen_add_sse2(__m128i acc64, __m128i acc32) {
  const __m128i zero = _mm_setzero_si128();
  acc64 = _mm_add_epi64(acc64, _mm_unpacklo_epi32(acc32, zero));
  return _mm_add_epi64(acc64, _mm_unpackhi_epi32(acc32, zero));
}
static inline uint64_t hsum64_sse2(__m128i v) {
  return uint64_t(_mm_cvtsi128_si64(v)) + uint64_t(_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)));
}

inline uint64_t ssd_at_sse2(const PaddedSource& s, const TemplateRows& t, int x, int y) {
  const __m128i mask = _mm_load_si128((const __m128i*)t.tail_mask);
  __m128i acc64 = _mm_setzero_si128(), acc32 = _mm_setzero_si128();
  int steps = 0;  // steps in acc32 since its last flush
  for (int j = 0; j < t.h; ++j) {
    const uint8_t* src = s.row(y + j) + x;
    const int16_t* tpl = t.words.data() + size_t(j) * t.stride;
    int k = 0;
    while (k < t.full_steps) {
      if (steps == kSteps32) acc64 = widen_add_sse2(acc64, acc32), acc32 = _mm_setzero_si128(), steps = 0;
      const int n = std::min(t.full_steps - k, kSteps32 - steps);
      for (const int end = k + n; k < end; ++k)
        acc32 = ssd16_sse2(_mm_loadu_si128((const __m128i*)(src + 16 * k)), tpl + 16 * k, acc32);
      steps += n;
    }
    if (t.tail) {
      if (steps == kSteps32) acc64 = widen_add_sse2(acc64, acc32), acc32 = _mm_setzero_si128(), steps = 0;
      // Past the template's width the source is masked to 0 and the template padded with 0.
      const __m128i src8 = _mm_and_si128(_mm_loadu_si128((const __m128i*)(src + 16 * k)), mask);
      acc32 = ssd16_sse2(src8, tpl + 16 * k, acc32);
      ++steps;
    }
  }
  return hsum64_sse2(widen_add_sse2(acc64, acc32));
}

inline uint64_t sad_at_sse2(const PaddedSource& s, const TemplateRows& t, int x, int y) {
  const __m128i mask = _mm_load_si128((const __m128i*)t.tail_mask);
  __m128i acc = _mm_setzero_si128();  // psadbw sums into 64-bit lanes: nothing to flush
  for (int j = 0; j < t.h; ++j) {
    const uint8_t* src = s.row(y + j) + x;
    const uint8_t* tpl = t.bytes.data() + size_t(j) * t.stride;
    int k = 0;
    for (; k < t.full_steps; ++k)
      acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_loadu_si128((const __m128i*)(src + 16 * k)),
                                            _mm_loadu_si128((const __m128i*)(tpl + 16 * k))));
    if (t.tail) {
      const __m128i src8 = _mm_and_si128(_mm_loadu_si128((const __m128i*)(src + 16 * k)), mask);
      acc = _mm_add_epi64(acc, _mm_sad_epu8(src8, _mm_loadu_si128((const __m128i*)(tpl + 16 * k))));
    }
  }
  return hsum64_sse2(acc);
}

inline void sad_row_sse2(const PaddedSource& s, const TemplateRows& t, int y, uint64_t* out) {
  const int map_w = s.width - t.w + 1;
  for (int x = 0; x < map_w; ++x) out[x] = sad_at_sse2(s, t, x, y);
}

// Adds four unsigned 32-bit lanes into sums[0..3].
static inline void flush4_sse2(__m128i acc32, uint64_t* sums) {
  const __m128i zero = _mm_setzero_si128();
  __m128i lo = _mm_loadu_si128((const __m128i*)sums), hi = _mm_loadu_si128((const __m128i*)(sums + 2));
  _mm_storeu_si128((__m128i*)sums, _mm_add_epi64(lo, _mm_unpacklo_epi32(acc32, zero)));
  _mm_storeu_si128((__m128i*)(sums + 2), _mm_add_epi64(hi, _mm_unpackhi_epi32(acc32, zero)));
}

// Many positions: blocks of 16 (4 registers × 4 positions).
inline void ssd_row_sse2(const PairedSource& p, const TemplateRows& t, int y, uint64_t* out) {
  const int map_w = p.width - t.w + 1;
  const int full = t.w / 2;
  const __m128i low_word = _mm_set1_epi32(0xFFFF);
  for (int x0 = 0; x0 < map_w; x0 += 16) {
    alignas(16) uint64_t sums[16] = {};
    __m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
    int used = 0;  // pairs in a0..a3 since their last flush
    for (int j = 0; j <= t.h; ++j) {
      if (j == t.h || used + t.pairs > kPairs32) {  // flush before the lanes could overflow
        flush4_sse2(a0, sums), flush4_sse2(a1, sums + 4), flush4_sse2(a2, sums + 8), flush4_sse2(a3, sums + 12);
        a0 = a1 = a2 = a3 = _mm_setzero_si128();
        used = 0;
        if (j == t.h) break;
      }
      const uint32_t* src = p.row(y + j) + x0;
      const uint32_t* tp = t.word_pairs.data() + size_t(j) * size_t(t.pairs);
      int q = 0;
      for (; q < full; ++q) {
        const __m128i tq = _mm_set1_epi32(int(tp[q]));
        const uint32_t* s = src + 2 * q;
        __m128i d0 = _mm_sub_epi16(_mm_loadu_si128((const __m128i*)s), tq);
        __m128i d1 = _mm_sub_epi16(_mm_loadu_si128((const __m128i*)(s + 4)), tq);
        __m128i d2 = _mm_sub_epi16(_mm_loadu_si128((const __m128i*)(s + 8)), tq);
        __m128i d3 = _mm_sub_epi16(_mm_loadu_si128((const __m128i*)(s + 12)), tq);
        a0 = _mm_add_epi32(a0, _mm_madd_epi16(d0, d0));
        a1 = _mm_add_epi32(a1, _mm_madd_epi16(d1, d1));
        a2 = _mm_add_epi32(a2, _mm_madd_epi16(d2, d2));
        a3 = _mm_add_epi32(a3, _mm_madd_epi16(d3, d3));
      }
      if (q < t.pairs) {  // odd width: the pair's second pixel lies outside the window
        const __m128i tq = _mm_set1_epi32(int(tp[q]));
        const uint32_t* s = src + 2 * q;
        __m128i d0 = _mm_sub_epi16(_mm_loadu_si128((const __m128i*)s), tq);
        __m128i d1 = _mm_sub_epi16(_mm_loadu_si128((const __m128i*)(s + 4)), tq);
        __m128i d2 = _mm_sub_epi16(_mm_loadu_si128((const __m128i*)(s + 8)), tq);
        __m128i d3 = _mm_sub_epi16(_mm_loadu_si128((const __m128i*)(s + 12)), tq);
        a0 = _mm_add_epi32(a0, _mm_madd_epi16(d0, _mm_and_si128(d0, low_word)));
        a1 = _mm_add_epi32(a1, _mm_madd_epi16(d1, _mm_and_si128(d1, low_word)));
        a2 = _mm_add_epi32(a2, _mm_madd_epi16(d2, _mm_and_si128(d2, low_word)));
        a3 = _mm_add_epi32(a3, _mm_madd_epi16(d3, _mm_and_si128(d3, low_word)));
      }
      used += t.pairs;
    }
    std::memcpy(out + x0, sums, sizeof(uint64_t) * size_t(std::min(16, map_w - x0)));
  }
}

// ------------------------------------------------------------------------- AVX2
// The same loops with 256-bit registers. Everything called from an AVX2 function carries
// target("avx2") too (and no lambdas), or the intrinsics could not be inlined.
#define PARVIS_AVX2 __attribute__((target("avx2")))

// 16 pixels in one register: vpmovzxbw widens 16 bytes to 16 words.
PARVIS_AVX2 static inline __m256i ssd16_avx2(__m128i src8, const int16_t* tpl, __m256i acc) {
  const __m256i d = _mm256_sub_epi16(_mm256_cvtepu8_epi16(src8), _mm256_loadu_si256((const __m256i*)tpl));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(d, d));
}
PARVIS_AVX2 static inline __m256i widen_add_avx2(__m256i acc64, __m256i acc32) {
  const __m256i zero = _mm256_setzero_si256();
  acc64 = _mm256_add_epi64(acc64, _mm256_unpacklo_epi32(acc32, zero));
  return _mm256_add_epi64(acc64, _mm256_unpackhi_epi32(acc32, zero));
}
PARVIS_AVX2 static inline uint64_t hsum64_avx2(__m256i v) {
  return hsum64_sse2(_mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}

PARVIS_AVX2 inline uint64_t ssd_at_avx2(const PaddedSource& s, const TemplateRows& t, int x, int y) {
  const __m128i mask = _mm_load_si128((const __m128i*)t.tail_mask);
  __m256i acc64 = _mm256_setzero_si256(), acc32 = _mm256_setzero_si256();
  int steps = 0;
  for (int j = 0; j < t.h; ++j) {
    const uint8_t* src = s.row(y + j) + x;
    const int16_t* tpl = t.words.data() + size_t(j) * t.stride;
    int k = 0;
    while (k < t.full_steps) {
      if (steps == kSteps32) acc64 = widen_add_avx2(acc64, acc32), acc32 = _mm256_setzero_si256(), steps = 0;
      const int n = std::min(t.full_steps - k, kSteps32 - steps);
      for (const int end = k + n; k < end; ++k)
        acc32 = ssd16_avx2(_mm_loadu_si128((const __m128i*)(src + 16 * k)), tpl + 16 * k, acc32);
      steps += n;
    }
    if (t.tail) {
      if (steps == kSteps32) acc64 = widen_add_avx2(acc64, acc32), acc32 = _mm256_setzero_si256(), steps = 0;
      const __m128i src8 = _mm_and_si128(_mm_loadu_si128((const __m128i*)(src + 16 * k)), mask);
      acc32 = ssd16_avx2(src8, tpl + 16 * k, acc32);
      ++steps;
    }
  }
  return hsum64_avx2(widen_add_avx2(acc64, acc32));
}

// 32 pixels per psadbw; a leftover 16 and the masked tail in 128 bits.
PARVIS_AVX2 inline uint64_t sad_at_avx2(const PaddedSource& s, const TemplateRows& t, int x, int y) {
  const __m128i mask = _mm_load_si128((const __m128i*)t.tail_mask);
  const int steps32 = t.full_steps / 2;
  __m256i acc = _mm256_setzero_si256();
  __m128i acc16 = _mm_setzero_si128();
  for (int j = 0; j < t.h; ++j) {
    const uint8_t* src = s.row(y + j) + x;
    const uint8_t* tpl = t.bytes.data() + size_t(j) * t.stride;
    for (int k = 0; k < steps32; ++k)
      acc = _mm256_add_epi64(acc, _mm256_sad_epu8(_mm256_loadu_si256((const __m256i*)(src + 32 * k)),
                                                  _mm256_loadu_si256((const __m256i*)(tpl + 32 * k))));
    int k = 2 * steps32;
    if (k < t.full_steps) {
      acc16 = _mm_add_epi64(acc16, _mm_sad_epu8(_mm_loadu_si128((const __m128i*)(src + 16 * k)),
                                                _mm_loadu_si128((const __m128i*)(tpl + 16 * k))));
      ++k;
    }
    if (t.tail) {
      const __m128i src8 = _mm_and_si128(_mm_loadu_si128((const __m128i*)(src + 16 * k)), mask);
      acc16 = _mm_add_epi64(acc16, _mm_sad_epu8(src8, _mm_loadu_si128((const __m128i*)(tpl + 16 * k))));
    }
  }
  return hsum64_avx2(acc) + hsum64_sse2(acc16);
}

// Templates at most 16 wide (one padded row = 16 bytes): two template rows per 256-bit
// psadbw — the rows of the window in the two halves, the template's rows are contiguous.
PARVIS_AVX2 inline uint64_t sad_at_avx2_narrow(const PaddedSource& s, const TemplateRows& t, int x, int y) {
  const __m128i mask = _mm_load_si128((const __m128i*)t.narrow_mask);
  const __m256i mask2 = _mm256_broadcastsi128_si256(mask);
  const uint8_t* src = s.row(y) + x;
  const uint8_t* tpl = t.bytes.data();
  __m256i acc = _mm256_setzero_si256();
  int j = 0;
  for (; j + 1 < t.h; j += 2, src += 2 * s.stride, tpl += 32) {
    const __m256i two_rows = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i*)src)), _mm_loadu_si128((const __m128i*)(src + s.stride)), 1);
    acc = _mm256_add_epi64(acc, _mm256_sad_epu8(_mm256_and_si256(two_rows, mask2), _mm256_loadu_si256((const __m256i*)tpl)));
  }
  uint64_t last = 0;
  if (j < t.h) {
    const __m128i row = _mm_and_si128(_mm_loadu_si128((const __m128i*)src), mask);
    last = hsum64_sse2(_mm_sad_epu8(row, _mm_loadu_si128((const __m128i*)tpl)));
  }
  return hsum64_avx2(acc) + last;
}

PARVIS_AVX2 inline void sad_row_avx2(const PaddedSource& s, const TemplateRows& t, int y, uint64_t* out) {
  const int map_w = s.width - t.w + 1;
  if (t.w <= 16)
    for (int x = 0; x < map_w; ++x) out[x] = sad_at_avx2_narrow(s, t, x, y);
  else
    for (int x = 0; x < map_w; ++x) out[x] = sad_at_avx2(s, t, x, y);
}

// Adds eight unsigned 32-bit lanes into sums[0..7].
PARVIS_AVX2 static inline void flush8_avx2(__m256i acc32, uint64_t* sums) {
  const __m256i lo = _mm256_cvtepu32_epi64(_mm256_castsi256_si128(acc32));
  const __m256i hi = _mm256_cvtepu32_epi64(_mm256_extracti128_si256(acc32, 1));
  _mm256_storeu_si256((__m256i*)sums, _mm256_add_epi64(_mm256_loadu_si256((const __m256i*)sums), lo));
  _mm256_storeu_si256((__m256i*)(sums + 4), _mm256_add_epi64(_mm256_loadu_si256((const __m256i*)(sums + 4)), hi));
}

// Many positions: blocks of 32 (4 registers × 8 positions).
PARVIS_AVX2 inline void ssd_row_avx2(const PairedSource& p, const TemplateRows& t, int y, uint64_t* out) {
  const int map_w = p.width - t.w + 1;
  const int full = t.w / 2;
  const __m256i low_word = _mm256_set1_epi32(0xFFFF);
  for (int x0 = 0; x0 < map_w; x0 += kBlock) {
    alignas(32) uint64_t sums[kBlock] = {};
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    int used = 0;  // pairs in a0..a3 since their last flush
    for (int j = 0; j <= t.h; ++j) {
      if (j == t.h || used + t.pairs > kPairs32) {  // flush before the lanes could overflow
        flush8_avx2(a0, sums), flush8_avx2(a1, sums + 8), flush8_avx2(a2, sums + 16), flush8_avx2(a3, sums + 24);
        a0 = a1 = a2 = a3 = _mm256_setzero_si256();
        used = 0;
        if (j == t.h) break;
      }
      const uint32_t* src = p.row(y + j) + x0;
      const uint32_t* tp = t.word_pairs.data() + size_t(j) * size_t(t.pairs);
      int q = 0;
      for (; q < full; ++q) {
        const __m256i tq = _mm256_set1_epi32(int(tp[q]));
        const uint32_t* s = src + 2 * q;
        __m256i d0 = _mm256_sub_epi16(_mm256_loadu_si256((const __m256i*)s), tq);
        __m256i d1 = _mm256_sub_epi16(_mm256_loadu_si256((const __m256i*)(s + 8)), tq);
        __m256i d2 = _mm256_sub_epi16(_mm256_loadu_si256((const __m256i*)(s + 16)), tq);
        __m256i d3 = _mm256_sub_epi16(_mm256_loadu_si256((const __m256i*)(s + 24)), tq);
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(d0, d0));
        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(d1, d1));
        a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(d2, d2));
        a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(d3, d3));
      }
      if (q < t.pairs) {  // odd width: the pair's second pixel lies outside the window
        const __m256i tq = _mm256_set1_epi32(int(tp[q]));
        const uint32_t* s = src + 2 * q;
        __m256i d0 = _mm256_sub_epi16(_mm256_loadu_si256((const __m256i*)s), tq);
        __m256i d1 = _mm256_sub_epi16(_mm256_loadu_si256((const __m256i*)(s + 8)), tq);
        __m256i d2 = _mm256_sub_epi16(_mm256_loadu_si256((const __m256i*)(s + 16)), tq);
        __m256i d3 = _mm256_sub_epi16(_mm256_loadu_si256((const __m256i*)(s + 24)), tq);
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(d0, _mm256_and_si256(d0, low_word)));
        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(d1, _mm256_and_si256(d1, low_word)));
        a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(d2, _mm256_and_si256(d2, low_word)));
        a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(d3, _mm256_and_si256(d3, low_word)));
      }
      used += t.pairs;
    }
    std::memcpy(out + x0, sums, sizeof(uint64_t) * size_t(std::min(kBlock, map_w - x0)));
  }
}
#undef PARVIS_AVX2
#endif  // PARVIS_MATCH_X86

// ------------------------------------------------------------------------- dispatch
struct Kernels {
  const char* isa;     // "avx2", "sse2" or "scalar"
  ScoreAtFn ssd_at;    // one position (re-scoring FFT candidates)
  ScoreAtFn sad_at;
  SsdRowFn ssd_row;    // whole result rows (maps)
  SadRowFn sad_row;
};

// The widest kernels this CPU runs. PARVIS_SIMD=sse2 or =scalar in the environment caps
// the choice, so tests and benchmarks can run the narrower paths on an AVX2 machine.
inline Kernels pick_kernels() {
  const Kernels scalar = {"scalar", ssd_at_scalar, sad_at_scalar, ssd_row_scalar, sad_row_scalar};
  const char* cap = std::getenv("PARVIS_SIMD");
  if (cap && std::strcmp(cap, "scalar") == 0) return scalar;
#if PARVIS_MATCH_X86
  if (__builtin_cpu_supports("avx2") && !(cap && std::strcmp(cap, "sse2") == 0))
    return {"avx2", ssd_at_avx2, sad_at_avx2, ssd_row_avx2, sad_row_avx2};
  return {"sse2", ssd_at_sse2, sad_at_sse2, ssd_row_sse2, sad_row_sse2};
#else
  return scalar;
#endif
}

}  // namespace parvis::match::kernels
