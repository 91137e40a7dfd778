// cuda-opt's separable filter kernel, register form (variant sep; the form below compute capability
// 8.0, or with filter.sep_async=0; opt_sep_async.cuh is the form from 8.0): for kernels
// whose taps are sign col^T row + centre delta, col and row non-negative integer vectors (the
// bank's gaussian, box, identity: centre 0; unsharp: -gaussian + 2 d delta; edge 3x3: -ones + 9
// delta; opt_sep_params.cuh's sep_decompose decides, exactly), two passes in registers, no shared
// memory, no tensor cores.
//
// Each lane owns 16 consecutive bytes of a row (x0 = 16 lane + 512 warp column): one 16-byte load
// per source row, the halo words (ceil(R C / 4) each side) from the neighbouring lanes by
// __shfl_up/down, lanes 0 and 31 loading theirs (one or two 32-bit words, the same cache lines
// as the neighbouring warps'). A warp walks down a strip of `strip_rows` output rows: per source
// row it computes the horizontal sums of its 16 bytes, keeps the last K rows of them in
// registers, and per output row sums them vertically, finishes and stores 16 bytes. Each source
// row is loaded one row ahead of its use (in flight in registers while the current row is
// computed).
//
// Arithmetic: packed 16-bit lanes, two bytes per 32-bit register. A word of 4 source bytes
// b0 b1 b2 b3 gives E = (b0, b2) and O = (b1, b3) (one PRMT each); the pairs at the odd offsets
// are S_j = (byte 4j+2, 4j+4) and T_j = (4j+3, 4j+5) (one PRMT each), so the pair of bytes
// (x, x + 2) is a register for every x, and a channel offset of d C bytes is a choice of
// register, made at compile time. The horizontal sum of a pair is sum_kx row[kx] P(x + (kx-R) C),
// the vertical one sum_ky col[ky] H[y + ky - R]: one IMAD each handles two bytes, exactly, while
// every partial sum stays below 2^16 (no carry between the 16-bit lanes): the host takes this
// path only when sum(row) sum(col) 255 + half < 2^16 (gaussian 5x5: 16 16 255 + 128 = 65408).
// The 2-D sum is sum_ky sum_kx col[ky] row[kx] px = sum tap px, the same integer as seq's.
// Finish (SepFinish): the rounding half added packed; a power-of-two divisor has its vertical taps
// and half scaled to 256, so each quotient is the high byte of its 16-bit lane and one PRMT packs
// four output bytes; another divisor (box: 9, 25) takes byte 3 of one 32-bit product per byte;
// a centre tap that is a multiple of the divisor (unsharp, edge 3x3) is finished in the packed
// lanes too (c px + B - g, clamped per lane); anything else per byte in int32.
// Cost per output byte (8K RGB 5x5, HW = 2 halo words, 8 window words a row):
//   instructions: unpack 16 + S/T 14 PRMT, 40 IMAD horizontal, 4 SHFL, 40 IMAD vertical per 16
//   bytes and row, finish 2 ops + 1 PRMT per 4 bytes, load/store/address ~8 per 16 bytes:
//   ~125 per 16 bytes = ~7.8 per byte, i.e. 99.5 M x 7.8 / 32 = 24 M warp instructions, ~23 us
//   of issue on 132 SMs x 4 schedulers at 1.98 GHz (the MMA kernel: ~16 per byte), IMAD 5 per
//   byte = ~30 us at 64 IMAD per SM and clock: both below the 66 us memory floor.
//   bytes: 1 read + 1 write per byte from DRAM; the strip overlap re-reads (K - 1) / strip_rows
//   rows, from L2 (neighbouring strips run at the same time); the halo words of lanes 0 and 31
//   are 2 x 8 bytes per 512, from L1/L2.
//   registers: bounded to 80 at K = 5 (3 blocks of 256 a SM, a few bytes spilled) and 64 at
//   K = 3 (4 blocks): one block more a SM than the unbounded kernel, which with one row ahead
//   was the best of the ways to put more bytes in flight (more rows ahead in registers, L2 / L1
//   / bulk prefetches, 8 bytes a lane, evict-first stores: docs/decisions/018).
//   one wave: the strips are sized so that all warps are resident at once (8K K = 5: 3168
//   warps, ~62 rows each; 4K: the (K - 1) / rows re-read from L2).
// So the kernel should sit near the memory floors (66.4 and 16.6 us at 8K and 4K RGB) if the
// loaded latency is short enough. It does not: a warp's step takes about one loaded DRAM latency
// whatever the occupancy and the rows held ahead, so the rate is warps x 512 B per latency
// (docs/decisions/017, 018); hence the cp.async form (opt_sep_async.cuh).
//
// Border: zero only (replicate and reflect101 take auto's path): a row outside the image is not
// loaded (zero sums); the lane holding a row's end zeroes the padding bytes of its 16 (one masked
// word or whole zero words), so every window word its neighbours take from it is right, and
// lane 0's left and lane 31's right halo words outside the row are zero. No other border work:
// bytes past the end only ever reach a lane as zeros.
//
// The lane's work is split into __host__ __device__ steps (load, window, horizontal, vertical and
// finish) that tests/cuda/filter_sep_emulate.cu runs on the host lane by lane, with the shuffles
// done between the steps.
#pragma once
#include <cstdint>
#include <type_traits>

