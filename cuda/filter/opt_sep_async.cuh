// cuda-opt's separable filter kernel with the source rows staged in shared memory by cp.async
// (sep's form from compute capability 8.0; filter.sep_async=0 takes the register kernel of
// opt_sep.cuh). The arithmetic is opt_sep.cuh's, step for step (sep_horizontal,
// sep_vertical_finish, sep_centre: the same packed 16-bit sums, the same finish, the same bits);
// only where a lane's window words come from changes.
//
// Why (Nsight Compute on the register kernel, docs/decisions/017-018): the register kernel
// keeps its rows in flight in registers, one row of 512 B a warp, so a warp's step waits about
// one loaded DRAM latency (~1.4 us), and its halo and row ahead cost instructions and registers
// (80 with spills, ~300 warp instructions a row step). Here a warp owns a ring of NS row slots in shared
// memory; the copies of the next NS - 1 rows are in flight in the copy engine's path (cp.async,
// no registers held) while the warp computes the current row, and the zero border is the
// zero-fill of cp.async (src-size below 16): no clipping, no shuffles, no lane-0/31 halo loads.
//
// Slot layout (one source row, one warp): 34 chunks of 16 bytes, chunk c = row bytes
// [xw - 16 + 16 c, xw + 16 c): the warp's 512 bytes and 16 bytes of halo each side (HW <= 4
// words). Lane l copies chunk l + 1; lanes 0 and 1 also copy chunks 0 and 33. A chunk outside the
// row (x < 0, x >= row_bytes) or a row outside the image is zero-filled (src-size 0), a chunk
// across the row's end copies its bytes inside the row and zero-fills the rest, so the window
// words of every lane are those opt_sep.cuh's sep_load + sep_window give.
//
// The finishes that take the centre pixels (CentreMul, PerByte: unsharp, edge 3x3) keep R more
// slots a warp, the rows behind the one read: the output row t - R is still in its slot at step
// t, so its pixels are one shared-memory load (no second read from L2). The row copied at
// step t then lands in the slot of row t - R - 1.
//
// Pipeline (per warp; source rows t = 0 .. n - 1 of the strip, t = 0 is row ys - R):
//   prologue: copy rows 0 .. NS - 2 into slots 0 .. NS - 2, one commit group each;
//   step t:   __syncwarp (every lane has read slot (t - 1) % NS), copy row t + NS - 1 into it,
//             commit; wait until at most NS - 1 groups are pending (row t has landed for this
//             lane), __syncwarp (and for the other lanes); read the window of row t from slot
//             t % NS; horizontal sums into ring slot t % K; from t = K - 1 on, the vertical sums of
//             rows t - 2R .. t finish output row ys + t - 2R.
// The row loop is unrolled by K so that the ring's slots are registers named at compile time.
//
// Counting (8K RGB 5x5, per warp row step of 512 bytes): ~2 cp.async + address ~8, 3 LDS, 30
// PRMT unpack, 40 + 40 IMAD, finish 4 PRMT (a power-of-two divisor), store ~4, loop ~6: ~140
// warp instructions; Nsight Compute counts more (the counts, and the register kernel's, in
// docs/decisions/017), still fewer than the register kernel's. Bytes in flight: (NS - 1)
// x 544 a warp, NS = 4 and 24 warps a SM: 39 KB a SM. Shared memory: warps a block x (NS +
// history) x 544 bytes (8 x 4 x 544 = 17 KB a block of 256; 8 x 6 x 544 = 26 KB for unsharp 5x5).
// NS = 4 (kSepAsyncSlots): 6 slots were slower on every measured workload (decision 017).
#pragma once
#include "filter/opt_sep.cuh"

