// Template matching — SSD, CUDA optimized (and SAD) — cuda-opt.
//
// Two methods, both exact (bit-identical to seq), chosen by `auto` with a measured cost model
// (see choose(); `--explain` prints both estimates). Top 1 without a map is the fast path:
// everything stays on the GPU and only a 32-byte record comes back, written by the last block
// of the last kernel straight into mapped host memory (no copy after the graph; where the device
// cannot map host memory, a copy). --top K > 1 or --map take the map paths (the map comes back;
// the host picks the K best). Maps of the direct method and of the NTT are exact; cuFFT maps
// are approximate except at re-scored positions.
//
// FFT method (SSD only; seed 000's pipeline, optimized):  SSD(x,y) = S2(x,y) - 2 C(x,y) + T2.
// Two implementations of C, picked per template and size (ntt_eligible()):
//
// (a) Exact NTT (match/ntt.hpp) when every correlation value 255 sum(T) stays below the prime
//     p = 15 * 2^27 + 1 (templates up to ~176x176 whatever their content, larger dark ones),
//     the SSD fits 32 bits and a row fits in shared memory. The DFT over the integers mod p:
//     C comes out exact in 32-bit words, so no rounding bound and no re-scoring, and half the
//     bytes of double precision. Sizes 2^a x {1, 3, 5, 15} >= the source (P x Q, no wrap-around
//     at valid positions). The template's spectrum (flipped template, Montgomery form, 1/(P Q)
//     folded in) is made once per source size by the same kernels.
//     N1. window_col_sums   V(y,x) = sum of I^2 down h rows, sliding (a side branch of the graph,
//                           beside N2-N3);
//     N2. ntt_rows_forward  one block per source row: u8 -> zero-padded P words -> forward NTT in
//                           shared memory (no reordering: digit-reversed out);
//     N3. ntt_columns       8 columns per block (32-byte row segments): forward NTT down each
//                           column, times the template's spectrum, inverse NTT, valid rows back;
//     N4. ntt_rows_ssd      one block per valid row: inverse NTT -> C exactly; S2 = a block scan
//                           of V along the row; SSD in 32 bits; (score, y, x) key minimum with
//                           one atomicMin per block, as the direct kernel does.
//
// (b) cuFFT in double otherwise (large or bright templates: the capsule 479x432), with exact
//     re-scoring of the near-minimum positions:
//   1. prepare_rows      one block per row, warp-striped (coalesced): u8 source -> the zero-
//                        padded double FFT input AND the row prefix sums of the squares
//                        (thread -> warp __shfl_up_sync scan -> block, the seed's
//                        warpPrefixSum / blockPrefixSum / block offsets) in one pass;
//   2. col_tile_sums     column totals of 32x64 tiles (coalesced: a warp reads 32 columns);
//   3. col_scan_tiles    each tile adds the totals of the tiles above and scans its columns.
//                        Together 2+3 replace the seed's transpose / scan / transpose: rows of
//                        32 columns are already coalesced, so no 32x33 transpose is needed;
//   4. cuFFT D2Z         plans made once per source size and kept; the size is the fastest of
//                        a few timed candidates (4096x2304 beats 3840x2160 in double);
//   5. mul_spectrum      times the template's conjugate spectrum, pre-scaled by 1/(P Q) once
//                        per size (conjugate, multiply and scale fused);
//   6. cuFFT Z2D         -> C at every valid position (P >= W, Q >= H suffices: no wrap-around);
//   7. ssd_min           the FFT score of every position, block minimum, atomicMin (no map);
//   8. collect           blocks whose minimum lies within 2E of the global one list their
//                        positions within 2E (E: the rounding bound, match/fft_common.cuh);
//   9. rescore_select    exact integer SSD of each listed position, spread over the whole GPU
//                        in ~1024-pixel chunks with 64-bit atomicAdd; the last block to finish
//                        picks the best by (score, y, x).
//   Integral images use 32-bit words when every window sum fits (w h 255^2 < 2^32): window
//   sums are differences of four entries and modular arithmetic keeps them exact; otherwise
//   64-bit words. Double precision because the rounding bound must be small enough to re-score
//   only near-ties (fft_common.cuh). PARVIS_NO_NTT=1 forces this path (tests/gpu_check.sh).
// Either sequence is one CUDA graph per source size.
//
// Direct method (SSD and SAD; seed 003 optimized): direct_dp4a. Each thread computes 4
// horizontally adjacent positions x R rows (R = 4 or 8, see direct_rows()). Source rows are
// read once as 32-bit words and reused for the R positions below (register blocking); the 4
// byte-shifted views of a word come from __byte_perm; __dp4a does 4 multiply-adds at once
// (SSD = S2 - 2 C + T2 with S2 = sum of dp4a(s, s)); SAD uses __vabsdiffu4 then dp4a with 1s.
// Which outputs a source row feeds is known at compile time (direct_row): no predicates.
// Templates up to 32 px wide get a kernel with the row length fixed at compile time. The
// template lives in shared memory (packed words, broadcast reads). Score and position are fused
// into one 64-bit key (score << 32 | y * map_w + x): the tie rule is then just the smaller key,
// found with a block reduction and one atomicMin per block. Source reads go through L1 (__ldg),
// not a shared-memory tile: every word a warp needs is one coalesced 128-byte row segment that
// the R rows of outputs and the 4 shifts reuse from registers (seed 003 saw no gain from a
// tile either). Templates too large for 32-bit sums (w h 255^2 >= 2^32) or for 44 KiB of shared
// memory take the generic exact kernel (one block per position).
//
// Bench (H100 80GB HBM3, CUDA 13, bench/cuda_match_timing.cpp; compute = CUDA events around
// the graph, source already on the GPU, 32-byte result not included; median of 30; see
// bench/README.md for the stage tables and floors):
//   1326x1025 / 479x432 fft (cuFFT)   126 us   (cuFFT D2Z+Z2D 1344x1152 double: 80 us of it)
//   3840x2160 / 128x128 fft (NTT)     434-440 us (3840x2560: rows 77, columns 240, rows+SSD 100)
//   1920x1080 / 16x16   direct        25-28 us median over runs, 21.5-23 us min (SAD alike);
//                                     the result then reaches the host in ~1 us (mapped record)
//   1200x1983 / 150x150 fft (NTT)     150 us;   640x480 / 64x64 fft (NTT) 34 us
// Largest |FFT score - exact| measured with cuFFT: 5.7e-6 on 1326x1025/479x432 (bound < 10).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "common.cuh"
#include "match/fft_common.cuh"
#include "match/match_common.hpp"
#include "match/ntt.hpp"
#include "scan.cuh"

