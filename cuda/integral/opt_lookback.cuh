// Integral image, cuda-opt, variant "lookback" (PARVIS_INTEGRAL_VARIANT=lookback; opt.cu picks
// it): one kernel, one pass over the data — every u8 read once, every output written once.
//
// Floor (at a ~3.0 TB/s device copy): u8 -> u64 reads 1 byte and writes 8 a pixel: 10000^2 0.30 ms,
// 40000^2 4.8 ms, 60000^2 10.8 ms. This variant adds 16/H bytes a pixel of scratch written (the
// aggregates and inclusive prefixes below, H = 32: 0.5 B) and about as much read back (mostly
// from L2), i.e. 6-11% over the floor at best (10000^2: ~0.32-0.33 ms).
//
// Layout: the rows (of the driver's band, driver.cuh) are cut into bands of H rows (H = 32, or 16 with
// PARVIS_INTEGRAL_LB_ROWS=16); one block of 256 threads walks one band left to right in tiles of
// H rows x 512 columns, 2 adjacent columns a thread (2-byte loads of the input, 16-byte stores of
// two u64/f64 outputs, 8-byte of two u32: each warp store covers 256 or 512 contiguous bytes).
// At most 80 registers (3 blocks an SM: 396 resident on 132 SMs, every band of 10000^2 at once;
// ptxas -v: H = 32 spills ~140 bytes a thread (where, unchecked: no cuobjdump here), H = 16 ~10).
// Blocks take their band from an atomic ticket, not blockIdx, so a band only ever waits for bands
// that have already started (are resident or done): no deadlock under any scheduling.
// Per tile (band ty, tile tx, columns x):
//   1. D(x): the band's integral at its last row, x within the tile = lb (the band's sum left of
//      the tile, a scalar carried from tile to tile) + the block scan of the tile's column totals.
//   2. publish D as the tile's aggregate (agg[ty][x], flag AGGREGATE); band 0 publishes
//      above[x] + D directly as its inclusive prefix (inc[0][x], flag INCLUSIVE).
//   3. decoupled look-back (warp 0, 32 bands above at a time, the flags read with acquire loads,
//      the values with L2 loads after a barrier): C(x) = I(y0 - 1, x) = the aggregates of the bands
//      above up to the nearest inclusive prefix, plus that prefix. Publish inc[ty][x] = C + D
//      (flag INCLUSIVE) before writing the outputs, so bands below wait as little as possible,
//      together with steps 1-2 of the next tile (its input loaded during the look-back): one
//      __threadfence a tile (it waits for the thread's output stores still in flight).
//   4. rows: per row, the running column sums k(x) of the tile (u32), one block scan gives the
//      tile-local 2D sum S(y, x); out(y, x) = C(x) + L(y) + S(y, x), L(y) = the band's integral
//      at row y left of the tile (per row, u64 in shared memory, carried from tile to tile).
//      Four rows' scans at a time: four independent shuffle chains, one barrier.
// Exactness: S and the column sums fit u32 (H * 512 * 255^2 < 2^32); C, D, L and every sum of
// them are u64 until the store, which narrows to the output type (u32 only where check_type
// allows it; f64 exact below 2^53).
// The pieces that are not warp/block primitives are __host__ __device__ so that
// tests/cuda/integral_emulate.cu runs them on the host.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "common.cuh"
#include "emulable.cuh"
#include "scan.cuh"