namespace parvis::filter {
namespace {

constexpr int kSepAsyncChunks = 34;  // 16-byte chunks a slot: 32 lanes x 16 + 2 halo chunks
constexpr int kSepAsyncSlotBytes = kSepAsyncChunks * 16;
constexpr int kSepAsyncSlots = 4;    // NS: the slots a warp copies rows into, NS - 1 in flight

// The slots a warp keeps besides its NS: the R rows behind the one read, for the finishes that
// take the centre pixels (CentreMul, PerByte): they read them from the slot of the output row
// instead of loading them again from L2.
__host__ __device__ constexpr int sep_async_history(SepFinish f, int K) {
  return sep_finish_takes_centre(f) ? K / 2 : 0;
}

// Shared memory for `threads` threads a block: NS slots a warp, plus the history.
inline size_t sep_async_smem_bytes(int threads, SepFinish f, int K) {
  return size_t(threads / 32) * size_t(kSepAsyncSlots + sep_async_history(f, K)) * kSepAsyncSlotBytes;
}

// Chunk `c` of a row for the warp at byte xw: its first byte x in the row and the bytes of it that
// lie inside the row (0: the whole chunk is zero-filled). The same for every row, so a lane works
// it out once; a row outside the image copies 0 bytes. x is a multiple of 16, as the pitch is, so
// a 16-byte copy never leaves the row's pitch.
struct SepAsyncChunk {
  int x, bytes;
};
__host__ __device__ __forceinline__ SepAsyncChunk sep_async_chunk(const Geometry& g, int xw, int c) {
  const int x = xw - 16 + 16 * c, n = g.row_bytes - x;
  return SepAsyncChunk{x, x < 0 || n <= 0 ? 0 : n < 16 ? n : 16};
}

// The lane's window of NW words from a slot: bytes x0 - 4 HW .. x0 + 16 + 4 HW of the row.
template <int HW, int NW>
__host__ __device__ __forceinline__ void sep_async_window(const uint8_t* slot, int lane, uint32_t (&w)[NW]) {
  const uint32_t* mid = reinterpret_cast<const uint32_t*>(slot + 16 * (lane + 1));
  const uint4 v = *reinterpret_cast<const uint4*>(mid);
  PARVIS_UNROLL
  for (int i = 0; i < HW; ++i) {
    w[i] = mid[i - HW];
    w[HW + 4 + i] = mid[4 + i];
  }
  w[HW] = v.x, w[HW + 1] = v.y, w[HW + 2] = v.z, w[HW + 3] = v.w;
}

// The lane's own 16 bytes of the row in a slot (the centre pixels).
__host__ __device__ __forceinline__ void sep_async_centre(const uint8_t* slot, int lane, uint32_t (&px)[4]) {
  const uint4 v = *reinterpret_cast<const uint4*>(slot + 16 * (lane + 1));
  px[0] = v.x, px[1] = v.y, px[2] = v.z, px[3] = v.w;
}

#ifdef __CUDACC__
__device__ __forceinline__ void sep_async_copy16(uint8_t* dst, const uint8_t* src, int bytes) {
#if __CUDA_ARCH__ >= 800
  const unsigned d = unsigned(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(bytes) : "memory");
#else  // no cp.async below 8.0: a synchronous copy with the same zero-fill
  uint4 v = make_uint4(0, 0, 0, 0);
  if (bytes == 16) {
    v = ldg(reinterpret_cast<const uint4*>(src));
  } else if (bytes > 0) {
    uint32_t w[4] = {0, 0, 0, 0};
    for (int i = 0; i < bytes; ++i) w[i >> 2] |= uint32_t(src[i]) << (8 * (i & 3));
    v = make_uint4(w[0], w[1], w[2], w[3]);
  }
  *reinterpret_cast<uint4*>(dst) = v;
#endif
}
__device__ __forceinline__ void sep_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void sep_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

// A lane's copies of every row: chunk lane + 1, and for lanes 0 and 1 the halo chunks 0 and 33.
struct SepAsyncLane {
  SepAsyncChunk own, halo;
  int halo_c;  // the halo chunk's index, -1: none
};
__host__ __device__ __forceinline__ SepAsyncLane sep_async_lane(const Geometry& g, int xw, int lane) {
  SepAsyncLane l;
  l.own = sep_async_chunk(g, xw, lane + 1);
  l.halo_c = lane == 0 ? 0 : lane == 1 ? kSepAsyncChunks - 1 : -1;
  l.halo = sep_async_chunk(g, xw, l.halo_c < 0 ? 0 : l.halo_c);
  return l;
}

// Image row y (starting `row_off` bytes into the image) into `slot`, when `fetch` (a row past the
// strip's is not copied; the group is committed all the same, so the count of groups holds).
__device__ __forceinline__ void sep_async_row(const Geometry& g, const SepAsyncLane& l, uint8_t* slot, int y,
                                              long long row_off, int lane, bool fetch) {
  if (fetch) {
    const bool inside = unsigned(y) < unsigned(g.height);
    const uint8_t* row = g.in + (inside ? row_off : 0);
    sep_async_copy16(slot + 16 * (lane + 1), inside && l.own.bytes ? row + l.own.x : g.in, inside ? l.own.bytes : 0);
    if (l.halo_c >= 0)
      sep_async_copy16(slot + 16 * l.halo_c, inside && l.halo.bytes ? row + l.halo.x : g.in, inside ? l.halo.bytes : 0);
  }
  sep_async_commit();
}

// One warp's strip.
template <int K, int C, SepFinish F>
__device__ __forceinline__ void sep_async_warp_rows(const Geometry& g, const SepParams& p) {
  constexpr int NS = kSepAsyncSlots;
  using S = SepShape<K, C>;
  static_assert(S::HW <= 4, "the halo fits one chunk each side");
  static_assert(NS >= 2, "one slot in use, one in flight at least");
  extern __shared__ uint4 sep_async_smem[];
  const int lane = threadIdx.x & 31;
  const long long wid = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (wid >= p.warps) return;  // whole warps; no block-wide barrier below
  constexpr int NSL = NS + sep_async_history(F, K);  // the slots of a warp
  uint8_t* const slots = reinterpret_cast<uint8_t*>(sep_async_smem) + size_t(threadIdx.x >> 5) * NSL * kSepAsyncSlotBytes;
  const SepWarp sw = sep_warp(g, p, wid);
  const SepAsyncLane l = sep_async_lane(g, sw.xw, lane);
  const int x0 = sw.xw + 16 * lane;
  const bool stores = x0 < g.row_bytes;
  const int first = sw.ys - S::R;
  const int n = sw.ye - sw.ys + 2 * S::R;  // source rows of the strip
  const long long pitch = (long long)g.pitch;
  // Everything a step advances by one row (no multiply or modulo in the loop): the row copied
  // (y_next, its offset, its slot), the slot read, the output row's address.
  int y_next = first;
  long long off_next = (long long)first * pitch;
#pragma unroll
  for (int t = 0; t + 1 < NS; ++t, ++y_next, off_next += pitch)
    sep_async_row(g, l, slots + t * kSepAsyncSlotBytes, y_next, off_next, lane, t < n);
  uint8_t* slot_copy = slots + (NS - 1) * kSepAsyncSlotBytes;
  const uint8_t* slot_read = slots;
  const uint8_t* slot_centre = slots + (NSL - S::R) * kSepAsyncSlotBytes;  // row t - R (history only)
  uint8_t* out_row = g.out + size_t(sw.ys) * g.pitch + x0;
  auto advance = [&](auto& ptr) { ptr = ptr + kSepAsyncSlotBytes == slots + NSL * kSepAsyncSlotBytes ? slots : ptr + kSepAsyncSlotBytes; };
  uint32_t ring[K][8];
  for (int t0 = 0; t0 < n; t0 += K) {
#pragma unroll
    for (int j = 0; j < K; ++j) {  // ring slot j = t % K, named at compile time
      const int t = t0 + j;
      if (t < n) {
        __syncwarp();  // every lane has read slot_copy (the slot of row t - 1 - H)
        sep_async_row(g, l, slot_copy, y_next, off_next, lane, t + NS - 1 < n);
        ++y_next, off_next += pitch;
        advance(slot_copy);
        sep_async_wait<NS - 1>();
        __syncwarp();  // row t has landed for every lane
        uint32_t w[S::NW];
        sep_async_window<S::HW, S::NW>(slot_read, lane, w);
        advance(slot_read);
        sep_horizontal<K, C>(w, p, ring[j]);
        if (t >= K - 1) {
          uint32_t ordered[K][8];  // the last K rows, oldest first: register names only
#pragma unroll
          for (int ky = 0; ky < K; ++ky)
#pragma unroll
            for (int i = 0; i < 8; ++i) ordered[ky][i] = ring[(j + 1 + ky) % K][i];
          uint32_t px[4] = {0, 0, 0, 0}, out[4];  // the output row's pixels (history slots only)
          if constexpr (NSL > NS) sep_async_centre(slot_centre, lane, px);
          sep_vertical_finish<K, F>(ordered, p, px, out);
          if (stores) *reinterpret_cast<uint4*>(out_row) = make_uint4(out[0], out[1], out[2], out[3]);
          out_row += pitch;
        }
        if constexpr (NSL > NS) advance(slot_centre);
      }
    }
  }
  sep_async_wait<0>();  // nothing left in flight into shared memory at exit
}

// 256 threads a block at most; 3 blocks a SM at K = 5 (85 registers), 4 at K = 3 (64). F: the
// finish compiled in, as for convolve_sep.
template <int K, int C, SepFinish F>
__global__ void __launch_bounds__(256, K == 3 ? 4 : 3) convolve_sep_async(Geometry g, SepParams p) {
  sep_async_warp_rows<K, C, F>(g, p);
}
#endif

}  // namespace
}  // namespace parvis::filter