namespace parvis::match {

using cuda::BlockScratch;
using cuda::DeviceBuffer;
using cuda::div_up;
using cuda::PinnedBuffer;

namespace {

// ================================================================================ constants
constexpr int kRowThreads = 256;             // prepare_rows: one block per row
constexpr int kRowItems = 8;                 // pixels per thread and segment
constexpr int kRowSegment = kRowThreads * kRowItems;
constexpr int kColTileW = 32, kColTileH = 64, kColThreadsY = 8;  // column pass tiles
constexpr int kColItems = kColTileH / kColThreadsY;
constexpr int kMapBlockX = 32, kMapBlockY = 8, kMapRows = 4;  // ssd_min / collect
constexpr int kCandidateCap = 4096;             // fused path; more -> the map path
constexpr int kRescoreThreads = 256;
constexpr int kDirectBlockX = 32, kDirectBlockY = 4;  // direct_dp4a: 128 threads
constexpr size_t kDirectMaxTemplateBytes = 44 * 1024;  // + static smem stays under 48 KiB (every arch)
constexpr int kNttThreads = 256;                   // the NTT row kernels: one row per block
constexpr int kNttColThreads = 1024;              // ntt_columns: 2 blocks of 8 columns per SM
constexpr int kVsumThreads = 64, kVsumRows = 32;   // window_col_sums

// Measured on an H100 (see the bench notes at the end of this file): the cost model of `auto`.
// direct_dp4a: a thread issues ~(R + h - 1) nw (4 + 5 R) instructions; one "wave" holds
// SMs x 640 threads at R = 8 (5 blocks of 128 per SM) or SMs x 1024 at R = 4 (8 blocks), and
// a wave takes one thread's instruction count x kDirectUsPerOp (issue-bound; refitted after the
// kFull rows of direct_row: 0.012 at 1920x1080/16x16, 0.0097 at 32x32, 0.008-0.009 at R = 8
// (1920x1080/64x64, 3840x2160/128x128); grids far below one wave run ~2x faster per
// instruction (640x480/64x64, 800x500/100x60: 0.004), which only makes `auto` cautious there).
constexpr double kDirectUsPerOp = 0.010;
constexpr double kDirectFixedUs = 4.0;
constexpr double kGenericMacsPerUs = 2.0e6;  // the generic exact kernel (one block per window)
// The FFT pipeline, per point of the smallest 7-smooth padded size (the timed size is often
// larger but faster): 1326x1025 125 us, 1920x1080 137 us, 1200x1983 187 us, 3840x2160 601 us.
constexpr double kFftUsPerPoint = 6.5e-5;
constexpr double kFftFixedUs = 28.0;
// The NTT pipeline, per point of its padded size (fitted on 640x480, 960x512, 1920x1280,
// 1280x2048 and 3840x2560: 40, 46, 124, 155, 441 us).
constexpr double kNttUsPerPoint = 4.3e-5;
constexpr double kNttFixedUs = 18.0;

// The working record of a fused run on the device, and (the same layout) its result: the last
// block of the last kernel writes the result into mapped host memory where the device can
// (then nothing is copied after the graph: the 32 bytes arrive with the kernel), else into a
// device record that is copied back.
struct DeviceOut {
  unsigned long long min_key;  // FFT: order_key(smallest FFT score); direct: score<<32 | index
  unsigned int count;          // near-minimum candidates found (may exceed the cap)
  unsigned int done;           // blocks finished (last-block selection)
  unsigned long long best_score;
  int best_x, best_y;
};
constexpr DeviceOut kCleanRecord = {~0ull, 0u, 0u, 0ull, 0, 0};

// Thread 0 of each of `blocks` blocks, after folding its minimum into rec->min_key: the last one
// to arrive publishes the minimum into *result and leaves rec clean (min_key ~0, done 0) for the
// next run, so that a one-kernel graph needs no reset node. The fences order every block's
// atomicMin before its ticket, and the tickets before the last block's read.
__device__ __forceinline__ void publish_min_key(DeviceOut* rec, DeviceOut* result,
                                                unsigned int blocks) {
  __threadfence();
  if (atomicAdd(&rec->done, 1u) != blocks - 1) return;
  __threadfence();
  result->min_key = atomicExch(&rec->min_key, ~0ull);
  atomicExch(&rec->done, 0u);
}

// ================================================================================ kernels
// ---- 1. prepare_rows: FFT input + row scan of the squares, one pass over the source -------
// Work is warp-striped so that every load and store of a warp covers consecutive pixels
// (fully coalesced): warp w of the block owns 256 consecutive pixels of a 2048-pixel segment,
// lane l handles pixels k * 32 + l of them (k = 0..7). Scan, CUB style: thread (its square)
// -> warp (__shfl_up_sync inclusive scan, carried across the 8 steps) -> block (the 8 warp
// totals in shared memory) -> row (a carry across segments).
template <typename IT>
__global__ __launch_bounds__(kRowThreads) void prepare_rows(const uint8_t* src, size_t pitch, int W,
                                                            int H, double* fft_in, int P,
                                                            IT* row_scan, int ld, DeviceOut* out) {
  constexpr int kWarps = kRowThreads / cuda::kWarp;
  __shared__ IT warp_total[kWarps];
  const int y = blockIdx.x, tid = threadIdx.x;
  const int lane = tid & (cuda::kWarp - 1), warp = tid / cuda::kWarp;
  if (y == 0 && tid == 0 && out) {  // reset the run's record (stream order: before its users)
    out->min_key = ~0ull;
    out->count = 0;
    out->done = 0;
  }
  double* frow = fft_in + size_t(y) * P;
  if (y >= H) {  // padding rows of the FFT input
    for (int x = tid; x < P; x += kRowThreads) frow[x] = 0.0;
    return;
  }
  const uint8_t* srow = src + size_t(y) * pitch;
  IT* rrow = row_scan + size_t(y) * ld;
  IT carry = 0;
  for (int seg = 0; seg < W; seg += kRowSegment) {
    const int xw = seg + warp * (cuda::kWarp * kRowItems);
    IT v[kRowItems], run = 0;
#pragma unroll
    for (int k = 0; k < kRowItems; ++k) {
      const int x = xw + k * cuda::kWarp + lane;
      const uint32_t p = x < W ? srow[x] : 0u;
      if (x < W) frow[x] = double(p);
      v[k] = cuda::warp_inclusive_sum(IT(p * p)) + run;
      run = __shfl_sync(cuda::kFullMask, v[k], cuda::kWarp - 1);
    }
    if (lane == 0) warp_total[warp] = run;
    __syncthreads();
    IT offset = carry, total = 0;
#pragma unroll
    for (int w2 = 0; w2 < kWarps; ++w2) {
      const IT t = warp_total[w2];
      if (w2 < warp) offset += t;
      total += t;
    }
    __syncthreads();  // warp_total is rewritten by the next segment
#pragma unroll
    for (int k = 0; k < kRowItems; ++k) {
      const int x = xw + k * cuda::kWarp + lane;
      if (x < W) rrow[x] = offset + v[k];
    }
    carry += total;
  }
  for (int x = W + tid; x < P; x += kRowThreads) frow[x] = 0.0;  // padding columns
}

// ---- 2. col_tile_sums: the column totals of each 32 x 64 tile ---------------------------------
template <typename IT>
__global__ __launch_bounds__(kColTileW* kColThreadsY) void col_tile_sums(const IT* data, int ld,
                                                                         int W, int H,
                                                                         IT* tile_sums) {
  __shared__ IT part[kColThreadsY][kColTileW];
  const int x = blockIdx.x * kColTileW + threadIdx.x;
  const int r0 = blockIdx.y * kColTileH + threadIdx.y * kColItems;
  IT s = 0;
  if (x < W) {
#pragma unroll
    for (int i = 0; i < kColItems; ++i)
      if (r0 + i < H) s += data[size_t(r0 + i) * ld + x];
  }
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && x < W) {
    IT t = 0;
#pragma unroll
    for (int k = 0; k < kColThreadsY; ++k) t += part[k][threadIdx.x];
    tile_sums[size_t(blockIdx.y) * ld + x] = t;
  }
}

// ---- 3. col_scan_tiles: carry from the tiles above + scan down each column of the tile ------
template <typename IT>
__global__ __launch_bounds__(kColTileW* kColThreadsY) void col_scan_tiles(IT* data, int ld, int W,
                                                                          int H,
                                                                          const IT* tile_sums) {
  __shared__ IT part[kColThreadsY][kColTileW];
  __shared__ IT carry[kColTileW];
  const int x = blockIdx.x * kColTileW + threadIdx.x;
  const int r0 = blockIdx.y * kColTileH + threadIdx.y * kColItems;
  if (threadIdx.y == 0) {
    IT c = 0;
    if (x < W)
      for (int t = 0; t < int(blockIdx.y); ++t) c += tile_sums[size_t(t) * ld + x];
    carry[threadIdx.x] = c;
  }
  IT v[kColItems], acc = 0;
#pragma unroll
  for (int i = 0; i < kColItems; ++i) {
    v[i] = (x < W && r0 + i < H) ? data[size_t(r0 + i) * ld + x] : IT(0);
    acc += v[i];
    v[i] = acc;
  }
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  IT offset = carry[threadIdx.x];
  for (int k = 0; k < int(threadIdx.y); ++k) offset += part[k][threadIdx.x];
  if (x < W) {
#pragma unroll
    for (int i = 0; i < kColItems; ++i)
      if (r0 + i < H) data[size_t(r0 + i) * ld + x] = v[i] + offset;
  }
}

// ---- template spectrum (once per source size): pad, then conj / (P Q) after the FFT ----------
__global__ void pad_template(const uint8_t* tpl, int w, int h, double* out, int P, int Q) {
  const size_t n = size_t(P) * Q;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    const int y = int(i / unsigned(P)), x = int(i - size_t(y) * P);
    out[i] = (x < w && y < h) ? double(tpl[size_t(y) * w + x]) : 0.0;
  }
}

__global__ void conj_scale(double2* spec, size_t n, double scale) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    const double2 v = spec[i];
    spec[i] = make_double2(v.x * scale, -v.y * scale);
  }
}

// ---- 5. mul_spectrum: source spectrum times the prepared (conjugated, scaled) template's ------
__global__ void mul_spectrum(double2* spec, const double2* tpl_spec, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    const double2 a = spec[i], b = tpl_spec[i];
    spec[i] = make_double2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
  }
}

// ---- 7./8. the FFT score of a position -----------------------------------------------------------
// Window sum from an inclusive integral image. IT = uint32_t relies on modular arithmetic:
// exact whenever the true window sum is below 2^32 (checked on the host).
template <typename IT>
__device__ __forceinline__ IT window_sum(const IT* ii, int ld, int x, int y, int w, int h) {
  const size_t r1 = size_t(y + h - 1) * ld;
  IT s = ii[r1 + x + w - 1];
  if (x > 0) s -= ii[r1 + x - 1];
  if (y > 0) {
    const size_t r0 = size_t(y - 1) * ld;
    s -= ii[r0 + x + w - 1];
    if (x > 0) s += ii[r0 + x - 1];
  }
  return s;
}

// S2 + T2 - 2 C in double, with explicit round-to-nearest operations: no FMA contraction, so
// ssd_min and collect compute bit-identical values for the same position.
template <typename IT>
__device__ __forceinline__ double fft_score(const double* corr, int P, const IT* ii, int ld,
                                            int x, int y, int w, int h, double t2) {
  const double s2 = double(window_sum(ii, ld, x, y, w, h));
  return __dadd_rn(__dadd_rn(s2, t2), __dmul_rn(-2.0, corr[size_t(y) * P + x]));
}

// Each block covers 32 x (8 x kMapRows) positions: thread (tx, ty) takes rows ty + 8 i, so a
// warp reads 32 consecutive positions of a row and the block reduction is paid once per 1024.
template <typename IT>
__global__ __launch_bounds__(kMapBlockX* kMapBlockY) void ssd_min(
    const double* corr, int P, const IT* ii, int ld, int w, int h, int map_w, int map_h,
    double t2, unsigned long long* block_min, DeviceOut* out, double* map_out) {
  __shared__ BlockScratch<unsigned long long> scratch;
  const int x = blockIdx.x * kMapBlockX + threadIdx.x;
  unsigned long long key = ~0ull;
#pragma unroll
  for (int i = 0; i < kMapRows; ++i) {
    const int y = (blockIdx.y * kMapRows + i) * kMapBlockY + threadIdx.y;
    if (x < map_w && y < map_h) {
      const double score = fft_score(corr, P, ii, ld, x, y, w, h, t2);
      const unsigned long long k = cuda::order_key(score);
      key = k < key ? k : key;
      if (map_out) map_out[size_t(y) * map_w + x] = score;
    }
  }
  key = cuda::block_min(key, scratch);
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    block_min[blockIdx.y * gridDim.x + blockIdx.x] = key;
    atomicMin(&out->min_key, key);
  }
}

template <typename IT>
__global__ __launch_bounds__(kMapBlockX* kMapBlockY) void collect(
    const double* corr, int P, const IT* ii, int ld, int w, int h, int map_w, int map_h,
    double t2, double two_e, const unsigned long long* block_min, DeviceOut* out, int2* cand,
    unsigned long long* exact, int cap) {
  const double threshold = cuda::key_to_double(out->min_key) + two_e;
  if (block_min[blockIdx.y * gridDim.x + blockIdx.x] > cuda::order_key(threshold)) return;
  const int x = blockIdx.x * kMapBlockX + threadIdx.x;
  for (int i = 0; i < kMapRows; ++i) {
    const int y = (blockIdx.y * kMapRows + i) * kMapBlockY + threadIdx.y;
    if (x >= map_w || y >= map_h) continue;
    if (fft_score(corr, P, ii, ld, x, y, w, h, t2) <= threshold) {
      const unsigned int c = atomicAdd(&out->count, 1u);
      if (c < unsigned(cap)) cand[c] = make_int2(x, y), exact[c] = 0;
    }
  }
}

// ---- 9. exact scores ------------------------------------------------------------------------------
// The exact SSD or SAD of template rows j0..j1-1 of the window at (x, y), summed by the whole
// block in 64 bits.
__device__ uint64_t block_exact_rows(const uint8_t* src, size_t pitch, const uint8_t* tpl, int w,
                                     int x, int y, int j0, int j1, bool sad,
                                     BlockScratch<unsigned long long>& scratch) {
  // Threads over the flattened rows, a few pixels each, loads unrolled so that they are all in
  // flight at once (a loop over rows would wait for each row in turn).
  unsigned long long acc = 0;
  const int n = (j1 - j0) * w;
#pragma unroll 4
  for (int k = threadIdx.x; k < n; k += blockDim.x) {
    const int jj = k / w, i = k - jj * w, j = j0 + jj;
    const int d = int(src[size_t(y + j) * pitch + x + i]) - int(tpl[size_t(j) * w + i]);
    acc += sad ? unsigned(d < 0 ? -d : d) : unsigned(d * d);
  }
  return cuda::block_sum(acc, scratch);
}

__device__ __forceinline__ bool ranks_before(unsigned long long s, int2 p, unsigned long long bs,
                                             int2 q) {
  return s < bs || (s == bs && (p.y < q.y || (p.y == q.y && p.x < q.x)));
}