namespace parvis::integral::lookback {

constexpr int kThreads = 256, kWarps = kThreads / 32, kTileW = 2 * kThreads;
constexpr int kRowGroup = 4;  // rows scanned together (one barrier, 4 independent shuffle chains)
constexpr uint32_t kAggregate = 1, kInclusive = 2;  // a tile's flag (0: nothing yet)

struct Geom {
  int64_t w, rows, h, ntx, nbands;  // h: rows a band
};
__host__ __device__ inline Geom make_geom(int64_t w, int64_t rows, int h) {
  return Geom{w, rows, h, (w + kTileW - 1) / kTileW, (rows + h - 1) / h};
}

// Scratch: [ticket, padding to 256 B][flags ntx x nbands][agg nbands x w][inc nbands x w].
struct Scratch {
  uint32_t* ticket;
  uint32_t* flags;
  uint64_t* agg;
  uint64_t* inc;
};
// The flag of band b, tile tx: a tile's bands side by side (a look-back window reads 128 bytes).
__host__ __device__ inline uint32_t* flag_of(const Scratch& s, const Geom& g, int64_t b, int64_t tx) {
  return s.flags + tx * g.nbands + b;
}
inline uint64_t flag_bytes(const Geom& g) { return (256 + uint64_t(g.nbands * g.ntx) * 4 + 255) / 256 * 256; }
inline uint64_t scratch_bytes(const Geom& g) { return flag_bytes(g) + 2 * uint64_t(g.nbands * g.w) * 8; }
inline Scratch carve(unsigned char* base, const Geom& g) {
  Scratch s;
  s.ticket = reinterpret_cast<uint32_t*>(base);
  s.flags = s.ticket + 64;
  s.agg = reinterpret_cast<uint64_t*>(base + flag_bytes(g));
  s.inc = s.agg + g.nbands * g.w;
  return s;
}

// Rows a band: PARVIS_INTEGRAL_LB_ROWS (16 or 32; default 32); 0 for any other value.
inline int band_rows_from_env() {
  const char* e = std::getenv("PARVIS_INTEGRAL_LB_ROWS");
  if (!e || !*e) return 32;
  if (std::strcmp(e, "16") == 0) return 16;
  if (std::strcmp(e, "32") == 0) return 32;
  return 0;
}

// The tile's input for the thread's columns x, x + 1: rows y0 .. y0 + H - 1 (0 outside the image),
// two rows a word: byte 2 * (r & 1) + j of q[r / 2] is pixel (y0 + r, x + j).
template <int H, bool Vec>
__host__ __device__ __forceinline__ void load_tile(const uint8_t* in, const Geom& g, int64_t y0, int64_t x,
                                                   uint32_t (&q)[H / 2]) {
PARVIS_UNROLL
  for (int i = 0; i < H / 2; ++i) {
    uint32_t v = 0;
PARVIS_UNROLL
    for (int half = 0; half < 2; ++half) {
      const int64_t y = y0 + 2 * i + half;
      uint32_t pair = 0;
      if (y < g.rows && x < g.w) {
        const uint8_t* p = in + y * g.w + x;
        if (Vec) pair = ldg(reinterpret_cast<const unsigned short*>(p));  // w, x even: aligned
        else pair = uint32_t(ldg(p)) | (x + 1 < g.w ? uint32_t(ldg(p + 1)) << 8 : 0u);
      }
      v |= pair << (16 * half);
    }
    q[i] = v;
  }
}

// Pixel (row r of the tile, column x + j), squared when asked: at most 255^2.
__host__ __device__ __forceinline__ uint32_t pixel(const uint32_t* q, int r, int j, bool squared) {
  const uint32_t p = (q[r >> 1] >> (16 * (r & 1) + 8 * j)) & 0xffu;
  return squared ? p * p : p;
}

// Two outputs (x, x + 1) of one row, narrowed to T. Vec: w even (so x + 1 < w and the pair is
// 2 * sizeof(T)-aligned).
template <typename T, bool Vec>
__host__ __device__ __forceinline__ void store_pair(T* p, int64_t x, int64_t w, uint64_t a, uint64_t b) {
  if (Vec) {
    if constexpr (sizeof(T) == 4) {
      *reinterpret_cast<uint2*>(p) = make_uint2(uint32_t(a), uint32_t(b));
    } else if constexpr (std::is_same<T, double>::value) {
      *reinterpret_cast<double2*>(p) = make_double2(double(a), double(b));
    } else {
      *reinterpret_cast<ulonglong2*>(p) = make_ulonglong2(a, b);
    }
  } else {
    if (x < w) p[0] = T(a);
    if (x + 1 < w) p[1] = T(b);
  }
}

// Adds the scratch pair at p (x, x + 1) to *a, *b: through L2 (never a stale L1 line), since
// other blocks wrote it during this kernel.
template <bool Vec>
__host__ __device__ __forceinline__ void add_pair_l2(const uint64_t* p, int64_t x, int64_t w, uint64_t* a,
                                                     uint64_t* b) {
#ifdef __CUDA_ARCH__
  if (Vec) {  // w even: x < w covers x + 1
    if (x >= w) return;
    const ulonglong2 v = __ldcg(reinterpret_cast<const ulonglong2*>(p));
    *a += v.x;
    *b += v.y;
  } else {
    if (x < w) *a += __ldcg(reinterpret_cast<const unsigned long long*>(p));
    if (x + 1 < w) *b += __ldcg(reinterpret_cast<const unsigned long long*>(p) + 1);
  }
#else
  if (x < w) *a += p[0];
  if (x + 1 < w) *b += p[1];
#endif
}

// The look-back's decision over a window of 32 bands above (bit l: band ty - 1 - l, its flag
// nonzero / INCLUSIVE): the number of bands to sum (the last one's inclusive prefix when
// `inclusive`), or 0: wait (a band in between has published nothing yet).
struct Window {
  int count;
  bool inclusive;
};
__host__ __device__ inline Window decide(uint32_t nonzero, uint32_t inclusive) {
  if (inclusive) {
#ifdef __CUDA_ARCH__
    const int s = __ffs(inclusive) - 1;
#else
    const int s = __builtin_ctz(inclusive);
#endif
    const uint32_t need = s == 31 ? ~0u : (2u << s) - 1;
    return (nonzero & need) == need ? Window{s + 1, true} : Window{0, false};
  }
  return nonzero == ~0u ? Window{32, false} : Window{0, false};
}

// N exclusive block scans of u32 at once (N independent shuffle chains, one __syncthreads; `buf`
// alternates the two slots so that the next call may start right after): ex[i], total[i].
template <int N>
__device__ __forceinline__ void block_excl(const uint32_t (&v)[N], uint32_t (*tot)[kRowGroup][kWarps], int* buf,
                                           uint32_t (&ex)[N], uint32_t (&total)[N]) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  uint32_t incl[N];
#pragma unroll
  for (int i = 0; i < N; ++i) incl[i] = cuda::warp_inclusive_sum(v[i]);  // independent: interleaved
  if (lane == 31)
#pragma unroll
    for (int i = 0; i < N; ++i) tot[*buf][i][warp] = incl[i];
  __syncthreads();
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const uint4 lo = reinterpret_cast<const uint4*>(tot[*buf][i])[0], hi = reinterpret_cast<const uint4*>(tot[*buf][i])[1];
    const uint32_t t[kWarps] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    uint32_t off = incl[i] - v[i], sum = 0;
#pragma unroll
    for (int k = 0; k < kWarps; ++k) {
      off += k < warp ? t[k] : 0u;
      sum += t[k];
    }
    ex[i] = off;
    total[i] = sum;
  }
  *buf ^= 1;
}

