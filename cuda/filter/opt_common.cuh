// What cuda-opt's filter kernels share (cuda/filter/opt.cu, opt_sep*.cuh): the geometry every
// thread addresses bytes with, the bordered byte and word loads, the integer MMA and the finish
// and store of one warp's 128 output bytes of a row. Included by opt.cu and by
// tests/cuda/filter_sep_emulate.cu (host emulation of the sep kernels).
#pragma once
#include <cstdint>

#include "filter/device_image.cuh"

namespace parvis::filter {
namespace {

using cuda_filter::DeviceDivider;

constexpr int kUnitBytes = 128;  // output bytes of one warp and row: 8 segments of 16
constexpr int kSegment = 16;
constexpr int kChunk = 32;       // the k of one mma: segment + halo

// Where a kernel reads and writes, and what every thread needs to address a byte.
struct Geometry {
  const uint8_t* in;
  uint8_t* out;
  size_t pitch;
  int width, height, channels, row_bytes;
  Border border;
  int size, radius;
  int lead;              // a segment's B starts `lead` bytes before its first output
  long long units_x;     // 128-byte units per row
  long long units;       // units_x * (rows / rows per unit)
};

// Byte x of a source row (any x), the border applied.
__host__ __device__ __forceinline__ uint32_t border_byte(const uint8_t* row, int x, const Geometry& g) {
  const int c = g.channels;
  int p = x >= 0 ? x / c : -((-x + c - 1) / c);  // floor(x / c)
  const int ch = x - p * c;
  p = border_index(p, g.width, g.border);
  return p < 0 ? 0u : uint32_t(row[size_t(p) * c + ch]);
}

// The 4 bytes at x (a multiple of 4) as a little-endian word: one aligned load when they lie in
// the row, else byte by byte through the border.
__device__ __forceinline__ uint32_t load_word(const uint8_t* row, int x, const Geometry& g) {
  if (x >= 0 && x + 4 <= g.row_bytes) return __ldg(reinterpret_cast<const uint32_t*>(row + x));
  uint32_t w = 0;
  for (int i = 0; i < 4; ++i) w |= border_byte(row, x + i, g) << (8 * i);
  return w;
}

// The 4 bytes at any x: two aligned loads and a funnel shift inside the row.
__device__ __forceinline__ uint32_t load_word_any(const uint8_t* row, int x, const Geometry& g) {
  if (x >= 0 && x + 4 <= g.row_bytes) {
    const int a = x & ~3, sh = x & 3;
    const uint32_t w0 = __ldg(reinterpret_cast<const uint32_t*>(row + a));
    if (sh == 0) return w0;
    // a + 4 < row_bytes, so the word at a + 4 ends within round_up(row_bytes, 4) <= pitch.
    const uint32_t w1 = __ldg(reinterpret_cast<const uint32_t*>(row + a + 4));
    return __funnelshift_r(w0, w1, 8 * sh);
  }
  uint32_t w = 0;
  for (int i = 0; i < 4; ++i) w |= border_byte(row, x + i, g) << (8 * i);
  return w;
}

// D += A B, A 16x32 s8 (taps), B 32x8 u8 (source bytes), D 16x8 s32.
__device__ __forceinline__ void mma_s8u8(int (&d)[4], const uint4& a, uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
#else
  __trap();  // the host never launches the MMA kernels below compute capability 8.0
#endif
}

// Finishes (DeviceDivider::exact) the 4 sums of a lane (D fragment: rows g, g + 8 = outputs 2g, 2g + 1 of segments
// 2t, 2t + 1) and stores 4 adjacent bytes per lane: one shuffle with the lane of the neighbour
// group (lane ^ 4) swaps a pair, so even groups hold bytes 2g..2g+3 of segment 2t and odd groups
// bytes 2g-2..2g+1 of segment 2t+1. All lanes must call it (the shuffle).
__device__ __forceinline__ void store_unit_row(const int (&sum)[4], int y, int x0, int lane,
                                               const Geometry& g, const DeviceDivider& dv) {
  const int group = lane >> 2, t = lane & 3;
  const uint32_t q0 = cuda_filter::finish_exact(sum[0], dv), q1 = cuda_filter::finish_exact(sum[1], dv);
  const uint32_t q2 = cuda_filter::finish_exact(sum[2], dv), q3 = cuda_filter::finish_exact(sum[3], dv);
  const uint32_t pair_even_seg = q0 | q2 << 8;  // segment 2t, bytes 2g, 2g + 1
  const uint32_t pair_odd_seg = q1 | q3 << 8;   // segment 2t + 1
  const bool odd = group & 1;
  const uint32_t recv = __shfl_xor_sync(0xffffffffu, odd ? pair_even_seg : pair_odd_seg, 4);
  const uint32_t word = odd ? (recv | pair_odd_seg << 16) : (pair_even_seg | recv << 16);
  const int x = x0 + 2 * kSegment * t + (odd ? kSegment + 2 * group - 2 : 2 * group);
  if (y < g.height && x < g.row_bytes)
    *reinterpret_cast<uint32_t*>(g.out + size_t(y) * g.pitch + x) = word;
}


// The two B words of every row of a unit away from every border: rows `pitch` apart from `base`
// (the lane's first byte in the unit's first source row), one aligned load per word.
template <int ROWS>
__device__ __forceinline__ void load_rows_inside(uint32_t (&b)[ROWS][2], const uint8_t* base, size_t pitch) {
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    b[r][0] = __ldg(reinterpret_cast<const uint32_t*>(base + size_t(r) * pitch));
    b[r][1] = __ldg(reinterpret_cast<const uint32_t*>(base + size_t(r) * pitch + kSegment));
  }
}

// The two B words of image row y (any y: the border applies) at byte xb: zeros for a row outside
// the image under the zero border.
__device__ __forceinline__ void load_row_bordered(int y, int xb, const Geometry& g, uint32_t& b0, uint32_t& b1) {
  const int sy = border_index(y, g.height, g.border);
  b0 = b1 = 0;
  if (sy >= 0) {  // the same for the whole warp
    const uint8_t* row = g.in + size_t(sy) * g.pitch;
    b0 = load_word(row, xb, g);
    b1 = load_word(row, xb + kSegment, g);
  }
}

// Register blocking over RB output rows: source row r of a unit (image row y0 + r - R) feeds
// output row y0 + o through kernel row ky = r - o, for every o in 0..RB-1 that has one.
template <int K, int PLANES, int RB>
__device__ __forceinline__ void mma_source_row(int (&acc)[PLANES][RB][4], const uint4 (&a)[K][PLANES],
                                               int r, uint32_t b0, uint32_t b1) {
#pragma unroll
  for (int ky = 0; ky < K; ++ky) {
    const int o = r - ky;
    if (o >= 0 && o < RB)
#pragma unroll
      for (int p = 0; p < PLANES; ++p) mma_s8u8(acc[p][o], a[ky][p], b0, b1);
  }
}

// The RB rows of a unit: digit planes summed (acc_lo + 256 acc_hi), finished and stored.
template <int PLANES, int RB>
__device__ __forceinline__ void store_unit_rows(const int (&acc)[PLANES][RB][4], int y0, int x0, int lane,
                                                const Geometry& g, const DeviceDivider& dv) {
#pragma unroll
  for (int o = 0; o < RB; ++o) {
    int sum[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) sum[i] = PLANES == 1 ? acc[0][o][i] : acc[0][o][i] + 256 * acc[PLANES - 1][o][i];
    store_unit_row(sum, y0 + o, x0, lane, g, dv);
  }
}

}  // namespace
}  // namespace parvis::filter