// Exact scores of the listed candidates. Each candidate's window is cut into chunks of
// `rows_per_chunk` template rows (about 1024 pixels), and the (candidate, chunk) pairs are
// spread over a fixed grid: one large template keeps every SM busy, and the grid size does not
// depend on the candidate count (read on the device), so the kernel can sit in a graph. Partial
// sums go to exact[] with 64-bit atomicAdd (exact[] starts at zero: `collect` clears each entry
// it appends). With `out` given, the last block to finish picks the best by (score, y, x).
__global__ __launch_bounds__(kRescoreThreads) void rescore_select(
    const uint8_t* src, size_t pitch, const uint8_t* tpl, int w, int h, int rows_per_chunk,
    bool sad, const int2* cand, const unsigned int* count_ptr, unsigned int fixed_count, int cap,
    unsigned long long* exact, DeviceOut* out, DeviceOut* result) {
  __shared__ BlockScratch<unsigned long long> scratch;
  __shared__ bool is_last;
  __shared__ unsigned long long best_s[kRescoreThreads];
  __shared__ int best_i[kRescoreThreads];
  const unsigned int n = count_ptr ? min(*count_ptr, unsigned(cap)) : fixed_count;
  const unsigned int chunks = unsigned((h + rows_per_chunk - 1) / rows_per_chunk);
  const unsigned long long items = (unsigned long long)n * chunks;
  for (unsigned long long item = blockIdx.x; item < items; item += gridDim.x) {
    const unsigned int i = unsigned(item / chunks), c = unsigned(item - (unsigned long long)i * chunks);
    const int2 p = cand[i];
    const int j0 = int(c) * rows_per_chunk, j1 = min(h, j0 + rows_per_chunk);
    const uint64_t s = block_exact_rows(src, pitch, tpl, w, p.x, p.y, j0, j1, sad, scratch);
    if (threadIdx.x == 0 && s) atomicAdd(exact + i, (unsigned long long)s);
  }
  if (!out) return;
  // Last block done: the other blocks' atomics are visible after their fence and our atomic.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(&out->done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  unsigned long long bs = ~0ull;
  int bi = -1;
  for (unsigned int i = threadIdx.x; i < n; i += blockDim.x) {
    const unsigned long long s = __ldcg(exact + i);
    if (bi < 0 || ranks_before(s, cand[i], bs, cand[bi])) bs = s, bi = int(i);
  }
  best_s[threadIdx.x] = bs;
  best_i[threadIdx.x] = bi;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int t = 1; t < int(blockDim.x); ++t) {
      if (best_i[t] < 0) continue;
      if (bi < 0 || ranks_before(best_s[t], cand[best_i[t]], bs, cand[bi]))
        bs = best_s[t], bi = best_i[t];
    }
    DeviceOut r = kCleanRecord;
    r.min_key = out->min_key;
    r.count = *count_ptr;
    if (bi >= 0) r.best_score = bs, r.best_x = cand[bi].x, r.best_y = cand[bi].y;
    *result = r;
    out->done = 0;
  }
}

// The exact map, one block per position (templates the fast direct kernel cannot take).
__global__ __launch_bounds__(kRescoreThreads) void exact_map(const uint8_t* src, size_t pitch,
                                                             const uint8_t* tpl, int w, int h,
                                                             bool sad, int map_w, size_t n,
                                                             uint64_t* map) {
  __shared__ BlockScratch<unsigned long long> scratch;
  for (size_t i = blockIdx.x; i < n; i += gridDim.x) {
    const int y = int(i / unsigned(map_w)), x = int(i - size_t(y) * map_w);
    const uint64_t s = block_exact_rows(src, pitch, tpl, w, x, y, 0, h, sad, scratch);
    if (threadIdx.x == 0) map[i] = s;
  }
}

// ---- NTT method: exact cross-correlation modulo p (match/ntt.hpp) ---------------------------------
// N1. window_col_sums: V(y, x) = sum_{j<h} I(y+j, x)^2 for y < map_h (32-bit words: every sum
// fits, w h 255^2 < 2^32). A thread slides down 4 adjacent columns (one 32-bit load per row;
// rows are 16-byte aligned with zero bytes past W) over kVsumRows outputs: h + 2 kVsumRows
// loads for kVsumRows x 4 outputs. Pointers step by the pitch (no 64-bit index products: the
// kernel is instruction-bound, not memory-bound).
__device__ __forceinline__ uint4 squares4(uint32_t w) {
  const uint32_t a = w & 0xffu, b = (w >> 8) & 0xffu, c = (w >> 16) & 0xffu, d = w >> 24;
  return make_uint4(a * a, b * b, c * c, d * d);
}
__global__ __launch_bounds__(kVsumThreads) void window_col_sums(const uint8_t* src, size_t pitch,
                                                                int W, int h, int map_h,
                                                                uint32_t* v, int ldv) {
  const int x = (blockIdx.x * kVsumThreads + threadIdx.x) * 4;
  const int y0 = blockIdx.y * kVsumRows, y1 = min(y0 + kVsumRows, map_h);
  if (x >= W) return;
  const uint8_t* top = src + size_t(y0) * pitch + x;  // row y - 1 as y advances
  const uint8_t* bottom = top;                         // row y + h - 1 as y advances
  uint4 acc = make_uint4(0, 0, 0, 0);
#pragma unroll 8
  for (int j = 0; j < h; ++j, bottom += pitch) {
    const uint4 q = squares4(__ldg(reinterpret_cast<const uint32_t*>(bottom)));
    acc.x += q.x, acc.y += q.y, acc.z += q.z, acc.w += q.w;
  }
  uint32_t* out = v + size_t(y0) * ldv + x;
  *reinterpret_cast<uint4*>(out) = acc;
#pragma unroll 4
  for (int y = y0 + 1; y < y1; ++y, top += pitch, bottom += pitch) {
    out += ldv;
    const uint4 a = squares4(__ldg(reinterpret_cast<const uint32_t*>(bottom)));
    const uint4 b = squares4(__ldg(reinterpret_cast<const uint32_t*>(top)));
    acc.x += a.x - b.x, acc.y += a.y - b.y, acc.z += a.z - b.z, acc.w += a.w - b.w;
    *reinterpret_cast<uint4*>(out) = acc;
  }
}

// N2. ntt_rows_forward: one block per row y < rows: the u8 row, zero-padded to P, transformed
// in shared memory, stored as P words (digit-reversed order). Also resets the run's record.
__global__ __launch_bounds__(kNttThreads) void ntt_rows_forward(const uint8_t* src, size_t pitch,
                                                                int W, ntt::Plan plan,
                                                                uint32_t* out, DeviceOut* rec) {
  extern __shared__ uint32_t s_row[];
  const int y = blockIdx.x, P = plan.n;
  if (y == 0 && threadIdx.x == 0 && rec) rec->min_key = ~0ull, rec->done = 0;
  const uint8_t* srow = src + size_t(y) * pitch;
  for (int x = threadIdx.x; x < P; x += kNttThreads) s_row[x] = x < W ? srow[x] : 0u;
  ntt::ntt_shared<false>(s_row, 1, plan, threadIdx.x, kNttThreads);
  uint32_t* orow = out + size_t(y) * P;
  for (int x = threadIdx.x; x < P; x += kNttThreads) orow[x] = s_row[x];
}

// N3. ntt_columns: 2^cb_log2 adjacent columns per block (their words are contiguous in every
// row, so loads are 32-byte segments), rows_in rows read (the rest are zero), forward transform
// down each column in shared memory; then either
//   tpl_spec == nullptr (the template, once): times `scale` (= 2^32 / (P Q) mod p: Montgomery
//                        form with the inverse transform's 1/(P Q) folded in) into spec_out;
//   otherwise (the source): times the template's spectrum, inverse transform down the column,
//                        rows < rows_out written back in place.
__global__ __launch_bounds__(kNttColThreads) void ntt_columns(uint32_t* data, int P, int rows_in,
                                                           int rows_out, ntt::Plan plan,
                                                           int cb_log2, const uint32_t* tpl_spec,
                                                           ntt::Const scale, uint32_t* spec_out) {
  extern __shared__ uint32_t s_cols[];
  const int Q = plan.n, cb = 1 << cb_log2, f0 = blockIdx.x * cb;
  const int n = Q << cb_log2;
  for (int i = threadIdx.x; i < n; i += kNttColThreads) {
    const int g = i >> cb_log2, col = f0 + (i & (cb - 1));
    s_cols[i] = (g < rows_in && col < P) ? data[size_t(g) * P + col] : 0u;
  }
  const int c = threadIdx.x & (cb - 1), lane = threadIdx.x >> cb_log2;
  const int lanes = kNttColThreads >> cb_log2;
  ntt::ntt_shared<false>(s_cols + c, cb, plan, lane, lanes);
  if (!tpl_spec) {
    for (int i = threadIdx.x; i < n; i += kNttColThreads) {
      const int g = i >> cb_log2, col = f0 + (i & (cb - 1));
      if (col < P) spec_out[size_t(g) * P + col] = ntt::mul(s_cols[i], scale);
    }
    return;
  }
  for (int i = threadIdx.x; i < n; i += kNttColThreads) {
    const int g = i >> cb_log2, col = f0 + (i & (cb - 1));
    if (col < P) s_cols[i] = ntt::mont_mul(s_cols[i], tpl_spec[size_t(g) * P + col]);
  }
  ntt::ntt_shared<true>(s_cols + c, cb, plan, lane, lanes);
  for (int i = threadIdx.x; i < n; i += kNttColThreads) {
    const int g = i >> cb_log2, col = f0 + (i & (cb - 1));
    if (g < rows_out && col < P) data[size_t(g) * P + col] = s_cols[i];
  }
}

// N4. ntt_rows_ssd: one block per valid row y: inverse transform of the row -> C(x, y) exactly
// (every true value is below p); S2 from V by a block scan along the row; SSD = S2 - 2 C + T2
// in 32-bit words (exact: the true SSD < 2^32); the (score, y, x) key minimum with one
// atomicMin per block, as the direct kernel does; the map too when asked.
__global__ __launch_bounds__(kNttThreads) void ntt_rows_ssd(const uint32_t* data, ntt::Plan plan,
                                                            const uint32_t* v, int ldv, int W,
                                                            int w, int map_w, uint32_t t2,
                                                            DeviceOut* rec, DeviceOut* result,
                                                            uint32_t* map_out) {
  extern __shared__ uint32_t s_buf[];
  __shared__ BlockScratch<uint32_t> scan_scratch;
  __shared__ BlockScratch<unsigned long long> min_scratch;
  const int y = blockIdx.x, P = plan.n, tid = threadIdx.x;
  uint32_t* s_row = s_buf;      // P words: the row being inverse-transformed
  uint32_t* s_pre = s_buf + P;  // W words: V, then its inclusive prefix sums
  const uint32_t* drow = data + size_t(y) * P;
  const uint32_t* vrow = v + size_t(y) * ldv;
  for (int x = tid; x < P; x += kNttThreads) s_row[x] = drow[x];
  for (int x = tid; x < W; x += kNttThreads) s_pre[x] = vrow[x];
  ntt::ntt_shared<true>(s_row, 1, plan, tid, kNttThreads);  // synchronises before and after
  // Prefix sums of V (mod 2^32: window differences stay exact): each thread a run of `chunk`.
  const int chunk = (W + kNttThreads - 1) / kNttThreads, x0 = tid * chunk;
  uint32_t run = 0;
  for (int i = 0; i < chunk && x0 + i < W; ++i) run += s_pre[x0 + i];
  uint32_t total;
  uint32_t acc = cuda::block_exclusive_sum(run, scan_scratch, &total);
  for (int i = 0; i < chunk && x0 + i < W; ++i) acc += s_pre[x0 + i], s_pre[x0 + i] = acc;
  __syncthreads();
  unsigned long long key = ~0ull;
  for (int x = tid; x < map_w; x += kNttThreads) {
    const uint32_t s2 = s_pre[x + w - 1] - (x > 0 ? s_pre[x - 1] : 0u);
    const uint32_t score = s2 + t2 - 2u * s_row[x];
    const uint32_t index = uint32_t(y) * uint32_t(map_w) + uint32_t(x);
    if (map_out) map_out[index] = score;
    const unsigned long long k = (static_cast<unsigned long long>(score) << 32) | index;
    key = k < key ? k : key;
  }
  key = cuda::block_min(key, min_scratch);
  if (tid == 0) {
    atomicMin(&rec->min_key, key);
    publish_min_key(rec, result, gridDim.x);
  }
}

