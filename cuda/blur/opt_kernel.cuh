// cuda-opt's blur kernel (see opt.cu for the pipeline and the floor): its tables, built on
// the host, and the per-thread body, __host__ __device__ so that tests/cuda/blur_emulate.cu can
// run it thread by thread on the CPU against the reference.
//
// A thread computes 4 horizontally adjacent outputs (x0 ... x0 + 3, x0 a multiple of 4) of one
// row for up to LT layers (8 for the bench's batches). Per window row it reads each layer's
// pixels as aligned 32-bit words (4 pixels each) and multiplies them by the taps with
// __dp2a_lo / __dp2a_hi: two 16-bit taps times two pixel bytes plus the accumulator, two
// multiply-adds per instruction. The taps of an output are loaded once per window row and
// feed all its layers; the map value, the tap set and the weight are fetched once per output.
//
// Alignment without shifting bytes. The thread's words start at padded column x0 (image
// column x0 - R4, R4 = R rounded up to a multiple of 4), and output m's window starts
// off_m = m + R4 - R bytes later: at word w_m = off_m / 4, byte o_m = off_m % 4. Instead of
// shifting the pixels, the tables hold every tap row four times, pre-shifted by o = 0 … 3
// bytes (zeros before and after): output m reads row variant o_m, and words w_m, w_m + 1, …
// of the pixels. D = R4 - R is a template parameter, so every w_m is a compile-time register
// index.
//
// Exact as seq: the taps are the shared integer sets; the centre tap (2^k, up to 65536) is
// left out of the tables and added as px << k; all others are < 2^k <= 2^16 and fit the
// 16-bit halves of dp2a's first operand; the sums stay below 2^31 (blur.hpp). Pixels outside
// the image are zero in the padded layers (they add nothing), and the weight (the in-bounds
// taps) comes from the shared prefix table (window_weight).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "blur/blur.hpp"
#include "emulable.cuh"

namespace parvis::blur::opt {

constexpr int kChunk = 4;          // pixel words per chunk of a window row: 16 taps
constexpr int kBlockX = 8;         // threads per block along x: 32 columns
constexpr int kBlockY = 16;        // rows
constexpr int kQuad = 4;           // outputs per thread

// Loops over the compile-time sizes above and LT are unrolled on the device (PARVIS_UNROLL,
// emulable.cuh), so that every register array is indexed by constants.

// dp2a, and its arithmetic on the host (the emulation).
__host__ __device__ inline uint32_t dp2a_lo(uint32_t a, uint32_t b, uint32_t c) {
#ifdef __CUDA_ARCH__
  return __dp2a_lo(a, b, c);
#else
  return c + (a & 0xffffu) * (b & 0xffu) + (a >> 16) * ((b >> 8) & 0xffu);
#endif
}
__host__ __device__ inline uint32_t dp2a_hi(uint32_t a, uint32_t b, uint32_t c) {
#ifdef __CUDA_ARCH__
  return __dp2a_hi(a, b, c);
#else
  return c + (a & 0xffffu) * ((b >> 16) & 0xffu) + (a >> 16) * (b >> 24);
#endif
}

// Sizes of one run (Geometry::make on the host, passed by value to the kernel).
struct Geometry {
  int width = 0, height = 0, layers = 0;
  int radius = 0, side = 0, k = 0;
  int r4 = 0;           // R rounded up to a multiple of 4: the left margin of a padded row
  int chunks = 0;       // chunks of kChunk words per window row
  int pair_words = 0;   // 32-bit tap pairs per (set, row, variant): chunks * 2 * kChunk
  size_t stride = 0;    // bytes per padded row (a multiple of 16)
  size_t layer_size = 0;  // bytes per padded layer: (height + 2R) rows

