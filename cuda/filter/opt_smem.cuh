// cuda-opt filter, variant "smem" (PARVIS_FILTER_VARIANT=smem): the taps of convolve_mma_fixed
// (opt.cu: the same A fragments, B words, MMAs, finish and stores), with the source rows staged
// through shared memory by cp.async in a 4-stage pipeline instead of loaded by each warp.
//
// Floors and budgets (132 SMs, ~1.98 GHz, ~3.0 TB/s device copy rate):
//   8K RGB (7680x4320x3 = 99.5 MB in, 99.5 MB out): 66 us; 4K RGB (24.9 + 24.9 MB): 16.6 us.
//   Issue budget at the 8K floor: 132 SMs x 4 schedulers x 1.98 GHz x 66 us = 69 M warp
//   instructions for 99.5 M output bytes: 0.69 warp instructions (22 thread instructions) per
//   output byte, everything included. So:
//   - CUDA cores, 5x5 direct: >= 25 IMAD/FMA per output byte plus the byte unpacking — over the
//     whole budget by itself (fp32 FMA, exact here, at 128/clk/SM: 2.49 G FMA take 74 us alone).
//     Separable integer passes (5 + 5 taps) fit gaussian and box only, not sharpen/edge/unsharp
//     or custom kernels. Not written: it would beat the tensor cores on a subset of kernels only.
//   - dp4a on packed RGB needs __byte_perm to gather the stride-3 bytes: ~7 dp4a + ~7 prmt per
//     output byte at 5x5, 14 of the 22 before loads, finish and stores. Not written.
//   - Tensor cores, per warp and step (8 rows x 128 = 1024 output bytes, K = 5): 24 LDS + 40 MMA
//     + 8 x ~35 for the finish (4 x add, 2 clamps, mul.hi, shift), shuffle and store + ~70 for
//     the copies of one ring row (a warp per row, 3 chunks per lane) and ~30 loop/address: ~440
//     warp instructions, 0.43 per output byte, 62 % of the issue budget at the floor (42 % at
//     the 100 us target); 3.9 M MMAs at 8K, ~16 us at
//     the s8 peak. Not issue bound, not tensor bound: what is left is bytes in flight.
//   - 16-byte loads per lane in the register kernel: lane (g, t) needs word t of the 16 bytes at
//     segment g, so a uint4 per lane must be redistributed with 4 shuffles + selects per B
//     register — more instructions than the two 32-bit L1 hits it replaces. Not written; here the
//     16-byte transfers are the cp.async copies, and the B words come from shared memory.
//
// Layout. A block of W warps owns a strip of 128 W output bytes of a tile of `tile_rows` rows
// (a multiple of RB). Its shared memory is a ring of ring_rows = 4 RB + 2R source rows, each the
// strip plus 16 bytes on both sides (the B window of a segment starts `lead` <= 12 bytes before
// it and ends 16 - lead bytes after the segment: 128 W + 32 bytes, 16-byte aligned in global
// memory because the strip starts at a multiple of 128 and rows are 16-byte aligned). Source row
// j of a tile (image row ys - R + j) lives in ring slot j mod ring_rows. Step s computes output
// rows ys + s RB .. + RB - 1 from ring rows s RB .. s RB + RB + 2R - 1; step 0 loads rows
// 0 .. RB + 2R - 1, step s > 0 loads the RB new rows s RB + 2R .. (s + 1) RB + 2R - 1.
// Pipeline, one commit group per step (empty groups past the last step keep the count uniform):
//   prologue: load steps 0 .. 2; for each step s: wait until group s landed (wait_group 2),
//   __syncthreads, load step s + 3 (into the slots step s - 1 used: every warp passed the
//   barrier, so it finished step s - 1; live rows are s RB .. (s + 4) RB + 2R - 1, ring_rows of
//   them), then compute step s from shared memory. A __syncthreads after the tile's last step
//   protects the ring from the next tile's prologue. Blocks are persistent (grid = resident
//   blocks, tiles taken in a grid-stride loop), tile_rows chosen on the host so that the tiles
//   fill the resident blocks evenly (choose_tile_rows).
// Borders are applied where a chunk is written: a 16-byte chunk inside the row is one cp.async
// (.cg: L2 only, streamed), a row outside the image under the zero border and a chunk starting
// 16 or more bytes past the row's end are zeros (no valid output reads a byte past
// row_bytes - 1 + R C < row_bytes + 16 with a nonzero tap), any other chunk is gathered byte by
// byte through border_byte. Each source byte is then read from global memory once per tile
// (plus the 32-byte side halo and the 2R halo rows), against 1.5 row fetches per output row and
// a 2x overlapped pair of word loads in convolve_mma_fixed.
// The B words: lane (g, t) of warp w reads the words at ring offsets
//   b_offset = 16 + 128 w + 16 g - lead + 4 t  and  b_offset + 16,
// the same source bytes (x0 + 16 g - lead + 4 t, x0 = strip start + 128 w) as opt.cu's xb;
// a warp's 32 words of one register are 128 consecutive bytes: no bank conflicts.
#pragma once
#include "filter/opt_common.cuh"