// ---- direct_dp4a: the fast direct kernel ---------------------------------------------------------
// Thread (tx, ty): positions x0..x0+3 (x0 = 4 * global tx) on rows y0..y0+R-1. For every source
// row s the thread needs, it loads the words covering x0 .. x0+w+3 once, forms the 4 byte-shifted
// views with __byte_perm, and feeds them to every output row o whose template row j = s - y0 - o
// exists. Sums stay in 32 bits: w h 255^2 < 2^32 is required (modular SSD = S2 - 2C + T2 exact).
// Bytes of the last template word beyond w are zero in the template and masked in the source.
// NW > 0: the template row is NW words, known at compile time (k loops fully unrolled, the
// row's source words kept in registers); NW = 0: any width, read from `nw`.
//
// direct_row: source row i = s - y0 of the thread, fed to the outputs o in [kLo, kHi] whose
// template row j = i - o exists. kPred: which outputs take the row is known only at run time
// (a predicate per output); otherwise it is known at compile time: with R = 4 and h >= 4 the
// first R - 1 rows feed outputs 0..i, the rows R - 1 .. h - 1 feed all ("full" rows, most rows
// of a tall template; their squares are summed once, s2_all) and the last R - 1 rows feed
// outputs d..R-1, so no row issues a predicate or an instruction for an output it skips, which
// is what an issue-bound kernel needs (Nsight Compute: 0.68 IPC per scheduler at 16x16).
template <int R, bool SAD, int NW, int kLo, int kHi, bool kPred>
__device__ __forceinline__ void direct_row(const uint32_t* row, const uint32_t* s_tpl, int nw,
                                           int h, int i, uint32_t last_mask, uint32_t (&c)[R][4],
                                           uint32_t (&s2)[R][4], uint32_t (&s2_all)[4]) {
  uint32_t rs[4] = {0, 0, 0, 0};
  uint32_t w0 = __ldg(row);
#pragma unroll
  for (int k = 0; k < (NW > 0 ? NW : nw); ++k) {
    const uint32_t w1 = __ldg(row + k + 1);
    uint32_t sh[4] = {w0, __byte_perm(w0, w1, 0x4321), __byte_perm(w0, w1, 0x5432),
                      __byte_perm(w0, w1, 0x6543)};
    if (k == (NW > 0 ? NW : nw) - 1) {
#pragma unroll
      for (int r = 0; r < 4; ++r) sh[r] &= last_mask;
    }
    if (!SAD) {
#pragma unroll
      for (int r = 0; r < 4; ++r) rs[r] = __dp4a(sh[r], sh[r], rs[r]);
    }
#pragma unroll
    for (int o = kLo; o <= kHi; ++o) {
      const int j = i - o;
      if (!kPred || (j >= 0 && j < h)) {
        const uint32_t t = s_tpl[j * (NW > 0 ? NW : nw) + k];
#pragma unroll
        for (int r = 0; r < 4; ++r)
          c[o][r] = SAD ? __dp4a(__vabsdiffu4(sh[r], t), 0x01010101u, c[o][r])
                        : __dp4a(sh[r], t, c[o][r]);
      }
    }
    w0 = w1;
  }
  if (!SAD && !kPred && kLo == 0 && kHi == R - 1) {  // every output: once, added at the end
#pragma unroll
    for (int r = 0; r < 4; ++r) s2_all[r] += rs[r];
  } else if (!SAD) {
#pragma unroll
    for (int o = kLo; o <= kHi; ++o) {
      const int j = i - o;
      if (!kPred || (j >= 0 && j < h)) {
#pragma unroll
        for (int r = 0; r < 4; ++r) s2[o][r] += rs[r];
      }
    }
  }
}

// Occupancy is the point of R = 4 (see direct_rows): 8 blocks of 128 threads per SM, so at most
// 64 registers. R = 8 (~96 registers) does not split its rows: the extra copies of the row code
// would push it into spills.
template <int R, bool SAD, int NW>
__global__ __launch_bounds__(kDirectBlockX* kDirectBlockY, R == 4 ? 8 : 1) void direct_dp4a(
    const uint8_t* src, size_t pitch, int H, int map_w, int map_h, const uint32_t* tpl_words, int h,
    int nw, uint32_t last_mask, uint32_t t2, DeviceOut* rec, DeviceOut* result, uint32_t* map_out) {
  extern __shared__ uint32_t s_tpl[];
  __shared__ BlockScratch<unsigned long long> scratch;
  const int tid = threadIdx.y * kDirectBlockX + threadIdx.x;
  if (NW > 0) nw = NW;
  for (int i = tid; i < h * nw; i += kDirectBlockX * kDirectBlockY) s_tpl[i] = tpl_words[i];
  __syncthreads();

  const int x0 = (blockIdx.x * kDirectBlockX + threadIdx.x) * 4;
  const int y0 = (blockIdx.y * kDirectBlockY + threadIdx.y) * R;
  uint32_t c[R][4], s2[R][4], s2_all[4] = {0, 0, 0, 0};
#pragma unroll
  for (int o = 0; o < R; ++o)
#pragma unroll
    for (int r = 0; r < 4; ++r) c[o][r] = 0, s2[o][r] = 0;

  if (x0 < map_w && y0 < map_h) {
    const uint32_t* base = reinterpret_cast<const uint32_t*>(src) + (x0 >> 2);
    const size_t pw = pitch >> 2;
    // Rows past the source only feed outputs past the map (y >= map_h): read the last row
    // instead, and drop those outputs below.
    auto row_at = [&](int i) { return base + size_t(min(y0 + i, H - 1)) * pw; };
    bool rows_done = false;
    if constexpr (R == 4) {
      if (h >= R) {  // the same h for the whole grid: no divergence
        direct_row<R, SAD, NW, 0, 0, false>(row_at(0), s_tpl, nw, h, 0, last_mask, c, s2, s2_all);
        direct_row<R, SAD, NW, 0, 1, false>(row_at(1), s_tpl, nw, h, 1, last_mask, c, s2, s2_all);
        direct_row<R, SAD, NW, 0, 2, false>(row_at(2), s_tpl, nw, h, 2, last_mask, c, s2, s2_all);
        for (int i = R - 1; i <= h - 1; ++i)
          direct_row<R, SAD, NW, 0, R - 1, false>(row_at(i), s_tpl, nw, h, i, last_mask, c, s2,
                                                  s2_all);
        direct_row<R, SAD, NW, 1, 3, false>(row_at(h), s_tpl, nw, h, h, last_mask, c, s2, s2_all);
        direct_row<R, SAD, NW, 2, 3, false>(row_at(h + 1), s_tpl, nw, h, h + 1, last_mask, c, s2,
                                            s2_all);
        direct_row<R, SAD, NW, 3, 3, false>(row_at(h + 2), s_tpl, nw, h, h + 2, last_mask, c, s2,
                                            s2_all);
        rows_done = true;
      }
    }
    if (!rows_done)  // R = 8, or a template shorter than R: which outputs take a row, at run time
      for (int i = 0; i < R + h - 1; ++i)
        direct_row<R, SAD, NW, 0, R - 1, true>(row_at(i), s_tpl, nw, h, i, last_mask, c, s2,
                                               s2_all);
  }
#pragma unroll
  for (int o = 0; o < R; ++o)
#pragma unroll
    for (int r = 0; r < 4; ++r) s2[o][r] += s2_all[r];

  unsigned long long key = ~0ull;
#pragma unroll
  for (int o = 0; o < R; ++o) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int x = x0 + r, y = y0 + o;
      if (x < map_w && y < map_h) {
        const uint32_t score = SAD ? c[o][r] : s2[o][r] - 2u * c[o][r] + t2;
        const uint32_t index = uint32_t(y) * uint32_t(map_w) + uint32_t(x);
        if (map_out) map_out[index] = score;
        const unsigned long long k = (static_cast<unsigned long long>(score) << 32) | index;
        key = k < key ? k : key;
      }
    }
  }
  if (rec) {
    key = cuda::block_min(key, scratch);
    if (tid == 0) {
      if (key != ~0ull) atomicMin(&rec->min_key, key);
      publish_min_key(rec, result, gridDim.x * gridDim.y);
    }
  }
}

// ================================================================================ host side

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace

// The prepared matcher: template data once, and per source size the buffers, cuFFT plans, the
// template spectrum and the captured graphs.
struct Matcher {
  Image tpl;
  Params params;
  int w = 0, h = 0;
  uint64_t t2 = 0;  // sum of T^2
  double tpl_l1 = 0, tpl_l2 = 0;
  bool direct_fast = false;  // direct_dp4a can take this template
  int nw = 0;                // 32-bit words per packed template row
  uint32_t last_mask = 0;
  int num_sms = 1;
  int smem_optin = 48 * 1024;  // the largest dynamic shared memory a block may ask for
  cudaStream_t stream = nullptr;
  cudaEvent_t ev[4] = {};
  cudaStream_t side = nullptr;           // a second branch of the NTT graph (window_col_sums)
  cudaEvent_t fork = nullptr, join = nullptr;
  DeviceBuffer<uint8_t> d_tpl;
  DeviceBuffer<uint32_t> d_tpl_words;

  // Per source size.
  int W = 0, H = 0;
  size_t pitch = 0;
  DeviceBuffer<uint8_t> d_src;
  PinnedBuffer<uint8_t> h_src;
  DeviceBuffer<DeviceOut> d_out;         // the FFT / NTT paths' working record
  DeviceBuffer<DeviceOut> d_direct_rec;  // direct_dp4a's, only ever left clean
  PinnedBuffer<DeviceOut> h_out;         // the result on the host (mapped where possible)
  DeviceBuffer<DeviceOut> d_result;      // the result on the device where h_out is not mapped
  DeviceOut* result = nullptr;           // where the kernels write the result
  bool result_mapped = false;

  // FFT state for (W, H).
  bool fft_ready = false;
  bool wide = false;  // 64-bit integral words
  int P = 0, Q = 0, ld = 0;
  double two_e = 0;   // 2 E, E = the bound on |FFT score - exact score|
  cuda::fft::Plan fwd, inv;
  DeviceBuffer<double> d_real;
  DeviceBuffer<double2> d_spec, d_tpl_spec;
  DeviceBuffer<uint64_t> d_ii, d_tile_sums;  // u32 or u64 words (reinterpreted)
  DeviceBuffer<unsigned long long> d_block_min, d_exact;
  DeviceBuffer<int2> d_cand;

  // NTT state for (W, H): the exact FFT method (ntt_eligible()).
  bool ntt_ready = false;
  int cb_log2 = 0;  // ntt_columns: 2^cb_log2 columns per block
  ntt::Plan row_plan, col_plan;
  DeviceBuffer<ntt::Const> d_row_tw, d_col_tw;
  DeviceBuffer<uint32_t> d_ntt_rows, d_ntt_spec, d_vsum;

