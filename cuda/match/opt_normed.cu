// cuda-opt: NCC (TM_CCOEFF_NORMED) and ccorr-normed (TM_CCORR_NORMED) on the device (issue 14,
// part 2). The exact SSD map comes from the direct method (dp4a, or the generic exact kernel for
// large templates) or from the FFT method's exact NTT (opt_ntt.cu, where it takes the template);
// the window sums ΣI, ΣI² from two passes over the source on the GPU; then the
// shared expression of match/ncc.hpp (explicit-rounding intrinsics: seq's bits) per position, the
// best position found on the device, and only what was asked for comes back:
//   top 1, no map   the best (key, index): 16 bytes;
//   top K > 1       the rank keys (8 bytes a position), the K best picked on the host;
//   --map / --all   the doubles (8 bytes a position); keys and the K best on the host.
// Steps (one stream, no graph):
//   W1 window_col_sums_ii: C(y, x) = Σ_{j<h} I(y+j, x) and the same of I², y < map_h, 64-bit;
//   W2 row_prefix: each row of C turned in place into its exclusive prefix P(y, x), x <= W,
//      so that ΣI of the window at (x, y) is P(y, x + w) − P(y, x) (exact: integers);
//   W3 normed_keys: ΣI·T = (ΣI² + ΣT² − SSD) / 2 exactly, ncc::score, its key (ncc::key_of),
//      the double when a map is asked for; each block's smallest key -> atomicMin;
//   W4 normed_tie: of the positions holding that key, the smallest index (y, then x: seq's
//      order) -> atomicMin.
// Sources too tall for the grids (map_h > 524,280) and match.ncc_host=1 take the former path (SSD map to the host, window sums and the expression
// there: match.cpp's normed_from_ssd_map), for comparison.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "match/ncc.hpp"
#include "match/opt_matcher.cuh"
#include "match/opt_normed.cuh"

