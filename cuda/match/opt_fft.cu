// cuda-opt template matching: the FFT method in double — cuFFT + exact re-scoring.
//
// cuFFT in double where the exact NTT (opt_ntt.cu) cannot take the template (large or bright templates: the capsule 479x432), with exact
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
//   only near-ties (fft_common.cuh). PARVIS_TUNING=match.ntt=0 forces this path (tests/gpu_check.sh).
// Either sequence is one CUDA graph per source size.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <utility>

#include "match/opt_matcher.cuh"
#include "match/opt_source.cuh"

namespace parvis::match::opt {

namespace {

constexpr int kRowThreads = 256;             // prepare_rows: one block per row
constexpr int kRowItems = 8;                 // pixels per thread and segment
constexpr int kRowSegment = kRowThreads * kRowItems;
constexpr int kColTileW = 32, kColTileH = 64, kColThreadsY = 8;  // column pass tiles
constexpr int kColItems = kColTileH / kColThreadsY;
constexpr int kMapBlockX = 32, kMapBlockY = 8, kMapRows = 4;  // ssd_min / collect
constexpr int kCandidateCap = 4096;             // fused path; more -> the map path

// ---- 1. prepare_rows: FFT input + row scan of the squares, one pass over the source -------
// Work is warp-striped so that every load and store of a warp covers consecutive pixels
// (fully coalesced): warp w of the block owns 256 consecutive pixels of a 2048-pixel segment,
// lane l handles pixels k * 32 + l of them (k = 0..7). Scan, CUB style: thread (its square)
// -> warp (__shfl_up_sync inclusive scan, carried across the 8 steps) -> block (the 8 warp
// totals in shared memory) -> row (a carry across segments).
template <typename IT>
__global__ __launch_bounds__(kRowThreads) void prepare_rows(const uint8_t* src, size_t pitch, int W,
                                                            int H, double* fft_in, int P,
                                                            IT* row_scan, int ld) {
  constexpr int kWarps = kRowThreads / cuda::kWarp;
  __shared__ IT warp_total[kWarps];
  const int y = blockIdx.x, tid = threadIdx.x;
  const int lane = tid & (cuda::kWarp - 1), warp = tid / cuda::kWarp;
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
// Out of place: a batch's shared source spectrum is only read (out is the matcher's own; a
// single call passes its own spectrum as both). The first kernel of every graph shape, so it
// also resets the run's record (stream order: before its users).
__global__ void mul_spectrum(const double2* spec, const double2* tpl_spec, double2* out, size_t n,
                             DeviceOut* rec) {
  if (blockIdx.x == 0 && threadIdx.x == 0 && rec) {
    rec->min_key = ~0ull;
    rec->count = 0;
    rec->done = 0;
  }
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    const double2 a = spec[i], b = tpl_spec[i];
    out[i] = make_double2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
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
  // u64 words for both widths (u32 use half of it). The integral image itself is allocated by
  // bind_fft_source, only where this matcher keeps its own (not a batch's shared one).
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

// Template rows per re-scoring chunk: about 1024 pixels (4 per thread).
int rows_per_chunk(int w) { return std::max(1, 1024 / w); }

// ---- the FFT pipeline (steps 1-7; with `fused`, 8-9 as well) ---------------------------------------
// The source's part (steps 1-4: integral image, spectrum) runs unless a batch's matcher reads
// them from the batch's shared slot (m.src_bind, opt_source.cuh); a maker writes them there.
template <typename IT>
Status enqueue_fft(Matcher& m, bool fused, double* map_out, cuda::StageTimer& st) {
  cudaStream_t s = m.stream;
  const int W = m.W, H = m.H, map_w = m.map_w(), map_h = m.map_h();
  const SourceBinding& bind = m.src_bind;
  const bool own = bind.role == SourceRole::Own;
  IT* ii = reinterpret_cast<IT*>(own ? m.d_ii.get() : bind.slot->ii.get());
  double2* src_spec = own ? m.d_spec.get() : bind.slot->spec.get();
  DeviceOut* out = m.d_out.get();
  PARVIS_TRY(st.mark("", "start"));
  if (bind.role != SourceRole::Read) {
    prepare_rows<IT><<<m.Q, kRowThreads, 0, s>>>(m.d_src.get(), m.pitch, W, H, m.d_real.get(),
                                                 m.P, ii, m.ld);
    CUDA_CHECK_LAUNCH();
    PARVIS_TRY(st.mark(kStageIntegralSource, "prepare_rows (+ FFT input)"));
    IT* tiles = reinterpret_cast<IT*>(m.d_tile_sums.get());
    const dim3 cgrid(div_up(W, kColTileW), div_up(H, kColTileH)), cblock(kColTileW, kColThreadsY);
    col_tile_sums<IT><<<cgrid, cblock, 0, s>>>(ii, m.ld, W, H, tiles);
    CUDA_CHECK_LAUNCH();
    col_scan_tiles<IT><<<cgrid, cblock, 0, s>>>(ii, m.ld, W, H, tiles);
    CUDA_CHECK_LAUNCH();
    PARVIS_TRY(st.mark(kStageIntegralSource, "col_tile_sums + col_scan_tiles"));
    CUFFT_CHECK(cufftExecD2Z(m.fwd.get(), m.d_real.get(), src_spec));
    PARVIS_TRY(st.mark(kStageCrossCorrelation, "cuFFT D2Z"));
  }
  const size_t n_spec = size_t(m.P / 2 + 1) * m.Q;
  mul_spectrum<<<m.num_sms * 8, 256, 0, s>>>(src_spec, m.d_tpl_spec.get(), m.d_spec.get(), n_spec,
                                             out);
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

// Before each enqueue, after the upload (opt_source.cuh): the batch's slot of this word width
// and padded size, or the matcher's own integral image (allocated here, once per size).
Status bind_fft_source(Matcher& m) {
  const size_t n_ii = size_t(m.ld) * m.H;  // words of the integral image
  SourceTransformSizes sizes;
  sizes.spec = size_t(m.P / 2 + 1) * m.Q;
  sizes.ii = m.wide ? n_ii : (n_ii + 1) / 2;  // in u64 words
  PARVIS_TRY(bind_source_transform(m, m.wide ? kFft64 : kFft32, m.P, m.Q, sizes));
  if (m.src_bind.role == SourceRole::Own) PARVIS_TRY(m.d_ii.alloc(n_ii));
  return Status::Ok();
}

// One ungraphed enqueue of the pipeline, bound first; a maker's publishes the slot after it.
Status bound_fft(Matcher& m, const std::function<Status()>& enqueue) {
  PARVIS_TRY(bind_fft_source(m));
  PARVIS_TRY(enqueue());
  return source_transform_made(m);
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
  PARVIS_TRY(bound_fft(m, [&] {
    return fetch_map(m, &approx, &res->timings,
                     [&](double* map) { return enqueue_fft_any(m, false, map, untimed); });
  }));

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

// --all without --map (opt_choice.cu): cuFFT's map stays on the device; the positions whose
// approximate score is within E of the threshold or under come back alone, with their
// approximate scores, and what the choice needs is re-scored exactly.
Status run_fft_choice(Matcher& m, const Image& src, Result* res, bool* overflow) {
  PARVIS_TRY(timed_upload(m, src));
  PARVIS_TRY(m.d_choice_approx.alloc(size_t(m.map_w()) * size_t(m.map_h())));
  cuda::StageTimer untimed(false);
  PARVIS_TRY(bound_fft(m, [&] { return enqueue_fft_any(m, false, m.d_choice_approx.get(), untimed); }));
  PARVIS_TRY(enqueue_collect_approx(m, m.d_choice_approx.get(), m.two_e / 2));
  PARVIS_TRY(finish_device_choice(m, m.params, m.two_e / 2, res, overflow));
  res->method_used = Method::FFT;
  return Status::Ok();
}

}  // namespace

Status enqueue_fft_map(Matcher& m, double* map, double* e) {
  m.src_bind.counted = false;  // this run's made / reused not counted yet
  PARVIS_TRY(setup_fft(m));
  cuda::StageTimer untimed(false);
  PARVIS_TRY(bound_fft(m, [&] { return enqueue_fft_any(m, false, map, untimed); }));
  *e = m.two_e / 2;
  return Status::Ok();
}

Status enqueue_exact_ssd(Matcher& m, const int2* cand, unsigned count, const unsigned* count_ptr,
                         unsigned long long* exact) {
  if (count == 0) return Status::Ok();
  CUDA_CHECK(cudaMemsetAsync(exact, 0, size_t(count) * sizeof(unsigned long long), m.stream));
  rescore_select<<<m.num_sms * 8, kRescoreThreads, 0, m.stream>>>(
      m.d_src.get(), m.pitch, m.d_tpl.get(), m.w, m.h, rows_per_chunk(m.w), false, cand, count_ptr,
      count, int(count), exact, nullptr, nullptr);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

Status run_fft(Matcher& m, const Image& src, Result* res) {
  std::string why_not;
  if (ntt_eligible(m, &why_not)) return run_ntt(m, src, res);
  res->explain.append("; no NTT: ").append(why_not);
  m.src_bind.counted = false;  // this run's made / reused not counted yet
  PARVIS_TRY(setup_fft(m));
  char note[96];  // appended without temporaries: a video's frames allocate nothing
  std::snprintf(note, sizeof note, "; FFT size %dx%d (timed), %d-bit integral image words",
                int(m.P), int(m.Q), m.wide ? 64 : 32);
  res->explain.append(note);
  if (device_choice(m.params)) {
    bool overflow = false;
    PARVIS_TRY(run_fft_choice(m, src, res, &overflow));
    if (!overflow) return Status::Ok();
    res->explain.append("; more matches than the device's list holds: the direct method's exact map");
    return run_direct(m, src, res);
  }
  if (m.params.top_k != 1 || map_needed(m.params)) return run_fft_map(m, src, res, false);
  PARVIS_TRY(time_stages(m, src, res, [&](cuda::StageTimer& st) {
    return bound_fft(m, [&] { return enqueue_fft_any(m, true, nullptr, st); });
  }));
  PARVIS_TRY(timed_upload(m, src));
  cuda::StageTimer untimed(false);
  // The graph of this binding: a reader's has no source nodes (opt_source.cuh).
  PARVIS_TRY(bind_fft_source(m));
  PARVIS_TRY(rebind_graph(m, &m.graph_fft, &m.graph_fft_bound));
  PARVIS_TRY(
      run_graph(m, &m.graph_fft, [&] { return enqueue_fft_any(m, true, nullptr, untimed); }));
  PARVIS_TRY(source_transform_made(m));
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

}  // namespace parvis::match::opt