  cudaGraphExec_t graph_fft = nullptr, graph_direct = nullptr, graph_ntt = nullptr;
  bool graphs_disabled = false;

  ~Matcher() {
    drop_graphs();
    for (cudaEvent_t e : ev)
      if (e) cudaEventDestroy(e);
    for (cudaEvent_t e : {fork, join})
      if (e) cudaEventDestroy(e);
    if (side) cudaStreamDestroy(side);
    if (stream) cudaStreamDestroy(stream);
  }
  void drop_graphs() {
    if (graph_fft) cudaGraphExecDestroy(graph_fft);
    if (graph_direct) cudaGraphExecDestroy(graph_direct);
    if (graph_ntt) cudaGraphExecDestroy(graph_ntt);
    graph_fft = graph_direct = graph_ntt = nullptr;
  }
  int map_w() const { return W - w + 1; }
  int map_h() const { return H - h + 1; }
};

void MatcherDeleter::operator()(Matcher* m) const { delete m; }

Status matcher_create(const Image& gray_template, const Params& params, MatcherPtr* out) {
  PARVIS_TRY(cuda::require_device());
  PARVIS_TRY(check_params(params));
  PARVIS_TRY(check_template(gray_template));
  MatcherPtr m(new Matcher);
  m->tpl = gray_template;
  m->params = params;
  m->w = gray_template.width;
  m->h = gray_template.height;
  const int w = m->w, h = m->h;
  double l2sq = 0;
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < w; ++i) {
      const uint64_t v = gray_template.row(j)[i];
      m->t2 += v * v;
      m->tpl_l1 += double(v);
      l2sq += double(v * v);
    }
  m->tpl_l2 = std::sqrt(l2sq);

  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&m->num_sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&m->smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  CUDA_CHECK(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&m->side, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreateWithFlags(&m->fork, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&m->join, cudaEventDisableTiming));
  // The result record: mapped host memory, so that the last kernel's last block writes it
  // straight to the host (no copy node after the graph), where the device can map host memory.
  int can_map = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, dev));
  m->result_mapped = can_map != 0 && !env_flag("PARVIS_NO_MAPPED_RESULT");
  if (m->result_mapped) {
    PARVIS_TRY(m->h_out.alloc_mapped(1));
    PARVIS_TRY(m->h_out.device_pointer(&m->result));
  } else {
    PARVIS_TRY(m->h_out.alloc(1));
    PARVIS_TRY(m->d_result.alloc(1));
    m->result = m->d_result.get();
  }
  for (cudaEvent_t& e : m->ev) CUDA_CHECK(cudaEventCreate(&e));

  // The template, tight, for the exact kernels.
  PARVIS_TRY(m->d_tpl.alloc(size_t(w) * h));
  CUDA_CHECK(cudaMemcpy2D(m->d_tpl.get(), w, gray_template.pixels.data(), gray_template.stride, w,
                          h, cudaMemcpyHostToDevice));

  // The packed template for direct_dp4a: rows of nw words, zero bytes past w.
  m->nw = (w + 3) / 4;
  const int tail = w - 4 * (m->nw - 1);  // 1..4 real bytes in the last word
  m->last_mask = tail == 4 ? 0xffffffffu : ((1u << (8 * tail)) - 1u);
  const double max_sum = double(w) * double(h) * 255.0 * 255.0;
  m->direct_fast = max_sum < 4294967296.0 &&
                   size_t(h) * m->nw * 4 <= kDirectMaxTemplateBytes;
  if (m->direct_fast) {
    std::vector<uint32_t> words(size_t(h) * m->nw, 0u);
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i)
        words[size_t(j) * m->nw + i / 4] |= uint32_t(gray_template.row(j)[i]) << (8 * (i % 4));
    PARVIS_TRY(m->d_tpl_words.alloc(words.size()));
    CUDA_CHECK(cudaMemcpy(m->d_tpl_words.get(), words.data(), words.size() * 4,
                          cudaMemcpyHostToDevice));
  }
  m->graphs_disabled = env_flag("PARVIS_NO_GRAPH");
  *out = std::move(m);
  return Status::Ok();
}

namespace {

// ---- per-size setup ------------------------------------------------------------------------------
Status setup_source_size(Matcher& m, int W, int H) {
  if (m.W == W && m.H == H) return Status::Ok();
  m.drop_graphs();
  m.fft_ready = false;
  m.ntt_ready = false;
  m.W = W;
  m.H = H;
  // Rows 16-byte aligned with at least 16 spare bytes: direct_dp4a reads whole words up to
  // 8 bytes past a row's last position, prepare_rows reads 8-byte groups.
  m.pitch = (size_t(W) + 16 + 15) / 16 * 16;
  PARVIS_TRY(m.d_src.alloc(m.pitch * H));
  CUDA_CHECK(cudaMemsetAsync(m.d_src.get(), 0, m.pitch * H, m.stream));
  PARVIS_TRY(m.h_src.alloc(m.pitch * H));
  std::memset(m.h_src.get(), 0, m.pitch * H);  // the bytes past each row stay zero
  PARVIS_TRY(m.d_out.alloc(1));
  PARVIS_TRY(m.d_direct_rec.alloc(1));
  for (DeviceOut* rec : {m.d_out.get(), m.d_direct_rec.get()})
    CUDA_CHECK(cudaMemcpyAsync(rec, &kCleanRecord, sizeof(DeviceOut), cudaMemcpyHostToDevice,
                               m.stream));
  CUDA_CHECK(cudaStreamSynchronize(m.stream));
  return Status::Ok();
}

// ---- FFT sizes: measured once per source size and process ---------------------------------------
// cuFFT's speed depends on the factors of each length more than a simple model says (on an
// H100, double 3840x2160 takes 490 us for a forward + inverse pair, 4096x2304 375 us; 1920x1080
// 128 us, 2048x1152 81 us). So a few candidate sizes per dimension are timed (one forward +
// inverse pair after a warm-up, best of two) and the fastest kept: the smallest 7-smooth length,
// the smallest 2^a x {1, 3, 9}, the next power of two; pairs over 1.8x the smallest area are not
// tried. PARVIS_FFT_TUNE=0 takes the smallest 7-smooth sizes without timing.
std::vector<int> length_candidates(int n) {
  std::vector<int> c{cuda::fft::good_size(n)};
  int best23 = 0, pow2 = 1;
  while (pow2 < n) pow2 *= 2;
  for (int f : {1, 3, 9})
    for (int64_t v = f; v < int64_t(4) * n + 16; v *= 2)
      if (v >= n) {
        if (!best23 || v < best23) best23 = int(v);
        break;
      }
  for (int v : {best23, pow2})
    if (std::find(c.begin(), c.end(), v) == c.end()) c.push_back(v);
  return c;
}

Status tune_fft_size(Matcher& m, int W, int H, int* P, int* Q) {
  static std::mutex lock;
  static std::map<std::pair<int, int>, std::pair<int, int>> cache;
  std::lock_guard<std::mutex> guard(lock);
  const auto key = std::make_pair(W, H);
  if (auto it = cache.find(key); it != cache.end()) {
    *P = it->second.first, *Q = it->second.second;
    return Status::Ok();
  }
  *P = cuda::fft::good_size(W), *Q = cuda::fft::good_size(H);
  const char* tune = std::getenv("PARVIS_FFT_TUNE");
  std::vector<std::pair<int, int>> pairs;
  const double min_area = double(*P) * *Q;
  for (int p : length_candidates(W))
    for (int q : length_candidates(H))
      if (double(p) * q <= 1.8 * min_area) pairs.emplace_back(p, q);
  if (pairs.size() > 1 && !(tune && std::strcmp(tune, "0") == 0)) {
    size_t max_real = 0, max_spec = 0;
    for (auto [p, q] : pairs) {
      max_real = std::max(max_real, size_t(p) * q);
      max_spec = std::max(max_spec, size_t(p / 2 + 1) * q);
    }
    DeviceBuffer<double> real;
    DeviceBuffer<double2> spec;
    PARVIS_TRY(real.alloc(max_real));
    PARVIS_TRY(spec.alloc(max_spec));
    CUDA_CHECK(cudaMemsetAsync(real.get(), 0, max_real * sizeof(double), m.stream));
    float best_ms = 1e30f;
    for (auto [p, q] : pairs) {
      cuda::fft::Plan f, i;
      PARVIS_TRY(f.make_2d(q, p, CUFFT_D2Z));
      PARVIS_TRY(i.make_2d(q, p, CUFFT_Z2D));
      CUFFT_CHECK(cufftSetStream(f.get(), m.stream));
      CUFFT_CHECK(cufftSetStream(i.get(), m.stream));
      float ms = 1e30f;
      for (int rep = 0; rep < 3; ++rep) {
        CUDA_CHECK(cudaEventRecord(m.ev[0], m.stream));
        CUFFT_CHECK(cufftExecD2Z(f.get(), real.get(), spec.get()));
        CUFFT_CHECK(cufftExecZ2D(i.get(), spec.get(), real.get()));
        CUDA_CHECK(cudaEventRecord(m.ev[1], m.stream));
        CUDA_CHECK(cudaEventSynchronize(m.ev[1]));
        float t = 0;
        CUDA_CHECK(cudaEventElapsedTime(&t, m.ev[0], m.ev[1]));
        if (rep > 0) ms = std::min(ms, t);  // rep 0 warms up
      }
      if (ms < best_ms) best_ms = ms, *P = p, *Q = q;
    }
  }
  cache[key] = std::make_pair(*P, *Q);
  return Status::Ok();
}

Status setup_fft(Matcher& m) {
  if (m.fft_ready) return Status::Ok();
  const int W = m.W, H = m.H;
  PARVIS_TRY(tune_fft_size(m, W, H, &m.P, &m.Q));
  m.ld = (W + 7) / 8 * 8;
  m.wide = !(double(m.w) * m.h * 255.0 * 255.0 < 4294967296.0);
  const size_t n_real = size_t(m.P) * m.Q, n_spec = size_t(m.P / 2 + 1) * m.Q;
  const int tile_rows = int(div_up(H, kColTileH));
  PARVIS_TRY(m.d_real.alloc(n_real));
  PARVIS_TRY(m.d_spec.alloc(n_spec));
  PARVIS_TRY(m.d_tpl_spec.alloc(n_spec));
  // u64 words for both widths (u32 use half of it).
  PARVIS_TRY(m.d_ii.alloc(size_t(m.ld) * H));
  PARVIS_TRY(m.d_tile_sums.alloc(size_t(m.ld) * tile_rows));
  const size_t map_blocks =
      size_t(div_up(m.map_w(), kMapBlockX)) * div_up(m.map_h(), kMapBlockY * kMapRows);
  PARVIS_TRY(m.d_block_min.alloc(map_blocks));
  PARVIS_TRY(m.d_cand.alloc(kCandidateCap));
  PARVIS_TRY(m.d_exact.alloc(kCandidateCap));

  PARVIS_TRY(m.fwd.make_2d(m.Q, m.P, CUFFT_D2Z));
  PARVIS_TRY(m.inv.make_2d(m.Q, m.P, CUFFT_Z2D));
  CUFFT_CHECK(cufftSetStream(m.fwd.get(), m.stream));
  CUFFT_CHECK(cufftSetStream(m.inv.get(), m.stream));

  // The template's spectrum for this size, conjugated and scaled by 1/(P Q) once.
  const int grid = m.num_sms * 8;
  pad_template<<<grid, 256, 0, m.stream>>>(m.d_tpl.get(), m.w, m.h, m.d_real.get(), m.P, m.Q);
  CUDA_CHECK_LAUNCH();
  CUFFT_CHECK(cufftExecD2Z(m.fwd.get(), m.d_real.get(), m.d_tpl_spec.get()));
  conj_scale<<<grid, 256, 0, m.stream>>>(m.d_tpl_spec.get(), n_spec, 1.0 / double(n_real));
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(m.stream));

