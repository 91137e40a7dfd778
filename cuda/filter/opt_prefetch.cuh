// cuda-opt filter, variant "prefetch" (PARVIS_FILTER_VARIANT=prefetch): convolve_mma_fixed's
// units (128 bytes x RB rows per warp, the same A fragments, B words, MMAs, finish and stores),
// with persistent warps: the grid is the blocks that fit the SMs at once, and each warp walks the
// units unit, unit + T, unit + 2T, ... (T: warps in the grid), issuing the 2 (RB + K - 1) word
// loads of its next unit before the MMAs and stores of the current one. In the default kernel a
// warp's loads are in flight only while it waits for them (load burst, then MMAs, finish and
// stores with nothing in flight, then the warp exits); here every warp has a unit's loads in
// flight all the time, at the price of a second register window (2 (RB + K - 1) words: ~115
// registers at 5x5, 2 blocks of 256 per SM instead of 3). The units of a sweep of the grid are
// consecutive (row-major), so the halo rows shared by vertically adjacent units are read from L2
// while still there. A hedge against the smem variant (opt_smem.cuh): no barriers, no shared
// memory, the same global traffic as the default (~1.9x the image from L2, ~1x from DRAM).
#pragma once
#include "filter/opt_common.cuh"

namespace parvis::filter {
namespace {

// The B words of every source row of the unit at (x0, y0), border or not.
template <int K, int RB>
__device__ __forceinline__ void load_unit(uint32_t (&b)[RB + K - 1][2], int x0, int y0, int lane,
                                          const Geometry& g) {
  constexpr int R = K / 2, ROWS = RB + K - 1;
  const int xb = x0 + kSegment * (lane >> 2) - g.lead + 4 * (lane & 3);
  const bool inside = x0 >= g.lead && x0 + kUnitBytes + kSegment - g.lead <= g.row_bytes &&
                      y0 >= R && y0 + RB + R <= g.height;  // the same for the whole warp
  if (inside) {
    load_rows_inside(b, g.in + size_t(y0 - R) * g.pitch + xb, g.pitch);
  } else {
#pragma unroll
    for (int r = 0; r < ROWS; ++r) load_row_bordered(y0 + r - R, xb, g, b[r][0], b[r][1]);
  }
}

template <int K, int PLANES, int RB>
__global__ void convolve_mma_prefetch(Geometry g, const uint4* __restrict__ frags, DeviceDivider dv) {
  constexpr int ROWS = RB + K - 1;
  const int lane = threadIdx.x & 31;
  const long long stride = (long long)gridDim.x * (blockDim.x >> 5);
  long long unit = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (unit >= g.units) return;  // whole warps
  uint4 a[K][PLANES];
#pragma unroll
  for (int ky = 0; ky < K; ++ky)
#pragma unroll
    for (int p = 0; p < PLANES; ++p) a[ky][p] = __ldg(&frags[(ky * PLANES + p) * 32 + lane]);
  int x0 = int(unit % g.units_x) * kUnitBytes, y0 = int(unit / g.units_x) * RB;
  uint32_t b[ROWS][2];
  load_unit<K, RB>(b, x0, y0, lane, g);
#pragma unroll 1
  for (;;) {
    const long long next = unit + stride;
    const bool more = next < g.units;  // the same for the whole warp
    const int nx0 = int(next % g.units_x) * kUnitBytes, ny0 = int(next / g.units_x) * RB;
    uint32_t nb[ROWS][2] = {};
    if (more) load_unit<K, RB>(nb, nx0, ny0, lane, g);  // in flight during the MMAs below
    int acc[PLANES][RB][4] = {};
#pragma unroll
    for (int r = 0; r < ROWS; ++r) mma_source_row<K, PLANES, RB>(acc, a, r, b[r][0], b[r][1]);
    store_unit_rows<PLANES, RB>(acc, y0, x0, lane, g, dv);
    if (!more) break;
    unit = next;
    x0 = nx0;
    y0 = ny0;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      b[r][0] = nb[r][0];
      b[r][1] = nb[r][1];
    }
  }
}

}  // namespace
}  // namespace parvis::filter