#include "emulable.cuh"
#include "filter/opt_common.cuh"

namespace parvis::filter {
namespace {

constexpr int kSepMaxK = 5;
constexpr int kSepLaneBytes = 16;                    // a lane's bytes of a row: 4 words
constexpr int kSepWarpBytes = 32 * kSepLaneBytes;    // a warp column

template <int K, int C>
struct SepShape {
  static constexpr int R = K / 2;
  static constexpr int HW = (R * C + 3) / 4;  // halo words each side
  static constexpr int NW = 4 + 2 * HW;       // window words: halo, the lane's 4, halo
  static_assert(HW <= 4, "the halo words come from the neighbouring lane's own words");
};

// How the vertical sums become output bytes (opt_sep_params.cuh's sep_params picks the first that is exact):
//   Pow2         a power-of-two divisor, the column taps and the half scaled to 256: each quotient
//                is the high byte of its 16-bit lane, one PRMT packs 4 output bytes;
//   PackedMagic  any other divisor whose quotients stay <= 255: y = sum + half per lane, the
//                quotient floor(y / d) = byte 3 of y M, M = ceil(2^24 / d) (one IMAD a byte, no
//                high multiply or clamp; sep_params checks every y the kernel can give);
//   Magic        else DeviceDivider's clamp and high multiply per byte;
//   CentreMul    taps = sign G + c d delta (unsharp: 2 d delta - gaussian; edge 3x3: 9 delta -
//                ones, d = 1): round_clamp(c d px + sign G, d) = clamp(c px + sign g), g the
//                rounded G (floor((G + h) / d) for sign +, floor((G + d - 1 - h) / d) for sign -,
//                h = d / 2), so g is finished in the packed lanes like Pow2 (or is G itself,
//                d = 1) and c px + B + sign g, clamped to [B, B + 255] per 16-bit lane, has the
//                output in its low byte (B a multiple of 256 that keeps every lane positive);
//   PerByte      any other centre tap or sign: sum = centre px + sign G in int32 per byte, then
//                DeviceDivider's clamps and magic (~10 instructions a byte).
enum class SepFinish { Pow2, PackedMagic, Magic, CentreMul, PerByte };
// Whether finish f takes the output row's own pixels (the centre tap).
__host__ __device__ constexpr bool sep_finish_takes_centre(SepFinish f) {
  return f == SepFinish::CentreMul || f == SepFinish::PerByte;
}
inline const char* sep_finish_name(SepFinish f) {
  switch (f) {
    case SepFinish::Pow2: return "pow2";
    case SepFinish::PackedMagic: return "packed-magic";
    case SepFinish::Magic: return "magic";
    case SepFinish::CentreMul: return "centre-mul";
    default: return "per-byte";
  }
}

// The kernel argument: taps, finish, grid.
struct SepParams {
  int32_t row[kSepMaxK], col[kSepMaxK];  // horizontal and vertical taps, >= 0
  uint32_t half2;                        // the rounding half in both 16-bit lanes (Pow2: scaled)
  SepFinish finish;
  uint32_t pmagic;                       // PackedMagic: M
  int32_t cap;                           // Magic, PerByte: DeviceDivider's cap, magic, shift
  uint32_t magic;
  int shift;
  int32_t sign, centre, half, lo;        // PerByte: sum = centre px + sign G, DeviceDivider's clamps
  uint32_t cmul;                         // CentreMul: c
  uint32_t bias2, top2;                  // CentreMul: B and B + 255 in both 16-bit lanes
  bool g_scaled;                         // CentreMul: g is the lanes' high byte (else G itself)
  int warps_x, strip_rows;  // warp columns of kSepWarpBytes per row; output rows per warp
  long long warps;          // warps_x * strips
};

__host__ __device__ __forceinline__ uint32_t sep_perm(uint32_t x, uint32_t y, uint32_t s) {
#ifdef __CUDA_ARCH__
  return __byte_perm(x, y, s);
#else
  const uint64_t b = uint64_t(x) | uint64_t(y) << 32;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= uint32_t((b >> (8 * ((s >> (4 * i)) & 7))) & 0xFFu) << (8 * i);
  return r;
#endif
}

__host__ __device__ __forceinline__ uint32_t sep_umulhi(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  return __umulhi(a, b);
#else
  return uint32_t((uint64_t(a) * b) >> 32);
#endif
}

// One source row's raw loads for a lane: its 16 bytes, and for lanes 0 and 31 the halo words
// beyond the warp (lane 0: left, lane 31: right); zeros for bytes outside the image.
template <int HW>
struct SepRaw {
  uint32_t v[4];
  uint32_t e[HW];
};

// Word `w` loaded at byte xw of a row with bytes past row_bytes zeroed (xw >= 0, multiple of 4).
__host__ __device__ __forceinline__ uint32_t sep_clip(uint32_t w, int xw, int row_bytes) {
  const int n = row_bytes - xw;  // bytes of the word inside the row
  return n >= 4 ? w : n <= 0 ? 0u : w & (0xFFFFFFFFu >> (8 * (4 - n)));
}

// The lane's 4 words at a (inside the pitch: x0 < row_bytes, pitch and x0 multiples of 16).
__host__ __device__ __forceinline__ void sep_words(const uint8_t* a, uint32_t (&v)[4]) {
  const uint4 q = ldg(reinterpret_cast<const uint4*>(a));
  v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
}

// The loads of image row y for the lane at x0 (zeros where y lies outside the image, or `fetch`
// is false: the row is past the strip's last source row). No load leaves the row's pitch.
template <int HW>
__host__ __device__ __forceinline__ SepRaw<HW> sep_load(const Geometry& g, int y, int x0, int lane, bool fetch) {
  SepRaw<HW> r;
  PARVIS_UNROLL
  for (int i = 0; i < 4; ++i) r.v[i] = 0;
  PARVIS_UNROLL
  for (int i = 0; i < HW; ++i) r.e[i] = 0;
  if (!fetch || y < 0 || y >= g.height) return r;  // the same for the whole warp
  const uint8_t* row = g.in + size_t(y) * g.pitch;
  if (x0 < g.row_bytes) {  // then x0 + 16 <= pitch (a multiple of 16)
    sep_words(row + x0, r.v);
    if (x0 + kSepLaneBytes > g.row_bytes) {  // the lane of the row's end: padding to zeros
      PARVIS_UNROLL
      for (int i = 0; i < 4; ++i) r.v[i] = sep_clip(r.v[i], x0 + 4 * i, g.row_bytes);
    }
  }
  if (lane == 0 || lane == 31) {
    const int xe = lane == 0 ? x0 - 4 * HW : x0 + kSepLaneBytes;
    PARVIS_UNROLL
    for (int i = 0; i < HW; ++i) {
      const int xw = xe + 4 * i;
      if (xw >= 0 && xw < g.row_bytes)
        r.e[i] = sep_clip(ldg(reinterpret_cast<const uint32_t*>(row + xw)), xw, g.row_bytes);
    }
  }
  return r;
}

// The lane's window of NW words (bytes x0 - 4 HW .. x0 + 16 + 4 HW): `left` = the last HW words
// of lane - 1, `right` = the first HW words of lane + 1 (lanes 0 and 31: their own halo loads).
template <int HW, int NW>
__host__ __device__ __forceinline__ void sep_window(const SepRaw<HW>& r, const uint32_t (&left)[HW],
                                                    const uint32_t (&right)[HW], int lane, uint32_t (&w)[NW]) {
  PARVIS_UNROLL
  for (int i = 0; i < HW; ++i) {
    w[i] = lane == 0 ? r.e[i] : left[i];
    w[HW + 4 + i] = lane == 31 ? r.e[i] : right[i];
  }
  PARVIS_UNROLL
  for (int i = 0; i < 4; ++i) w[HW + i] = r.v[i];
}

// The horizontal sums of the lane's 16 bytes: h[2k] = bytes (4k, 4k + 2), h[2k + 1] = bytes
// (4k + 1, 4k + 3) of its 4 words, each a packed pair of 16-bit sums.
template <int K, int C>
__host__ __device__ __forceinline__ void sep_horizontal(const uint32_t (&w)[SepShape<K, C>::NW], const SepParams& p,
                                                        uint32_t (&h)[8]) {
  using S = SepShape<K, C>;
  uint32_t e[S::NW], o[S::NW], s[S::NW - 1], t[S::NW - 1];
  PARVIS_UNROLL
  for (int j = 0; j < S::NW; ++j) {
    e[j] = sep_perm(w[j], 0, 0x4240);  // (b0, b2)
    o[j] = sep_perm(w[j], 0, 0x4341);  // (b1, b3)
  }
  PARVIS_UNROLL
  for (int j = 0; j + 1 < S::NW; ++j) {
    s[j] = sep_perm(e[j], e[j + 1], 0x5432);  // (b2 of word j, b0 of word j + 1)
    t[j] = sep_perm(o[j], o[j + 1], 0x5432);  // (b3 of word j, b1 of word j + 1)
  }
  // The pair (x, x + 2) of window bytes, x known at compile time after unrolling.
  auto pair = [&](int x) -> uint32_t {
    const int j = x >> 2;
    switch (x & 3) {
      case 0: return e[j];
      case 1: return o[j];
      case 2: return s[j];
      default: return t[j];
    }
  };
  PARVIS_UNROLL
  for (int q = 0; q < 8; ++q) {
    const int x = 4 * (S::HW + (q >> 1)) + (q & 1) - S::R * C;
    uint32_t sum = 0;
    PARVIS_UNROLL
    for (int kx = 0; kx < K; ++kx) sum += uint32_t(p.row[kx]) * pair(x + kx * C);
    h[q] = sum;
  }
}

// The lane's 16 source bytes of output row y (the centre tap's pixels, where F takes them; zeros
// otherwise). The register kernel issues this load before the step's other work, so that its
// latency (an L2 hit: the row went through the pipeline R rows earlier) is hidden; the cp.async
// kernel reads them from a history slot instead (opt_sep_async.cuh).
template <SepFinish F>
__host__ __device__ __forceinline__ void sep_centre(const Geometry& g, int y, int x0, uint32_t (&px)[4]) {
  PARVIS_UNROLL
  for (int i = 0; i < 4; ++i) px[i] = 0;
  if constexpr (sep_finish_takes_centre(F))
    if (x0 < g.row_bytes) sep_words(g.in + size_t(y) * g.pitch + x0, px);
}

// Per 16-bit lane max / min (CentreMul's clamp; one VIMNMX on sm_90).
__host__ __device__ __forceinline__ uint32_t sep_max2(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  return __vmaxu2(a, b);
#else
  return ((a & 0xFFFFu) > (b & 0xFFFFu) ? a & 0xFFFFu : b & 0xFFFFu) | ((a >> 16) > (b >> 16) ? a >> 16 : b >> 16) << 16;
#endif
}
__host__ __device__ __forceinline__ uint32_t sep_min2(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  return __vminu2(a, b);
#else
  return ((a & 0xFFFFu) < (b & 0xFFFFu) ? a & 0xFFFFu : b & 0xFFFFu) | ((a >> 16) < (b >> 16) ? a >> 16 : b >> 16) << 16;
#endif
}

// The 4 output bytes of the vertical sums ve (pixels 4k, 4k + 2 in its 16-bit lanes) and vo
// (4k + 1, 4k + 3), px the 4 source bytes (CentreMul, PerByte). See SepFinish; F = p.finish,
// compiled in (sep_with_finish).
template <SepFinish F>
__host__ __device__ __forceinline__ uint32_t sep_finish(uint32_t ve, uint32_t vo, uint32_t px, const SepParams& p) {
  if constexpr (F == SepFinish::Pow2) {  // bytes 1 and 3 of (ve, vo)
    return sep_perm(ve, vo, 0x7351);
  } else if constexpr (F == SepFinish::PackedMagic) {  // byte 3 of each lane's y M, gathered
    const uint32_t q0 = (ve & 0xFFFFu) * p.pmagic, q1 = (vo & 0xFFFFu) * p.pmagic;
    const uint32_t q2 = (ve >> 16) * p.pmagic, q3 = (vo >> 16) * p.pmagic;
    return sep_perm(sep_perm(q0, q1, 0x0073), sep_perm(q2, q3, 0x0073), 0x5410);
  } else if constexpr (F == SepFinish::CentreMul) {  // c px + B + sign g per lane, clamped to [B, B + 255]
    const uint32_t ge = p.g_scaled ? sep_perm(ve, 0, 0x4341) : ve, go = p.g_scaled ? sep_perm(vo, 0, 0x4341) : vo;
    uint32_t te = sep_perm(px, 0, 0x4240) * p.cmul + p.bias2, to = sep_perm(px, 0, 0x4341) * p.cmul + p.bias2;
    if (p.sign < 0) te -= ge, to -= go;
    else te += ge, to += go;
    te = sep_min2(sep_max2(te, p.bias2), p.top2);
    to = sep_min2(sep_max2(to, p.bias2), p.top2);
    return sep_perm(te, to, 0x6240);  // the low bytes
  } else if constexpr (F == SepFinish::PerByte) {
    auto q = [&](uint32_t gsum, int b) {
      const int32_t sum = p.centre * int32_t((px >> (8 * b)) & 0xFFu) + p.sign * int32_t(gsum);
      const int32_t t = sum + p.half < p.lo ? p.lo : sum + p.half > p.cap ? p.cap : sum + p.half;
      return sep_umulhi(uint32_t(t), p.magic) >> p.shift;
    };
    return q(ve & 0xFFFFu, 0) | q(vo & 0xFFFFu, 1) << 8 | q(ve >> 16, 2) << 16 | q(vo >> 16, 3) << 24;
  } else {  // Magic
    auto q = [&](uint32_t t) { return sep_umulhi(t < uint32_t(p.cap) ? t : uint32_t(p.cap), p.magic) >> p.shift; };
    return q(ve & 0xFFFFu) | q(vo & 0xFFFFu) << 8 | q(ve >> 16) << 16 | q(vo >> 16) << 24;
  }
}

// fn(std::integral_constant<SepFinish, F>) for the F that compiles finish f (kernels and emulation).
#pragma nv_exec_check_disable
template <typename Fn>
__host__ __device__ __forceinline__ auto sep_with_finish(SepFinish f, Fn&& fn) {
  using SF = SepFinish;
  if (f == SF::Pow2) return fn(std::integral_constant<SF, SF::Pow2>{});
  if (f == SF::PackedMagic) return fn(std::integral_constant<SF, SF::PackedMagic>{});
  if (f == SF::CentreMul) return fn(std::integral_constant<SF, SF::CentreMul>{});
  if (f == SF::PerByte) return fn(std::integral_constant<SF, SF::PerByte>{});
  return fn(std::integral_constant<SF, SF::Magic>{});
}

// Output row from the last K rows of horizontal sums (ring[0] the topmost) and the centre pixels:
// the vertical sums, finished, as the lane's 4 output words.
template <int K, SepFinish F>
__host__ __device__ __forceinline__ void sep_vertical_finish(const uint32_t (&ring)[K][8], const SepParams& p,
                                                             const uint32_t (&px)[4], uint32_t (&out)[4]) {
  PARVIS_UNROLL
  for (int k = 0; k < 4; ++k) {
    uint32_t ve = p.half2, vo = p.half2;
    PARVIS_UNROLL
    for (int ky = 0; ky < K; ++ky) {
      ve += uint32_t(p.col[ky]) * ring[ky][2 * k];
      vo += uint32_t(p.col[ky]) * ring[ky][2 * k + 1];
    }
    out[k] = sep_finish<F>(ve, vo, px[k], p);
  }
}

// Where warp `wid` works: its first byte, output rows [ys, ye).
struct SepWarp {
  int xw, ys, ye;
};
__host__ __device__ __forceinline__ SepWarp sep_warp(const Geometry& g, const SepParams& p, long long wid) {
  SepWarp s;
  s.xw = int(wid % p.warps_x) * kSepWarpBytes;
  s.ys = int(wid / p.warps_x) * p.strip_rows;
  s.ye = s.ys + p.strip_rows < g.height ? s.ys + p.strip_rows : g.height;
  return s;
}

#ifdef __CUDACC__
// One source row through the pipeline: the row loaded ahead (`ahead`) is consumed, source row
// `next` is loaded in its place, the horizontal sums of the consumed row enter the ring.
template <int K, int C>
__device__ __forceinline__ void sep_step(const Geometry& g, const SepParams& p, const SepWarp& sw, int lane,
                                         SepRaw<SepShape<K, C>::HW>& ahead, uint32_t (&ring)[K][8], int next, int last) {
  using S = SepShape<K, C>;
  const int x0 = sw.xw + kSepLaneBytes * lane;
  const SepRaw<S::HW> cur = ahead;
  ahead = sep_load<S::HW>(g, next, x0, lane, next <= last);
#pragma unroll
  for (int r = 0; r + 1 < K; ++r)
#pragma unroll
    for (int i = 0; i < 8; ++i) ring[r][i] = ring[r + 1][i];
  uint32_t left[S::HW], right[S::HW], w[S::NW];
#pragma unroll
  for (int i = 0; i < S::HW; ++i) {
    left[i] = __shfl_up_sync(0xffffffffu, cur.v[4 - S::HW + i], 1);
    right[i] = __shfl_down_sync(0xffffffffu, cur.v[i], 1);
  }
  sep_window<S::HW, S::NW>(cur, left, right, lane, w);
  sep_horizontal<K, C>(w, p, ring[K - 1]);
}

// One warp's strip: each source row loaded one row ahead of its step.
template <int K, int C, SepFinish F>
__device__ __forceinline__ void sep_warp_rows(const Geometry& g, const SepParams& p) {
  using S = SepShape<K, C>;
  const int lane = threadIdx.x & 31;
  const long long wid = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (wid >= p.warps) return;  // whole warps
  const SepWarp sw = sep_warp(g, p, wid);
  const int x0 = sw.xw + kSepLaneBytes * lane;
  const int first = sw.ys - S::R, last = sw.ye - 1 + S::R;  // source rows of the strip
  SepRaw<S::HW> ahead = sep_load<S::HW>(g, first, x0, lane, first <= last);
  uint32_t ring[K][8];
#pragma unroll
  for (int r = 0; r < K - 1; ++r) sep_step<K, C>(g, p, sw, lane, ahead, ring, first + r + 1, last);
#pragma unroll K
  for (int y = sw.ys; y < sw.ye; ++y) {
    uint32_t px[4], out[4];
    sep_centre<F>(g, y, x0, px);
    sep_step<K, C>(g, p, sw, lane, ahead, ring, y + S::R + 1, last);
    sep_vertical_finish<K, F>(ring, p, px, out);
    if (x0 < g.row_bytes)
      *reinterpret_cast<uint4*>(g.out + size_t(y) * g.pitch + x0) = make_uint4(out[0], out[1], out[2], out[3]);
  }
}

// At most 256 threads a block; 3 blocks a SM at K = 5 (80 registers, a few bytes spilled), 4 at
// K = 3 (64): one block more than the kernel needs unbounded (decision 018). F: the finish
// compiled in (opt_sep_plan.cuh's with_sep_kernel picks the kernel by p.finish, so that no finish
// pays for another's registers).
template <int K, int C, SepFinish F>
__global__ void __launch_bounds__(256, K == 3 ? 4 : 3) convolve_sep(Geometry g, SepParams p) {
  sep_warp_rows<K, C, F>(g, p);
}
#endif

}  // namespace
}  // namespace parvis::filter