// Sets up to two flags (null: none) once every thread's values stored before are visible.
__device__ __forceinline__ void publish_flags(uint32_t* fa, uint32_t va, uint32_t* fb, uint32_t vb) {
  __threadfence();  // every thread's values before the flags
  __syncthreads();
  if (threadIdx.x == 0) {
    if (fa) *reinterpret_cast<volatile uint32_t*>(fa) = va;
    if (fb) *reinterpret_cast<volatile uint32_t*>(fb) = vb;
  }
}

// The thread's two column totals of a tile (rows past the image are 0).
template <int H>
__host__ __device__ __forceinline__ void column_totals(const uint32_t* q, bool squared, uint32_t* k0, uint32_t* k1) {
  *k0 = *k1 = 0;
  PARVIS_UNROLL
  for (int r = 0; r < H; ++r) {
    *k0 += pixel(q, r, 0, squared);
    *k1 += pixel(q, r, 1, squared);
  }
}

// Stores the tile's first publication at columns x (x < w): band 0's inclusive prefix
// (above[x] + D, *c the above part), any other band's aggregate D.
template <typename T, bool Vec>
__host__ __device__ __forceinline__ void store_first(const Scratch& s, const T* above, int64_t ty, int64_t x,
                                                     int64_t w, uint64_t d0, uint64_t d1, uint64_t* c0,
                                                     uint64_t* c1) {
  *c0 = *c1 = 0;
  if (x >= w) return;
  if (ty == 0) {
    if (above) {
      *c0 = uint64_t(above[x]);
      if (x + 1 < w) *c1 = uint64_t(above[x + 1]);
    }
    store_pair<uint64_t, Vec>(s.inc + x, x, w, *c0 + d0, *c1 + d1);
  } else {
    store_pair<uint64_t, Vec>(s.agg + ty * w + x, x, w, d0, d1);
  }
}