namespace parvis::match::opt {

namespace {

using namespace normed;

__global__ __launch_bounds__(kColThreads) void window_col_sums_ii(const uint8_t* src, size_t pitch,
                                                                  int W, int h, int map_h,
                                                                  uint64_t* ci, uint64_t* cq,
                                                                  int ld) {
  col_sums_thread(src, pitch, W, h, map_h, ci, cq, ld,
                  int(blockIdx.x * kColThreads + threadIdx.x) * 4, int(blockIdx.y) * kColRows);
}

// W2. Row y of C (W values, then anything) -> its exclusive prefix P(y, 0..W), in place: tiles
// of kPrefixThreads columns, a block scan each, carried along the row.
__global__ __launch_bounds__(kPrefixThreads) void row_prefix(uint64_t* ci, uint64_t* cq, int W,
                                                             int ld) {
  __shared__ cuda::BlockScratch<unsigned long long> scratch;
  unsigned long long* ri = reinterpret_cast<unsigned long long*>(ci) + size_t(blockIdx.x) * ld;
  unsigned long long* rq = reinterpret_cast<unsigned long long*>(cq) + size_t(blockIdx.x) * ld;
  unsigned long long carry_i = 0, carry_q = 0;
  for (int x0 = 0; x0 <= W; x0 += kPrefixThreads) {
    const int x = x0 + threadIdx.x;
    const unsigned long long vi = x < W ? ri[x] : 0ull, vq = x < W ? rq[x] : 0ull;
    unsigned long long ti = 0, tq = 0;
    const unsigned long long ei = cuda::block_exclusive_sum(vi, scratch, &ti);
    const unsigned long long eq = cuda::block_exclusive_sum(vq, scratch, &tq);
    if (x <= W) {
      ri[x] = carry_i + ei;
      rq[x] = carry_q + eq;
    }
    carry_i += ti;
    carry_q += tq;
  }
}

__global__ void normed_reset(DeviceOut* best) {
  best->min_key = ~0ull;
  best->count = ~0u;
}

// W3. The score of each position, its key, the block's smallest key folded into best->min_key.
__global__ __launch_bounds__(kKeyBlockX* kKeyBlockY) void normed_keys(
    const uint64_t* pi, const uint64_t* pq, int ld, const uint32_t* ssd32, const uint64_t* ssd64,
    int w, int map_w, int map_h, Consts c, uint64_t* keys, double* map, DeviceOut* best) {
  __shared__ cuda::BlockScratch<unsigned long long> scratch;
  const int x = blockIdx.x * kKeyBlockX + threadIdx.x, y = blockIdx.y * kKeyBlockY + threadIdx.y;
  unsigned long long key = ~0ull;
  if (x < map_w && y < map_h) {
    const size_t idx = size_t(y) * map_w + x;
    const double score = score_at(pi, pq, ld, ssd32 ? uint64_t(ssd32[idx]) : ssd64[idx], w, x, y, c);
    key = ncc::key_of(score);
    if (keys) keys[idx] = key;
    if (map) map[idx] = score;
  }
  if (best) {
    key = cuda::block_min(key, scratch);
    if (threadIdx.x == 0 && threadIdx.y == 0 && key != ~0ull) atomicMin(&best->min_key, key);
  }
}

// W4. Among the positions holding the smallest key, the smallest index (y * map_w + x) into
// best->count (reset to ~0u before W3).
__global__ __launch_bounds__(kKeyBlockX* kKeyBlockY) void normed_tie(const uint64_t* keys,
                                                                     int map_w, int map_h,
                                                                     DeviceOut* best) {
  const int x = blockIdx.x * kKeyBlockX + threadIdx.x, y = blockIdx.y * kKeyBlockY + threadIdx.y;
  if (x >= map_w || y >= map_h) return;
  const size_t idx = size_t(y) * map_w + x;
  if (keys[idx] == best->min_key) atomicMin(&best->count, unsigned(idx));
}

}  // namespace

bool normed_device_fits(const Matcher& m) {
  const size_t map_h = size_t(m.map_h());
  return size_t(m.map_w()) * map_h <= 0xffffffffull &&
         div_up(map_h, kColRows) <= 65535u && div_up(map_h, kKeyBlockY) <= 65535u;
}

Status run_normed(Matcher& m, const Image& src, bool ntt, Result* res) {
  const int map_w = m.map_w(), map_h = m.map_h(), W = m.W;
  const size_t n = size_t(map_w) * map_h;
  if (n > 0xffffffffull) return Status::bad_input("normed match: more than 2^32 positions");
  const int top_k = m.asked.top_k;
  const bool want_map = m.asked.want_map, top1 = top_k == 1 && !want_map;
  const int ld = (W + 1 + 3) / 4 * 4;  // W1 writes 4 columns at a time; P needs columns 0..W
  cudaStream_t s = m.stream;

  // Buffers, per source size (DeviceBuffer::alloc keeps an allocation of the same size).
  PARVIS_TRY(m.d_norm_ci.alloc(size_t(ld) * map_h));
  PARVIS_TRY(m.d_norm_cq.alloc(size_t(ld) * map_h));
  uint32_t* ssd32 = nullptr;
  uint64_t* ssd64 = nullptr;
  if (ntt || m.direct_fast) {
    PARVIS_TRY(m.d_norm_ssd32.alloc(n));
    ssd32 = m.d_norm_ssd32.get();
  } else {
    PARVIS_TRY(m.d_norm_ssd64.alloc(n));
    ssd64 = m.d_norm_ssd64.get();
  }
  uint64_t* keys = nullptr;
  double* dmap = nullptr;
  if (!want_map) {  // top 1: the keys for the tie pass; top K: the keys come back
    PARVIS_TRY(m.d_norm_keys.alloc(n));
    keys = m.d_norm_keys.get();
  } else {
    PARVIS_TRY(m.d_norm_map.alloc(n));
    dmap = m.d_norm_map.get();
  }
  PARVIS_TRY(m.d_norm_best.alloc(1));
  DeviceOut* best = m.d_norm_best.get();  // min_key and (as the index) count, reset below

  PARVIS_TRY(timed_upload(m, src, true));
  // The exact SSD map (m.params: SSD).
  if (ntt)
    PARVIS_TRY(enqueue_ntt_map(m, ssd32));
  else
    PARVIS_TRY(enqueue_ssd_map(m, ssd32, ssd64));
  const dim3 g1(div_up(size_t(W), 4 * kColThreads), div_up(size_t(map_h), kColRows));
  window_col_sums_ii<<<g1, kColThreads, 0, s>>>(m.d_src.get(), m.pitch, W, m.h, map_h,
                                                m.d_norm_ci.get(), m.d_norm_cq.get(), ld);
  CUDA_CHECK_LAUNCH();
  row_prefix<<<unsigned(map_h), kPrefixThreads, 0, s>>>(m.d_norm_ci.get(), m.d_norm_cq.get(), W, ld);
  CUDA_CHECK_LAUNCH();
  const TemplateSums ts = template_sums(m.tpl);
  const normed::Consts c{ts.n, ts.st, ts.stt, m.asked.metric == Metric::NCC};
  const dim3 kb(kKeyBlockX, kKeyBlockY), kg(div_up(size_t(map_w), kKeyBlockX),
                                           div_up(size_t(map_h), kKeyBlockY));
  if (top1) {
    normed_reset<<<1, 1, 0, s>>>(best);
    CUDA_CHECK_LAUNCH();
  }
  normed_keys<<<kg, kb, 0, s>>>(m.d_norm_ci.get(), m.d_norm_cq.get(), ld, ssd32, ssd64, m.w, map_w,
                                map_h, c, keys, dmap, top1 ? best : nullptr);
  CUDA_CHECK_LAUNCH();
  if (top1) {
    normed_tie<<<kg, kb, 0, s>>>(keys, map_w, map_h, best);
    CUDA_CHECK_LAUNCH();
  }

  // What comes back.
  CUDA_CHECK(cudaEventRecord(m.ev[2], s));
  std::vector<uint64_t> host_keys;
  if (top1) {
    PARVIS_TRY(m.h_norm_best.alloc(1));
    CUDA_CHECK(cudaMemcpyAsync(m.h_norm_best.get(), best, sizeof(DeviceOut),
                               cudaMemcpyDeviceToHost, s));
  } else if (want_map) {
    PARVIS_TRY(alloc_host(&res->map, n));
    CUDA_CHECK(cudaMemcpyAsync(res->map.data(), dmap, n * sizeof(double), cudaMemcpyDeviceToHost, s));
  } else {
    PARVIS_TRY(alloc_host(&host_keys, n));
    CUDA_CHECK(cudaMemcpyAsync(host_keys.data(), keys, n * sizeof(uint64_t),
                               cudaMemcpyDeviceToHost, s));
  }
  CUDA_CHECK(cudaEventRecord(m.ev[3], s));
  PARVIS_TRY(elapsed(m, &res->timings));  // waits for the copy

  const double t0 = now_ms();
  if (top1) {
    const DeviceOut o = *m.h_norm_best.get();
    if (o.count == ~0u) return Status::runtime("internal: the normed selection found no position");
    res->best = {Position{int(o.count % unsigned(map_w)), int(o.count / unsigned(map_w)), o.min_key}};
  } else {
    if (want_map) {
      PARVIS_TRY(alloc_host(&host_keys, n));
      for (size_t i = 0; i < n; ++i) host_keys[i] = ncc::key_of(res->map[i]);
    }
    res->best = select_best(host_keys.data(), map_w, map_h, top_k);
  }
  res->timings.compute_ms += now_ms() - t0;
  res->method_used = ntt ? Method::FFT : Method::Direct;
  res->explain = std::string(metric_name(m.asked.metric)) + ": ΣI·T from " +
                 (ntt ? "the exact NTT's SSD map" : "an exact SSD map") +
                 ", window sums, the normed expression and the best position on the device (" +
                 res->explain + ")";
  return Status::Ok();
}

}  // namespace parvis::match::opt