  m.two_e = 2.0 * cuda::fft::ssd_error_bound(m.P, m.Q, W, H, m.tpl_l1, m.tpl_l2);
  m.fft_ready = true;
  return Status::Ok();
}

// ---- upload (pinned staging, async copy) ---------------------------------------------------------
Status upload_source(Matcher& m, const Image& src) {
  for (int y = 0; y < src.height; ++y)
    std::memcpy(m.h_src.get() + size_t(y) * m.pitch, src.row(y), size_t(src.width));
  CUDA_CHECK(cudaMemcpyAsync(m.d_src.get(), m.h_src.get(), m.pitch * src.height,
                             cudaMemcpyHostToDevice, m.stream));
  return Status::Ok();
}

// The upload of a timed run, between events 0 and 1 (`upload` false: the source is already on
// the device, the span is empty).
Status timed_upload(Matcher& m, const Image& src, bool upload = true) {
  CUDA_CHECK(cudaEventRecord(m.ev[0], m.stream));
  if (upload) PARVIS_TRY(upload_source(m, src));
  CUDA_CHECK(cudaEventRecord(m.ev[1], m.stream));
  return Status::Ok();
}

// Seed 000's stage table, when asked (Params::stage_times): one extra, ungraphed run of
// enqueue(timer) with events between the stages, before the timed run.
template <typename Enqueue>
Status time_stages(Matcher& m, const Image& src, Result* res, Enqueue enqueue) {
  if (!m.params.stage_times) return Status::Ok();
  PARVIS_TRY(upload_source(m, src));
  cuda::StageTimer st(true, m.stream);
  PARVIS_TRY(enqueue(st));
  return st.collect(&res->timings);
}

// Template rows per re-scoring chunk: about 1024 pixels (4 per thread).
int rows_per_chunk(int w) { return std::max(1, 1024 / w); }

// ---- the FFT pipeline (steps 1-7; with `fused`, 8-9 as well) ---------------------------------------
template <typename IT>
Status enqueue_fft(Matcher& m, bool fused, double* map_out, cuda::StageTimer& st) {
  cudaStream_t s = m.stream;
  const int W = m.W, H = m.H, map_w = m.map_w(), map_h = m.map_h();
  IT* ii = reinterpret_cast<IT*>(m.d_ii.get());
  IT* tiles = reinterpret_cast<IT*>(m.d_tile_sums.get());
  DeviceOut* out = m.d_out.get();
  PARVIS_TRY(st.mark("", "start"));
  prepare_rows<IT><<<m.Q, kRowThreads, 0, s>>>(m.d_src.get(), m.pitch, W, H, m.d_real.get(), m.P,
                                               ii, m.ld, out);
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(st.mark(kStageIntegralSource, "prepare_rows (+ FFT input)"));
  const dim3 cgrid(div_up(W, kColTileW), div_up(H, kColTileH)), cblock(kColTileW, kColThreadsY);
  col_tile_sums<IT><<<cgrid, cblock, 0, s>>>(ii, m.ld, W, H, tiles);
  CUDA_CHECK_LAUNCH();
  col_scan_tiles<IT><<<cgrid, cblock, 0, s>>>(ii, m.ld, W, H, tiles);
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(st.mark(kStageIntegralSource, "col_tile_sums + col_scan_tiles"));
  CUFFT_CHECK(cufftExecD2Z(m.fwd.get(), m.d_real.get(), m.d_spec.get()));
  PARVIS_TRY(st.mark(kStageCrossCorrelation, "cuFFT D2Z"));
  const size_t n_spec = size_t(m.P / 2 + 1) * m.Q;
  mul_spectrum<<<m.num_sms * 8, 256, 0, s>>>(m.d_spec.get(), m.d_tpl_spec.get(), n_spec);
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(st.mark(kStageCrossCorrelation, "mul_spectrum"));
  CUFFT_CHECK(cufftExecZ2D(m.inv.get(), m.d_spec.get(), m.d_real.get()));
  PARVIS_TRY(st.mark(kStageCrossCorrelation, "cuFFT Z2D"));
  const dim3 mgrid(div_up(map_w, kMapBlockX), div_up(map_h, kMapBlockY * kMapRows)),
      mblock(kMapBlockX, kMapBlockY);
  const double t2 = double(m.t2);
  ssd_min<IT><<<mgrid, mblock, 0, s>>>(m.d_real.get(), m.P, ii, m.ld, m.w, m.h, map_w, map_h, t2,
                                       m.d_block_min.get(), out, map_out);
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(st.mark(kStageSsd, "ssd_min"));
  if (!fused) return Status::Ok();
  collect<IT><<<mgrid, mblock, 0, s>>>(m.d_real.get(), m.P, ii, m.ld, m.w, m.h, map_w, map_h, t2,
                                       m.two_e, m.d_block_min.get(), out, m.d_cand.get(),
                                       m.d_exact.get(), kCandidateCap);
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(st.mark(kStageSsd, "collect"));
  rescore_select<<<m.num_sms * 4, kRescoreThreads, 0, s>>>(
      m.d_src.get(), m.pitch, m.d_tpl.get(), m.w, m.h, rows_per_chunk(m.w), false, m.d_cand.get(),
      &out->count, 0, kCandidateCap, m.d_exact.get(), out, m.result);
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(st.mark(kStageSsd, "rescore_select"));
  return Status::Ok();
}

Status enqueue_fft_any(Matcher& m, bool fused, double* map_out, cuda::StageTimer& st) {
  return m.wide ? enqueue_fft<uint64_t>(m, fused, map_out, st)
                : enqueue_fft<uint32_t>(m, fused, map_out, st);
}

// n zeroed host values, or a runtime error naming `what` when the host is out of memory.
template <typename T>
Status alloc_host(std::vector<T>* v, size_t n, const char* what = "scores") {
  try {
    v->assign(n, T(0));
  } catch (const std::bad_alloc&) {
    return Status::runtime("out of host memory for " + std::to_string(n) + " " + what);
  }
  return Status::Ok();
}

// ---- the NTT pipeline: eligibility, per-size setup, steps N1-N4 ---------------------------------------
// Shared memory of the NTT kernels, in bytes (dynamic part; the static scratch is < 1 KiB).
size_t ntt_row_smem(int P) { return size_t(P) * 4; }
size_t ntt_ssd_smem(int P, int W) { return (size_t(P) + W) * 4; }
size_t ntt_col_smem(int Q, int cb_log2) { return size_t(Q) * 4 << cb_log2; }
int vsum_ld(int W) { return (W + 31) / 32 * 32; }  // 128-byte rows

// The NTT method is exact when every correlation value 255 sum(T) stays below p, the SSD fits
// 32 bits and the rows and a column fit in shared memory. Says why not otherwise.
bool ntt_eligible(const Matcher& m, std::string* why_not) {
  const int P = ntt::good_length(m.W), Q = ntt::good_length(m.H);
  const size_t limit = size_t(m.smem_optin) - 1024;
  if (env_flag("PARVIS_NO_NTT")) {
    *why_not = "PARVIS_NO_NTT is set";
  } else if (!(255.0 * m.tpl_l1 < double(ntt::kMod))) {
    *why_not = "255 sum(T) >= p = 15*2^27+1, so correlation values could wrap: cuFFT in double";
  } else if (!(double(m.w) * m.h * 255.0 * 255.0 < 4294967296.0) ||
             double(m.map_w()) * m.map_h() >= 4294967296.0) {
    *why_not = "scores or positions need more than 32 bits: cuFFT in double";
  } else if (ntt_ssd_smem(P, m.W) > limit || ntt_col_smem(Q, 0) > limit) {
    *why_not = "a row or column of the NTT does not fit in shared memory: cuFFT in double";
  } else {
    return true;
  }
  return false;
}

// Asks for more than the default 48 KiB of dynamic shared memory where a kernel needs it.
template <typename Kernel>
Status allow_smem(Kernel kernel, size_t bytes) {
  if (bytes > 48 * 1024)
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    int(bytes)));
  return Status::Ok();
}

Status upload_plan(int n, ntt::Plan* plan, DeviceBuffer<ntt::Const>* tw) {
  std::vector<ntt::Const> table(static_cast<size_t>(n));
  *plan = ntt::make_plan(n, table.data());
  PARVIS_TRY(tw->alloc(table.size()));
  CUDA_CHECK(cudaMemcpy(tw->get(), table.data(), table.size() * sizeof(ntt::Const),
                        cudaMemcpyHostToDevice));
  plan->tw = tw->get();
  return Status::Ok();
}

// Per source size: plans, buffers, and the template's spectrum (once): the template flipped
// (T'(y, x) = T(-y mod Q, -x mod P), so that the cyclic convolution with T' is the correlation
// with T), transformed by the same kernels, scaled into Montgomery form with 1/(P Q) folded in.
Status setup_ntt(Matcher& m) {
  if (m.ntt_ready) return Status::Ok();
  const int P = ntt::good_length(m.W), Q = ntt::good_length(m.H);
  PARVIS_TRY(upload_plan(P, &m.row_plan, &m.d_row_tw));
  PARVIS_TRY(upload_plan(Q, &m.col_plan, &m.d_col_tw));
  const size_t limit = size_t(m.smem_optin) - 1024;
  m.cb_log2 = 3;  // 8 columns = 32-byte row segments; fewer where a group would not fit
  while (m.cb_log2 > 0 && ntt_col_smem(Q, m.cb_log2) > limit) --m.cb_log2;
  PARVIS_TRY(allow_smem(ntt_rows_forward, ntt_row_smem(P)));
  PARVIS_TRY(allow_smem(ntt_columns, ntt_col_smem(Q, m.cb_log2)));
  PARVIS_TRY(allow_smem(ntt_rows_ssd, ntt_ssd_smem(P, m.W)));
  PARVIS_TRY(m.d_ntt_rows.alloc(size_t(P) * Q));
  PARVIS_TRY(m.d_ntt_spec.alloc(size_t(P) * Q));
  PARVIS_TRY(m.d_vsum.alloc(size_t(vsum_ld(m.W)) * m.map_h()));

  std::vector<uint8_t> flipped;
  PARVIS_TRY(alloc_host(&flipped, size_t(P) * Q, "bytes of the padded template"));
  for (int j = 0; j < m.h; ++j)
    for (int i = 0; i < m.w; ++i) flipped[ntt::flipped_index(i, j, P, Q)] = m.tpl.row(j)[i];
  DeviceBuffer<uint8_t> d_flipped;
  PARVIS_TRY(d_flipped.alloc(flipped.size()));
  CUDA_CHECK(cudaMemcpy(d_flipped.get(), flipped.data(), flipped.size(), cudaMemcpyHostToDevice));
  const ntt::Const scale = ntt::spectrum_scale(P, Q);
  ntt_rows_forward<<<Q, kNttThreads, ntt_row_smem(P), m.stream>>>(
      d_flipped.get(), size_t(P), P, m.row_plan, m.d_ntt_rows.get(), nullptr);
  CUDA_CHECK_LAUNCH();
  ntt_columns<<<div_up(P, size_t(1) << m.cb_log2), kNttColThreads, ntt_col_smem(Q, m.cb_log2),
                m.stream>>>(m.d_ntt_rows.get(), P, Q, Q, m.col_plan, m.cb_log2, nullptr, scale,
                            m.d_ntt_spec.get());
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(m.stream));
  m.ntt_ready = true;
  return Status::Ok();
}