  static Geometry make(int width, int height, int layers, const TapSets& taps) {
    Geometry g;
    g.width = width;
    g.height = height;
    g.layers = layers;
    g.radius = taps.radius;
    g.side = taps.side;
    g.k = taps.k;
    g.r4 = (taps.radius + 3) / 4 * 4;
    // A variant shifted by o <= 3 spans side + 3 bytes: that many words, in whole chunks.
    const int words = (g.side + 3 + 3) / 4;
    g.chunks = (words + kChunk - 1) / kChunk;
    g.pair_words = g.chunks * 2 * kChunk;
    // A thread reads words x0 / 4 … x0 / 4 + chunks * kChunk of its row (x0 <= width - 1).
    g.stride = (size_t(width) + 4 * size_t(g.chunks * kChunk + 2) + 15) / 16 * 16;
    g.layer_size = g.stride * size_t(height + 2 * g.radius);
    return g;
  }
};

// The pre-shifted tap pairs: for set v, window row dy, variant o, `pair_words` words; word 2i
// holds the taps of bytes 4i, 4i + 1 (low half, high half), word 2i + 1 those of 4i + 2,
// 4i + 3; the tap of byte j is t(dx = j - o - R) (0 outside the window, and 0 at the centre).
inline std::vector<uint32_t> make_pair_table(const TapSets& taps, const Geometry& g) {
  std::vector<uint32_t> table(size_t(255) * size_t(g.side) * 4 * size_t(g.pair_words), 0);
  for (int v = 1; v <= 255; ++v)
    for (int dy = 0; dy < g.side; ++dy)
      for (int o = 0; o < 4; ++o) {
        uint32_t* row = table.data() + ((size_t(v - 1) * g.side + dy) * 4 + o) * g.pair_words;
        for (int j = 0; j < 4 * g.chunks * kChunk; ++j) {
          const int dx = j - o;  // 0 … side - 1 inside the window
          if (dx < 0 || dx >= g.side || (dx == g.radius && dy == g.radius)) continue;
          const uint32_t t = uint32_t(taps.set(v)[dy * g.side + dx]);  // < 2^k <= 2^16
          row[j / 2] |= t << (16 * (j % 2));
        }
      }
  return table;
}

struct Args {
  Geometry g;
  const uint8_t* padded;    // layers, (height + 2R) rows of `stride` bytes; image (x, y) at
                            // padded column x + r4, row y + R
  const uint8_t* map;       // width x height
  const uint32_t* pairs;    // make_pair_table
  const uint32_t* prefix;   // WeightTable::prefix
  uint8_t* out;             // layers x height x width
};

// Outputs (x0 … x0 + 3, y) of layers l0 … l0 + LT - 1 (those below g.layers); D = r4 - R.
template <int LT, int D>
__host__ __device__ inline void blur_quad(const Args& a, int x0, int y, int l0) {
  const Geometry& g = a.g;
  const int nl = g.layers - l0 < LT ? g.layers - l0 : LT;
  const size_t plane = size_t(g.width) * size_t(g.height);
  int v[kQuad];
  bool any = false;
  PARVIS_UNROLL
  for (int m = 0; m < kQuad; ++m) {
    v[m] = x0 + m < g.width ? ldg(a.map + size_t(y) * g.width + x0 + m) : 0;
    any |= v[m] != 0;
  }
  const uint8_t* centre = a.padded + size_t(y + g.radius) * g.stride + size_t(x0 + g.r4);
  if (any) {
    uint32_t acc[LT][kQuad];
    const uint32_t* taps[kQuad];
    PARVIS_UNROLL
    for (int m = 0; m < kQuad; ++m) {
      PARVIS_UNROLL
      for (int l = 0; l < LT; ++l) acc[l][m] = 0;
      const int set = v[m] ? v[m] - 1 : 0;  // a sharp output runs set 1 and is not stored
      taps[m] = a.pairs + (size_t(set) * g.side * 4 + size_t((D + m) & 3)) * g.pair_words;
    }
    const size_t row_step = size_t(4) * g.pair_words;
    const uint8_t* row = a.padded + size_t(l0) * g.layer_size + size_t(y) * g.stride + size_t(x0);
    for (int dy = 0; dy < g.side; ++dy, row += g.stride) {
      for (int c = 0; c < g.chunks; ++c) {
        uint32_t t[kQuad][2 * kChunk];
        PARVIS_UNROLL
        for (int m = 0; m < kQuad; ++m) {
          const uint4* q = reinterpret_cast<const uint4*>(taps[m] + size_t(dy) * row_step + 2 * kChunk * c);
          const uint4 lo = ldg(q), hi = ldg(q + 1);
          t[m][0] = lo.x, t[m][1] = lo.y, t[m][2] = lo.z, t[m][3] = lo.w;
          t[m][4] = hi.x, t[m][5] = hi.y, t[m][6] = hi.z, t[m][7] = hi.w;
        }
        PARVIS_UNROLL
        for (int l = 0; l < LT; ++l) {
          if (l >= nl) break;
          const uint32_t* words = reinterpret_cast<const uint32_t*>(row + size_t(l) * g.layer_size) + kChunk * c;
          uint32_t px[kChunk + 1];
          PARVIS_UNROLL
          for (int i = 0; i <= kChunk; ++i) px[i] = ldg(words + i);
          PARVIS_UNROLL
          for (int m = 0; m < kQuad; ++m) {
            const int w = (D + m) >> 2;  // a constant once D and m are
            PARVIS_UNROLL
            for (int i = 0; i < kChunk; ++i) {
              acc[l][m] = dp2a_lo(t[m][2 * i], px[w + i], acc[l][m]);
              acc[l][m] = dp2a_hi(t[m][2 * i + 1], px[w + i], acc[l][m]);
            }
          }
        }
      }
    }
    PARVIS_UNROLL
    for (int m = 0; m < kQuad; ++m) {
      const int x = x0 + m;
      if (x >= g.width || v[m] == 0) continue;
      const uint32_t weight = window_weight(a.prefix + size_t(v[m] - 1) * size_t(g.side + 1) * size_t(g.side + 1),
                                            g.radius, x, y, g.width, g.height);
      PARVIS_UNROLL
      for (int l = 0; l < LT; ++l) {
        if (l >= nl) break;
        const uint32_t px = centre[size_t(l0 + l) * g.layer_size + m];
        a.out[size_t(l0 + l) * plane + size_t(y) * g.width + x] = divide_round(acc[l][m] + (px << g.k), weight);
      }
    }
  }
  for (int m = 0; m < kQuad; ++m) {  // sharp outputs: the pixel itself
    const int x = x0 + m;
    if (x >= g.width || v[m] != 0) continue;
    for (int l = 0; l < nl; ++l)
      a.out[size_t(l0 + l) * plane + size_t(y) * g.width + x] = centre[size_t(l0 + l) * g.layer_size + m];
  }
}

}  // namespace parvis::blur::opt