// A flag, read with acquire semantics (what the writer stored before its fence and the flag is
// visible after it), without waiting for this thread's own stores in flight as __threadfence would.
__device__ __forceinline__ uint32_t load_flag(const uint32_t* p) {
#if __CUDA_ARCH__ >= 700
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
#else
  const uint32_t v = *reinterpret_cast<const volatile uint32_t*>(p);
  __threadfence();
  return v;
#endif
}

// C(x) of band ty > 0, tile tx (see the header): *c0, *c1 += the look-back's sum.
template <bool Vec>
__device__ __forceinline__ void look_back(const Geom& g, const Scratch& s, int64_t ty, int64_t tx, int64_t x,
                                          uint32_t* s_look, uint64_t* c0, uint64_t* c1) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int64_t pred = ty - 1;
  for (;;) {
    if (warp == 0) {
      const int64_t b = pred - lane;
      Window win;
      for (;;) {
        const uint32_t f = b >= 0 ? load_flag(flag_of(s, g, b, tx)) : 0u;
        win = decide(__ballot_sync(0xffffffffu, f != 0), __ballot_sync(0xffffffffu, f == kInclusive));
        if (win.count) break;
#if __CUDA_ARCH__ >= 700
        __nanosleep(100);
#endif
      }
      if (lane == 0) *s_look = uint32_t(win.count) | (win.inclusive ? 0x100u : 0u);
    }
    __syncthreads();
    const uint32_t look = *s_look;
    const int n = int(look & 0xffu);
    const bool incl = (look >> 8) != 0;
#pragma unroll 4
    for (int k = 0; k < n; ++k) {
      const uint64_t* src = (incl && k == n - 1 ? s.inc : s.agg) + (pred - k) * g.w + x;
      add_pair_l2<Vec>(src, x, g.w, c0, c1);
    }
    __syncthreads();  // *s_look is written again
    if (incl) return;
    pred -= n;
  }
}