// N1-N4 on the uploaded source; the record's min_key ends as the best (score << 32 | index).
// N1 (memory-bound) runs on a side branch beside N2-N3 (issue-bound) and joins before N4; with
// stage times on, everything runs in one stream so that the marks time one kernel each.
Status enqueue_ntt(Matcher& m, uint32_t* map_out, cuda::StageTimer& st) {
  cudaStream_t s = m.stream;
  const bool branch = !st.enabled();
  cudaStream_t sv = branch ? m.side : s;
  const int W = m.W, H = m.H, map_w = m.map_w(), map_h = m.map_h();
  const int P = m.row_plan.n, Q = m.col_plan.n;
  PARVIS_TRY(st.mark("", "start"));
  if (branch) {
    CUDA_CHECK(cudaEventRecord(m.fork, s));
    CUDA_CHECK(cudaStreamWaitEvent(sv, m.fork, 0));
  }
  window_col_sums<<<dim3(div_up(W, 4 * kVsumThreads), div_up(map_h, kVsumRows)), kVsumThreads, 0,
                    sv>>>(m.d_src.get(), m.pitch, W, m.h, map_h, m.d_vsum.get(), vsum_ld(W));
  CUDA_CHECK_LAUNCH();
  if (branch) CUDA_CHECK(cudaEventRecord(m.join, sv));
  PARVIS_TRY(st.mark(kStageIntegralSource, "window_col_sums (sums of I^2 down h rows)"));
  ntt_rows_forward<<<H, kNttThreads, ntt_row_smem(P), s>>>(m.d_src.get(), m.pitch, W, m.row_plan,
                                                           m.d_ntt_rows.get(), m.d_out.get());
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(st.mark(kStageCrossCorrelation, "ntt_rows_forward"));
  ntt_columns<<<div_up(P, size_t(1) << m.cb_log2), kNttColThreads, ntt_col_smem(Q, m.cb_log2), s>>>(
      m.d_ntt_rows.get(), P, H, map_h, m.col_plan, m.cb_log2, m.d_ntt_spec.get(), ntt::Const{},
      nullptr);
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(st.mark(kStageCrossCorrelation, "ntt_columns (forward, x spectrum, inverse)"));
  if (branch) CUDA_CHECK(cudaStreamWaitEvent(s, m.join, 0));
  ntt_rows_ssd<<<map_h, kNttThreads, ntt_ssd_smem(P, W), s>>>(
      m.d_ntt_rows.get(), m.row_plan, m.d_vsum.get(), vsum_ld(W), W, m.w, map_w, uint32_t(m.t2),
      m.d_out.get(), m.result, map_out);
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(st.mark(kStageSsd, "ntt_rows_ssd (inverse rows, SSD, minimum)"));
  return Status::Ok();
}

// ---- direct_dp4a launch --------------------------------------------------------------------------
// R, the output rows per thread: 8 reuses each source row for more outputs (fewer instructions
// per position), 4 needs ~60 registers instead of ~96, so 8 blocks fit on an SM instead of 5.
// Measured on the H100 (compute us, R = 4 vs 8): 1920x1080 with 16x16 31 vs 37, with 32x32
// 80 vs 104, with 64x64 559 vs 463; 640x480/64x64 320 vs 395; 800x500/100x60 474 vs 573;
// 3840x2160/128x128 7100 vs 5500. So R = 4 for short templates whose grid fits in two waves,
// and for grids that would fill less than half the GPU at R = 8; otherwise R = 8.
// R = 2 (twice the threads of R = 4) was tried on 1920x1080: 16x16 37 us, 32x32 86 us, 64x64
// 468 us, slower than R = 4 on the two short templates. PARVIS_DIRECT_ROWS=4|8 forces one.
int direct_rows(const Matcher& m) {
  if (const char* v = std::getenv("PARVIS_DIRECT_ROWS")) {
    if (std::strcmp(v, "4") == 0) return 4;
    if (std::strcmp(v, "8") == 0) return 8;
  }
  const double blocks4 = double(div_up(m.map_w(), 4 * kDirectBlockX)) *
                         div_up(m.map_h(), kDirectBlockY * 4);
  const double threads8 = double(div_up(m.map_w(), 4)) * div_up(m.map_h(), 8);
  if (m.h <= 32 && blocks4 <= 2.0 * m.num_sms * 8) return 4;
  if (threads8 < 0.5 * m.num_sms * 640) return 4;
  return 8;
}

template <int R>
void launch_direct(Matcher& m, DeviceOut* rec, uint32_t* map_out) {
  const int map_w = m.map_w(), map_h = m.map_h();
  const dim3 block(kDirectBlockX, kDirectBlockY);
  const dim3 grid(div_up(map_w, 4 * kDirectBlockX), div_up(map_h, kDirectBlockY * R));
  const size_t smem = size_t(m.h) * m.nw * 4;
  const uint32_t t2 = uint32_t(m.t2);
  const bool sad = m.params.metric == Metric::SAD;
  auto launch = [&](auto kernel) {
    kernel<<<grid, block, smem, m.stream>>>(m.d_src.get(), m.pitch, m.H, map_w, map_h,
                                            m.d_tpl_words.get(), m.h, m.nw, m.last_mask, t2,
                                            rec, m.result, map_out);
  };
  // Template widths up to 32 px get a kernel with the row length fixed at compile time.
#define PARVIS_DIRECT_CASE(NW_)                                                    \
  case NW_:                                                                        \
    sad ? launch(direct_dp4a<R, true, NW_>) : launch(direct_dp4a<R, false, NW_>);  \
    break;
  switch (m.nw) {
    PARVIS_DIRECT_CASE(1)
    PARVIS_DIRECT_CASE(2)
    PARVIS_DIRECT_CASE(3)
    PARVIS_DIRECT_CASE(4)
    PARVIS_DIRECT_CASE(5)
    PARVIS_DIRECT_CASE(6)
    PARVIS_DIRECT_CASE(7)
    PARVIS_DIRECT_CASE(8)
    default:
      sad ? launch(direct_dp4a<R, true, 0>) : launch(direct_dp4a<R, false, 0>);
  }
#undef PARVIS_DIRECT_CASE
}

// rec: the fused top 1 (direct_rec, clean before and after: no reset node), or nullptr for the
// map.
Status enqueue_direct(Matcher& m, DeviceOut* rec, uint32_t* map_out) {
  if (direct_rows(m) == 4)
    launch_direct<4>(m, rec, map_out);
  else
    launch_direct<8>(m, rec, map_out);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

// ---- graphs: capture once per source size, replay every run ----------------------------------------
template <typename Enqueue>
Status run_graph(Matcher& m, cudaGraphExec_t* exec, Enqueue enqueue) {
  if (!*exec && !m.graphs_disabled) {
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamBeginCapture(m.stream, cudaStreamCaptureModeThreadLocal));
    const Status captured = enqueue();
    const cudaError_t end = cudaStreamEndCapture(m.stream, &graph);
    if (!captured.ok() || end != cudaSuccess) {
      // Capture is an optimisation: on any failure run the same work without it.
      if (graph) cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      m.graphs_disabled = true;
    } else {
      const cudaError_t inst = cudaGraphInstantiate(exec, graph, 0);
      cudaGraphDestroy(graph);
      if (inst != cudaSuccess) {
        (void)cudaGetLastError();
        *exec = nullptr;
        m.graphs_disabled = true;
      }
    }
  }
  if (*exec) {
    CUDA_CHECK(cudaGraphLaunch(*exec, m.stream));
    return Status::Ok();
  }
  return enqueue();
}

// ---- timing of one run: upload | compute | download -------------------------------------------------
Status elapsed(Matcher& m, Timings* t) {
  CUDA_CHECK(cudaEventSynchronize(m.ev[3]));
  float a = 0, b = 0, c = 0;
  CUDA_CHECK(cudaEventElapsedTime(&a, m.ev[0], m.ev[1]));
  CUDA_CHECK(cudaEventElapsedTime(&b, m.ev[1], m.ev[2]));
  CUDA_CHECK(cudaEventElapsedTime(&c, m.ev[2], m.ev[3]));
  t->upload_ms = a;
  t->compute_ms = b;
  t->download_ms = c;
  return Status::Ok();
}

// A map path's round trip: enqueue(d_map) fills a device map of every position, which comes
// back into *host; events 2 and 3 around the copy (0 and 1, around the upload, are the
// caller's), then the timings.
template <typename T, typename Enqueue>
Status fetch_map(Matcher& m, std::vector<T>* host, Timings* t, Enqueue enqueue) {
  const size_t n = size_t(m.map_w()) * m.map_h();
  DeviceBuffer<T> d_map;
  PARVIS_TRY(d_map.alloc(n));
  PARVIS_TRY(alloc_host(host, n));
  PARVIS_TRY(enqueue(d_map.get()));
  CUDA_CHECK(cudaEventRecord(m.ev[2], m.stream));
  CUDA_CHECK(cudaMemcpyAsync(host->data(), d_map.get(), n * sizeof(T), cudaMemcpyDeviceToHost,
                             m.stream));
  CUDA_CHECK(cudaEventRecord(m.ev[3], m.stream));
  return elapsed(m, t);  // waits for the copy: d_map may go
}

// ---- exact map path (any template): one block per position, host selection ---------------------------
Status run_exact_map(Matcher& m, const Image& src, Result* res, bool uploaded) {
  const size_t n = size_t(m.map_w()) * m.map_h();
  cudaStream_t s = m.stream;
  PARVIS_TRY(timed_upload(m, src, !uploaded));
  std::vector<uint64_t> scores;
  PARVIS_TRY(fetch_map(m, &scores, &res->timings, [&](uint64_t* map) {
    const unsigned grid = unsigned(std::min<size_t>(n, size_t(m.num_sms) * 16));
    exact_map<<<grid, kRescoreThreads, 0, s>>>(
        m.d_src.get(), m.pitch, m.d_tpl.get(), m.w, m.h, m.params.metric == Metric::SAD,
        m.map_w(), n, map);
    CUDA_CHECK_LAUNCH();
    return Status::Ok();
  }));
  const double t0 = now_ms();
  res->best = select_best(scores.data(), m.map_w(), m.map_h(), m.params.top_k);
  if (m.params.want_map) scores_to_map(scores.data(), m.map_w(), m.map_h(), &res->map);
  res->timings.compute_ms += now_ms() - t0;
  res->method_used = Method::Direct;
  return Status::Ok();
}