namespace parvis::filter {
namespace {

constexpr int kSmemStages = 4;

// The tiling of the "smem" kernel (host-chosen, the same for every block).
struct SmemTiling {
  int warps;        // per block; the strip is 128 warps output bytes wide
  int strip_bytes;  // kUnitBytes * warps
  int row_chunks;   // 16-byte chunks of a ring row: strip + 16 bytes each side
  int ring_rows;    // kSmemStages * RB + 2R
  int tile_rows;    // output rows per tile, a multiple of RB
  int strips;       // strips per image row
  long long tiles;  // strips * tiles down the image
};

__host__ __device__ inline int ring_row_bytes(const SmemTiling& t) { return 16 * t.row_chunks; }

// Where lane `lane` of warp `warp` reads its first B word in a ring row.
__host__ __device__ inline int b_offset(int warp, int lane, int lead) {
  return 16 + kUnitBytes * warp + kSegment * (lane >> 2) - lead + 4 * (lane & 3);
}

// The ring rows a step loads: [*j0, *j1).
__host__ __device__ inline void step_rows(int s, int rb, int radius, int* j0, int* j1) {
  *j0 = s == 0 ? 0 : s * rb + 2 * radius;
  *j1 = (s + 1) * rb + 2 * radius;
}

// What chunk c of the ring row holding image row y (any y; the border applies) receives, for
// the strip starting at output byte x_strip: source bytes x .. x + 15 of image row sy.
enum class ChunkKind { Copy, Zero, Bytes };
struct ChunkSource {
  ChunkKind kind;
  int sy, x;
};
__host__ __device__ inline ChunkSource chunk_source(const Geometry& g, int x_strip, int y, int c) {
  ChunkSource s;
  s.x = x_strip - 16 + 16 * c;
  s.sy = border_index(y, g.height, g.border);
  if (s.sy < 0 || s.x >= g.row_bytes + 16) s.kind = ChunkKind::Zero;
  else if (s.x >= 0 && s.x + 16 <= g.row_bytes) s.kind = ChunkKind::Copy;
  else s.kind = ChunkKind::Bytes;
  return s;
}

// The 16 bytes of a Bytes chunk as 4 little-endian words.
__host__ __device__ inline uint4 gather_chunk(const Geometry& g, const ChunkSource& s) {
  const uint8_t* row = g.in + size_t(s.sy) * g.pitch;
  uint32_t w[4] = {0, 0, 0, 0};
  for (int i = 0; i < 16; ++i) w[i >> 2] |= border_byte(row, s.x + i, g) << (8 * (i & 3));
  return make_uint4(w[0], w[1], w[2], w[3]);
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
#else
  __trap();  // the host never launches the smem kernel below compute capability 8.0
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// Ring rows [j0, j1) of the tile whose ring row 0 is image row y_first: a warp per row (rows
// j0 + w, j0 + w + W, ...), its lanes taking the row's chunks in turn.
__device__ __forceinline__ void load_ring_rows(const Geometry& g, const SmemTiling& t, uint8_t* ring,
                                               int x_strip, int y_first, int j0, int j1) {
  const int lane = threadIdx.x & 31;
#pragma unroll 1
  for (int j = j0 + int(threadIdx.x >> 5); j < j1; j += t.warps) {
    uint8_t* dst = ring + size_t(j % t.ring_rows) * ring_row_bytes(t);
#pragma unroll 1
    for (int c = lane; c < t.row_chunks; c += 32) {
      const ChunkSource s = chunk_source(g, x_strip, y_first + j, c);
      if (s.kind == ChunkKind::Copy) cp_async16(dst + 16 * c, g.in + size_t(s.sy) * g.pitch + s.x);
      else if (s.kind == ChunkKind::Zero) *reinterpret_cast<uint4*>(dst + 16 * c) = make_uint4(0, 0, 0, 0);
      else *reinterpret_cast<uint4*>(dst + 16 * c) = gather_chunk(g, s);
    }
  }
}

template <int K, int PLANES, int RB>
__global__ void convolve_mma_smem(Geometry g, SmemTiling t, const uint4* __restrict__ frags,
                                  DeviceDivider dv) {
  extern __shared__ __align__(16) uint8_t ring[];
  constexpr int R = K / 2, ROWS = RB + 2 * R;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  uint4 a[K][PLANES];
#pragma unroll
  for (int ky = 0; ky < K; ++ky)
#pragma unroll
    for (int p = 0; p < PLANES; ++p) a[ky][p] = __ldg(&frags[(ky * PLANES + p) * 32 + lane]);
  const int boff = b_offset(warp, lane, g.lead);
  const int rbytes = ring_row_bytes(t);
  for (long long tile = blockIdx.x; tile < t.tiles; tile += gridDim.x) {
    const int x_strip = int(tile % t.strips) * t.strip_bytes;
    const int ys = int(tile / t.strips) * t.tile_rows;
    const int steps = (min(t.tile_rows, g.height - ys) + RB - 1) / RB;
    const int x0 = x_strip + kUnitBytes * warp;
#pragma unroll 1
    for (int s = 0; s < kSmemStages - 1; ++s) {
      if (s < steps) {
        int j0, j1;
        step_rows(s, RB, R, &j0, &j1);
        load_ring_rows(g, t, ring, x_strip, ys - R, j0, j1);
      }
      cp_async_commit();
    }
#pragma unroll 1
    for (int s = 0; s < steps; ++s) {
      cp_async_wait<kSmemStages - 2>();  // this thread's copies of step s have landed
      __syncthreads();                   // everyone's, and every warp is done with step s - 1
      if (s + kSmemStages - 1 < steps) {
        int j0, j1;
        step_rows(s + kSmemStages - 1, RB, R, &j0, &j1);
        load_ring_rows(g, t, ring, x_strip, ys - R, j0, j1);
      }
      cp_async_commit();
      if (x0 >= g.row_bytes) continue;  // a warp past the row's end (the same for the whole warp)
      const int first = (s * RB) % t.ring_rows;
      int acc[PLANES][RB][4] = {};
      // Row by row: shared-memory latency is short, and no register array of ROWS x 2 words
      // (opt.cu's kernel needs one to have its global loads in flight together).
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const int slot = first + r < t.ring_rows ? first + r : first + r - t.ring_rows;
        const uint8_t* p = ring + slot * rbytes + boff;
        mma_source_row<K, PLANES, RB>(acc, a, r, *reinterpret_cast<const uint32_t*>(p),
                                      *reinterpret_cast<const uint32_t*>(p + kSegment));
      }
      store_unit_rows<PLANES, RB>(acc, ys + s * RB, x0, lane, g, dv);
    }
    __syncthreads();  // the ring is free for the next tile's prologue
  }
}

// Output rows per tile: a multiple of rb minimizing (waves of tiles over the resident blocks) x
// (rows a tile streams + a pipeline start worth ~16 rows). With one wave every block streams one
// tall tile; more tiles than blocks cost a second wave of the same height.
inline int choose_tile_rows(int height, int strips, long long resident, int rb, int radius) {
  int best = rb;
  long long best_cost = -1;
  for (int tr = rb; tr < height + rb && tr <= 4096; tr += rb) {
    const long long tiles = (long long)strips * ((height + tr - 1) / tr);
    const long long waves = (tiles + resident - 1) / resident;
    const long long cost = waves * (tr + 2 * radius + 16);
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = tr;
    }
  }
  return best;
}

}  // namespace
}  // namespace parvis::filter