template <typename T, int H, bool Vec>
__global__ void __launch_bounds__(kThreads, 3) band_kernel(const uint8_t* __restrict__ in, T* __restrict__ out,
                                                        const T* __restrict__ above, Geom g, bool squared,
                                                        Scratch s) {
  static_assert(uint64_t(H) * kTileW * 255 * 255 < (uint64_t(1) << 32), "tile sums must fit u32");
  static_assert(H % kRowGroup == 0, "whole row groups");
  __shared__ __align__(16) uint32_t tot[2][kRowGroup][kWarps];
  __shared__ uint64_t left[2][H];  // L(y) of the tile, by tile parity
  __shared__ uint32_t s_band, s_look;
  const int tid = threadIdx.x;
  if (tid == 0) s_band = atomicAdd(s.ticket, 1u);
  if (tid < H) left[0][tid] = 0;
  __syncthreads();
  const int64_t ty = s_band, y0 = ty * H;
  const int nr = int(min(int64_t(H), g.rows - y0));
  int buf = 0;
  uint64_t lb = 0;
  uint32_t q[H / 2], qn[H / 2];
  // D(x) of the tile in qq at columns x: its column totals block-scanned, plus lb; lb += its total.
  const auto aggregate = [&](const uint32_t* qq, uint64_t* d0, uint64_t* d1) {
    uint32_t k0, k1;
    column_totals<H>(qq, squared, &k0, &k1);
    const uint32_t colsum[1] = {k0 + k1};
    uint32_t ex[1], total[1];
    block_excl<1>(colsum, tot, &buf, ex, total);
    *d0 = lb + ex[0] + k0;
    *d1 = *d0 + k1;
    lb += total[0];
  };
  // 1-2 for tile 0: D, published (band 0: its inclusive prefix).
  uint64_t d0, d1, c0, c1;
  load_tile<H, Vec>(in, g, y0, 2 * tid, q);
  aggregate(q, &d0, &d1);
  store_first<T, Vec>(s, above, ty, 2 * tid, g.w, d0, d1, &c0, &c1);
  publish_flags(flag_of(s, g, ty, 0), ty == 0 ? kInclusive : kAggregate, nullptr, 0);
  for (int64_t tx = 0; tx < g.ntx; ++tx) {
    const int64_t x = tx * kTileW + 2 * tid;
    const int par = int(tx & 1);
    const bool next = tx + 1 < g.ntx;
    // The next tile's input, in flight during the look-back.
    if (next) load_tile<H, Vec>(in, g, y0, x + kTileW, qn);
    // 3. look-back: C(x) (band 0: `above`, already in c0, c1).
    if (ty > 0) {
      c0 = c1 = 0;
      look_back<Vec>(g, s, ty, tx, x, &s_look, &c0, &c1);
      if (x < g.w) store_pair<uint64_t, Vec>(s.inc + ty * g.w + x, x, g.w, c0 + d0, c1 + d1);
    }
    // 1-2 for the next tile, published with this tile's inclusive prefix (one fence for both).
    uint64_t n0 = 0, n1 = 0;
    if (next) {
      aggregate(qn, &n0, &n1);
      uint64_t a0, a1;  // (band 0: reloaded below)
      store_first<T, Vec>(s, above, ty, x + kTileW, g.w, n0, n1, &a0, &a1);
    }
    if (ty > 0 || next)
      publish_flags(ty > 0 ? flag_of(s, g, ty, tx) : nullptr, kInclusive,
                    next ? flag_of(s, g, ty, tx + 1) : nullptr, ty == 0 ? kInclusive : kAggregate);
    // 4. rows.
    //    kRowGroup rows at a time (rows past nr: zero pixels, not stored).
    uint32_t k0 = 0, k1 = 0;
#pragma unroll
    for (int r0 = 0; r0 < H; r0 += kRowGroup) {
      if (r0 >= nr) break;  // the same for the whole block
      uint32_t a0[kRowGroup], a[kRowGroup], e[kRowGroup], row_total[kRowGroup];
#pragma unroll
      for (int i = 0; i < kRowGroup; ++i) {
        k0 += pixel(q, r0 + i, 0, squared);
        k1 += pixel(q, r0 + i, 1, squared);
        a0[i] = k0;
        a[i] = k0 + k1;
      }
      block_excl<kRowGroup>(a, tot, &buf, e, row_total);
#pragma unroll
      for (int i = 0; i < kRowGroup; ++i) {
        const int r = r0 + i;
        if (r >= nr) break;
        const uint64_t l = left[par][r];
        if (x < g.w) store_pair<T, Vec>(out + (y0 + r) * g.w + x, x, g.w, c0 + l + e[i] + a0[i], c1 + l + e[i] + a[i]);
        if (tid == 0) left[par ^ 1][r] = l + row_total[i];
      }
    }
#pragma unroll
    for (int i = 0; i < H / 2; ++i) q[i] = qn[i];
    d0 = n0;
    d1 = n1;
    if (ty == 0 && next) {  // C of band 0's next tile: `above` (0 without)
      const int64_t xn = x + kTileW;
      c0 = above && xn < g.w ? uint64_t(above[xn]) : 0;
      c1 = above && xn + 1 < g.w ? uint64_t(above[xn + 1]) : 0;
    }
  }
}

// One band of the driver (driver.cuh's K::band): out = above + the band's integral.
template <typename T, int H>
Status run(const uint8_t* in, T* out, const T* above, int64_t w, int64_t rows, bool squared,
           unsigned char* scratch, cudaStream_t stream) {
  const Geom g = make_geom(w, rows, H);
  const Scratch s = carve(scratch, g);
  CUDA_CHECK(cudaMemsetAsync(scratch, 0, size_t(flag_bytes(g)), stream));  // ticket and flags
  if (w % 2 == 0) band_kernel<T, H, true><<<unsigned(g.nbands), kThreads, 0, stream>>>(in, out, above, g, squared, s);
  else band_kernel<T, H, false><<<unsigned(g.nbands), kThreads, 0, stream>>>(in, out, above, g, squared, s);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

}  // namespace parvis::integral::lookback