// After a fused graph: the result record on the host. `download` is the copy where the record
// is not mapped, and ~0 where the kernel already wrote it to the host.
Status fetch_result(Matcher& m, Timings* t, DeviceOut* o) {
  CUDA_CHECK(cudaEventRecord(m.ev[2], m.stream));
  if (!m.result_mapped)
    CUDA_CHECK(cudaMemcpyAsync(m.h_out.get(), m.result, sizeof(DeviceOut), cudaMemcpyDeviceToHost,
                               m.stream));
  CUDA_CHECK(cudaEventRecord(m.ev[3], m.stream));
  PARVIS_TRY(elapsed(m, t));  // waits for ev[3]: the graph and the kernel's writes are done
  std::memcpy(o, m.h_out.get(), sizeof(DeviceOut));
  return Status::Ok();
}

// ---- exact 32-bit results (direct and NTT): the fused key or the whole map -------------------------
// Top 1: the graph leaves the best (score << 32 | y * map_w + x) in the record; 32 bytes back.
template <typename Enqueue>
Status finish_fused_key(Matcher& m, cudaGraphExec_t* graph, Result* res, Enqueue enqueue) {
  PARVIS_TRY(run_graph(m, graph, enqueue));
  DeviceOut o;
  PARVIS_TRY(fetch_result(m, &res->timings, &o));
  const unsigned long long k = o.min_key;
  const uint32_t index = uint32_t(k & 0xffffffffu), map_w = uint32_t(m.map_w());
  res->best = {Position{int(index % map_w), int(index / map_w), k >> 32}};
  return Status::Ok();
}

// --top K > 1 or --map: enqueue(map) writes the exact 32-bit map, which comes back; the host
// picks the K best.
template <typename Enqueue>
Status finish_u32_map(Matcher& m, Result* res, Enqueue enqueue) {
  const int map_w = m.map_w(), map_h = m.map_h();
  std::vector<uint32_t> map32;
  PARVIS_TRY(fetch_map(m, &map32, &res->timings, enqueue));
  const double t0 = now_ms();
  std::vector<uint64_t> scores(map32.begin(), map32.end());
  res->best = select_best(scores.data(), map_w, map_h, m.params.top_k);
  if (m.params.want_map) scores_to_map(scores.data(), map_w, map_h, &res->map);
  res->timings.compute_ms += now_ms() - t0;
  return Status::Ok();
}

// ---- direct path -----------------------------------------------------------------------------------
Status run_direct(Matcher& m, const Image& src, Result* res) {
  if (!m.direct_fast) {
    res->explain += "; the template is too large for the fast direct kernel "
                    "(w h 255^2 >= 2^32 or over 44 KiB packed): generic exact kernel";
    return run_exact_map(m, src, res, false);
  }
  PARVIS_TRY(timed_upload(m, src));
  if (m.params.top_k == 1 && !m.params.want_map) {
    DeviceOut* rec = m.d_direct_rec.get();
    PARVIS_TRY(finish_fused_key(m, &m.graph_direct, res,
                                [&] { return enqueue_direct(m, rec, nullptr); }));
  } else {
    PARVIS_TRY(
        finish_u32_map(m, res, [&](uint32_t* map) { return enqueue_direct(m, nullptr, map); }));
  }
  res->method_used = Method::Direct;
  return Status::Ok();
}

// ---- NTT path (the exact FFT method) -------------------------------------------------------------
Status run_ntt(Matcher& m, const Image& src, Result* res) {
  PARVIS_TRY(setup_ntt(m));
  res->explain += "; exact NTT modulo p = 15*2^27+1, size " + std::to_string(m.row_plan.n) + "x" +
                  std::to_string(m.col_plan.n);
  const bool fused = m.params.top_k == 1 && !m.params.want_map;
  if (fused)
    PARVIS_TRY(time_stages(m, src, res,
                           [&](cuda::StageTimer& st) { return enqueue_ntt(m, nullptr, st); }));
  PARVIS_TRY(timed_upload(m, src));
  cuda::StageTimer untimed(false);
  if (fused)
    PARVIS_TRY(finish_fused_key(m, &m.graph_ntt, res,
                                [&] { return enqueue_ntt(m, nullptr, untimed); }));
  else
    PARVIS_TRY(
        finish_u32_map(m, res, [&](uint32_t* map) { return enqueue_ntt(m, map, untimed); }));
  res->method_used = Method::FFT;
  return Status::Ok();
}

// ---- FFT path --------------------------------------------------------------------------------------
// The map path: top-K > 1, a wanted map, or too many near-ties for the fused path. The FFT map
// comes back; the host finds the K-th smallest FFT score, lists every position within 2E of it,
// and the GPU re-scores that list exactly.
Status run_fft_map(Matcher& m, const Image& src, Result* res, bool uploaded) {
  cudaStream_t s = m.stream;
  const int map_w = m.map_w(), map_h = m.map_h();
  const size_t n = size_t(map_w) * map_h;
  PARVIS_TRY(timed_upload(m, src, !uploaded));
  std::vector<double> approx;
  cuda::StageTimer untimed(false);
  PARVIS_TRY(fetch_map(m, &approx, &res->timings,
                       [&](double* map) { return enqueue_fft_any(m, false, map, untimed); }));

  const double t0 = now_ms();
  const size_t k = std::min<size_t>(size_t(m.params.top_k), n);
  std::vector<double> part(approx);
  std::nth_element(part.begin(), part.begin() + (k - 1), part.end());
  const double threshold = part[k - 1] + m.two_e;
  std::vector<int2> cand;
  for (int y = 0; y < map_h; ++y)
    for (int x = 0; x < map_w; ++x)
      if (approx[size_t(y) * map_w + x] <= threshold) cand.push_back(make_int2(x, y));
  DeviceBuffer<int2> d_cand;
  DeviceBuffer<unsigned long long> d_exact;
  PARVIS_TRY(d_cand.alloc(cand.size()));
  PARVIS_TRY(d_exact.alloc(cand.size()));
  std::vector<unsigned long long> exact(cand.size());
  CUDA_CHECK(cudaMemcpyAsync(d_cand.get(), cand.data(), cand.size() * sizeof(int2),
                             cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaMemsetAsync(d_exact.get(), 0, cand.size() * 8, s));
  rescore_select<<<m.num_sms * 8, kRescoreThreads, 0, s>>>(
      m.d_src.get(), m.pitch, m.d_tpl.get(), m.w, m.h, rows_per_chunk(m.w), false, d_cand.get(),
      nullptr, unsigned(cand.size()), int(cand.size()), d_exact.get(), nullptr, nullptr);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpyAsync(exact.data(), d_exact.get(), cand.size() * 8, cudaMemcpyDeviceToHost,
                             s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  TopK top(m.params.top_k);
  for (size_t i = 0; i < cand.size(); ++i) {
    top.offer(cand[i].x, cand[i].y, exact[i]);
    // The map shows the exact score wherever one was computed (ties at 0 stay exactly 0).
    approx[size_t(cand[i].y) * map_w + cand[i].x] = double(exact[i]);
  }
  res->best = top.sorted();
  if (m.params.want_map) res->map = std::move(approx);
  res->timings.compute_ms += now_ms() - t0;
  res->method_used = Method::FFT;
  return Status::Ok();
}

Status run_fft(Matcher& m, const Image& src, Result* res) {
  std::string why_not;
  if (ntt_eligible(m, &why_not)) return run_ntt(m, src, res);
  res->explain += "; no NTT: " + why_not;
  PARVIS_TRY(setup_fft(m));
  res->explain += "; FFT size " + std::to_string(m.P) + "x" + std::to_string(m.Q) + " (timed)";
  if (m.params.top_k != 1 || m.params.want_map) return run_fft_map(m, src, res, false);
  PARVIS_TRY(time_stages(m, src, res,
                         [&](cuda::StageTimer& st) { return enqueue_fft_any(m, true, nullptr, st); }));
  PARVIS_TRY(timed_upload(m, src));
  cuda::StageTimer untimed(false);
  PARVIS_TRY(
      run_graph(m, &m.graph_fft, [&] { return enqueue_fft_any(m, true, nullptr, untimed); }));
  DeviceOut o;
  PARVIS_TRY(fetch_result(m, &res->timings, &o));
  if (o.count > unsigned(kCandidateCap) || o.count == 0) {
    // Many near-ties (flat images): the map path lists them all on the host.
    res->explain += "; " + std::to_string(o.count) +
                    " positions within the rounding bound of the minimum: map path";
    const Timings fused_t = res->timings;
    PARVIS_TRY(run_fft_map(m, src, res, true));
    res->timings.upload_ms += fused_t.upload_ms;
    res->timings.compute_ms += fused_t.compute_ms;
    res->timings.download_ms += fused_t.download_ms;
    return Status::Ok();
  }
  res->best = {Position{o.best_x, o.best_y, o.best_score}};
  res->method_used = Method::FFT;
  return Status::Ok();
}

// ---- auto: the cost model --------------------------------------------------------------------------
Method choose(const Matcher& m, std::string* why) {
  if (m.params.metric == Metric::SAD) {
    *why = "auto chose direct: SAD has no FFT form";
    return Method::Direct;
  }
  if (m.params.want_map) {
    *why = "auto chose direct: a score map was asked for, and direct gives it exactly";
    return Method::Direct;
  }
  const double macs = double(m.map_w()) * m.map_h() * m.w * m.h;
  double direct_us = macs / kGenericMacsPerUs;
  if (m.direct_fast) {
    const int R = direct_rows(m);
    const double threads = double(div_up(m.map_w(), 4)) * div_up(m.map_h(), R);
    const double ops = double(R + m.h - 1) * m.nw * (4 + 5 * R);
    const double waves = std::max(1.0, threads / (double(m.num_sms) * (R == 4 ? 1024 : 640)));
    direct_us = kDirectFixedUs + ops * waves * kDirectUsPerOp;
  }
  std::string no_ntt;
  const bool ntt = ntt_eligible(m, &no_ntt);
  const int P = ntt ? ntt::good_length(m.W) : cuda::fft::good_size(m.W);
  const int Q = ntt ? ntt::good_length(m.H) : cuda::fft::good_size(m.H);
  const double fft_us = ntt ? kNttFixedUs + kNttUsPerPoint * double(P) * Q
                            : kFftFixedUs + kFftUsPerPoint * double(P) * Q;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "auto chose %s: direct ~%.0f us (%.3g multiply-adds, %s kernel) vs fft ~%.0f us "
                "(%dx%d %s)",
                direct_us <= fft_us ? "direct" : "fft", direct_us, macs,
                m.direct_fast ? "dp4a" : "generic", fft_us, P, Q,
                ntt ? "exact NTTs + window sums" : "double FFTs + integral image + exact re-scoring");
  *why = buf;
  return direct_us <= fft_us ? Method::Direct : Method::FFT;
}

}  // namespace

Status matcher_run(Matcher* m, const Image& gray_source, Result* out) {
  PARVIS_TRY(cuda::require_device());
  PARVIS_TRY(check_source(gray_source, m->w, m->h));
  PARVIS_TRY(setup_source_size(*m, gray_source.width, gray_source.height));
  Result res;
  res.map_width = m->map_w();
  res.map_height = m->map_h();
  Method method = m->params.method;
  if (method == Method::Auto)
    method = choose(*m, &res.explain);
  else
    res.explain = std::string(method_name(method)) + ", as asked";
  if (method == Method::FFT)
    PARVIS_TRY(run_fft(*m, gray_source, &res));
  else
    PARVIS_TRY(run_direct(*m, gray_source, &res));
  *out = std::move(res);
  return Status::Ok();
}

}  // namespace parvis::match
