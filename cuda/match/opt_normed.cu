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
// cuFFT (--method fft, or auto, where the NTT cannot take the template): its approximate SSD map
// (opt_fft.cu, |error| <= e) instead of the exact one, then
//   W5 normed_bounds: each position's rank ends (ncc::key_ends: ΣI·T within the bound) -> host;
//   settle (select.hpp) on the host picks the positions the answer could hold, and
//   W6 exact SSD of each (opt_fft.cu's rescore_select) -> candidate_keys -> their exact keys.
// Sources too tall for the grids (map_h > 524,280) and match.ncc_host=1 take the former path (SSD map to the host, window sums and the expression
// there: match.cpp's normed_from_ssd_map), for comparison.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "match/fft_wobble.hpp"
#include "match/ncc.hpp"
#include "match/opt_matcher.cuh"
#include "match/opt_normed.cuh"
#include "match/select.hpp"

namespace parvis::match::opt {

namespace {

using namespace normed;

constexpr unsigned kNormedCandidateCap = 4096;  // cuFFT, top 1: more -> the host's settle

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

// W5. The ends of each position's rank from cuFFT's SSD (|approx − SSD| <= e): ΣI·T =
// (ΣI² + ΣT² − SSD) / 2 within [lo, hi], widened by one unit for the doubles' rounding here.
// `wobble_width` > 0: match.fft_bound_scale's test hook (fft_wobble.hpp), e already scaled.
// With `best`: each block's smallest upper end folded into best->min_key (atomicMin): the
// threshold T of the top 1 on the device (the best's exact key is at most T).
__global__ __launch_bounds__(kKeyBlockX* kKeyBlockY) void normed_bounds(
    const uint64_t* pi, const uint64_t* pq, int ld, const double* approx, double e,
    double wobble_width, int w, int map_w, int map_h, Consts c, uint64_t* lo, uint64_t* hi,
    DeviceOut* best) {
  __shared__ cuda::BlockScratch<unsigned long long> scratch;
  const int x = blockIdx.x * kKeyBlockX + threadIdx.x, y = blockIdx.y * kKeyBlockY + threadIdx.y;
  unsigned long long top = ~0ull;
  if (x < map_w && y < map_h) {
    const size_t idx = size_t(y) * map_w + x, r = size_t(y) * ld;
    const uint64_t si = pi[r + x + w] - pi[r + x], sii = pq[r + x + w] - pq[r + x];
    const double whole = double(sii + c.stt);  // < 2^53: exact
    const double a = wobble_width > 0 ? approx[idx] + wobble_width * wobble(x, y) : approx[idx];
    const double sit_lo = floor((whole - a - e) * 0.5) - 1.0;
    const double sit_hi = ceil((whole - a + e) * 0.5) + 1.0;
    uint64_t l, h;
    ncc::key_ends(c.coeff, c.n, si, sii, int64_t(sit_lo), int64_t(sit_hi), c.st, c.stt, &l, &h);
    lo[idx] = l;
    hi[idx] = h;
    top = h;
  }
  if (best) {
    top = cuda::block_min(top, scratch);
    if (threadIdx.x == 0 && threadIdx.y == 0 && top != ~0ull) atomicMin(&best->min_key, top);
  }
}

// Top 1 on the device, after normed_bounds: every position whose lower end is at most T
// (best->min_key) is a candidate (at most `cap` listed; *count may pass it).
__global__ __launch_bounds__(kKeyBlockX* kKeyBlockY) void normed_collect(
    const uint64_t* lo, int map_w, int map_h, const DeviceOut* best, int2* cand, unsigned* count,
    unsigned cap) {
  const int x = blockIdx.x * kKeyBlockX + threadIdx.x, y = blockIdx.y * kKeyBlockY + threadIdx.y;
  if (x >= map_w || y >= map_h || lo[size_t(y) * map_w + x] > best->min_key) return;
  const unsigned i = atomicAdd(count, 1u);
  if (i < cap) cand[i] = make_int2(x, y);
}

// Top 1: the candidates' exact keys (from their exact SSDs) and the best by (key, y, x), one
// block: best->min_key = its key, best->count = its index (y map_w + x), best->best_score = the
// candidates' count (more than `cap`: nothing picked, the host's settle instead).
__global__ __launch_bounds__(1024) void normed_pick(const int2* cand, const unsigned* count,
                                                    unsigned cap, const unsigned long long* exact,
                                                    const uint64_t* pi, const uint64_t* pq, int ld,
                                                    int w, int map_w, Consts c, DeviceOut* best) {
  __shared__ cuda::BlockScratch<unsigned long long> scratch;
  __shared__ cuda::BlockScratch<unsigned> scratch_i;
  const unsigned n = *count;
  unsigned long long key = ~0ull;
  unsigned index = ~0u;
  if (n <= cap)
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) {
      const unsigned long long k = ncc::key_of(score_at(pi, pq, ld, exact[i], w, cand[i].x, cand[i].y, c));
      const unsigned at = unsigned(cand[i].y) * unsigned(map_w) + unsigned(cand[i].x);
      if (k < key || (k == key && at < index)) key = k, index = at;
    }
  const unsigned long long least = cuda::block_min(key, scratch);
  const unsigned first = cuda::block_min(key == least ? index : ~0u, scratch_i);
  if (threadIdx.x == 0) {
    best->best_score = n;
    if (n <= cap) {
      best->min_key = least;
      best->count = first;
    }
  }
}

// W6. The exact keys of the candidates from their exact SSDs.
__global__ void candidate_keys(const int2* cand, unsigned count, const unsigned long long* exact,
                               const uint64_t* pi, const uint64_t* pq, int ld, int w, Consts c,
                               uint64_t* keys) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  keys[i] = ncc::key_of(score_at(pi, pq, ld, exact[i], w, cand[i].x, cand[i].y, c));
}

// W1 + W2: the row prefixes of the window column sums of I and I², rows `ld` apart.
Status enqueue_window_prefix(Matcher& m, int ld) {
  const int W = m.W, map_h = m.map_h();
  const dim3 g1(div_up(size_t(W), 4 * kColThreads), div_up(size_t(map_h), kColRows));
  window_col_sums_ii<<<g1, kColThreads, 0, m.stream>>>(m.d_src.get(), m.pitch, W, m.h, map_h,
                                                       m.d_norm_ci.get(), m.d_norm_cq.get(), ld);
  CUDA_CHECK_LAUNCH();
  row_prefix<<<unsigned(map_h), kPrefixThreads, 0, m.stream>>>(m.d_norm_ci.get(), m.d_norm_cq.get(), W, ld);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

normed::Consts consts_of(const Matcher& m) {
  const TemplateSums ts = template_sums(m.tpl);
  return normed::Consts{ts.n, ts.st, ts.stt, m.asked.metric == Metric::NCC};
}

// cuFFT's map: the ranks' ends on the device, the choice on the host (select.hpp's settle), the
// candidates re-scored exactly on the device.
Status normed_from_fft(Matcher& m, const Image& src, int ld, Result* res) {
  const int map_w = m.map_w(), map_h = m.map_h();
  const size_t n = size_t(map_w) * map_h;
  cudaStream_t s = m.stream;
  PARVIS_TRY(m.d_norm_approx.alloc(n));
  PARVIS_TRY(m.d_norm_lo.alloc(n));
  PARVIS_TRY(m.d_norm_hi.alloc(n));
  PARVIS_TRY(timed_upload(m, src, true));
  double e = 0;
  PARVIS_TRY(enqueue_fft_map(m, m.d_norm_approx.get(), &e));
  const double scale = m.tuning.fft_bound_scale > 1 ? m.tuning.fft_bound_scale : 1.0;
  const double wobble_width = e * scale - e;
  e *= scale;
  PARVIS_TRY(enqueue_window_prefix(m, ld));
  const Consts c = consts_of(m);
  const dim3 kb(kKeyBlockX, kKeyBlockY), kg(div_up(size_t(map_w), kKeyBlockX), div_up(size_t(map_h), kKeyBlockY));
  // The best position alone (no map, no choice of several): picked on the device, 24 bytes back.
  const bool top1 = m.asked.top_k == 1 && !m.asked.want_map && !m.asked.selection.active();
  PARVIS_TRY(m.d_norm_best.alloc(1));
  DeviceOut* best = m.d_norm_best.get();
  if (top1) {
    PARVIS_TRY(m.d_norm_cand.alloc(kNormedCandidateCap));
    PARVIS_TRY(m.d_norm_exact.alloc(kNormedCandidateCap));
    PARVIS_TRY(m.d_norm_count.alloc(1));
    PARVIS_TRY(m.h_norm_best.alloc(1));
    normed_reset<<<1, 1, 0, s>>>(best);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemsetAsync(m.d_norm_count.get(), 0, sizeof(unsigned), s));
  }
  normed_bounds<<<kg, kb, 0, s>>>(m.d_norm_ci.get(), m.d_norm_cq.get(), ld, m.d_norm_approx.get(), e,
                                  wobble_width, m.w, map_w, map_h, c, m.d_norm_lo.get(), m.d_norm_hi.get(),
                                  top1 ? best : nullptr);
  CUDA_CHECK_LAUNCH();
  if (top1) {
    normed_collect<<<kg, kb, 0, s>>>(m.d_norm_lo.get(), map_w, map_h, best, m.d_norm_cand.get(),
                                     m.d_norm_count.get(), kNormedCandidateCap);
    CUDA_CHECK_LAUNCH();
    PARVIS_TRY(enqueue_exact_ssd(m, m.d_norm_cand.get(), kNormedCandidateCap, m.d_norm_count.get(),
                                 m.d_norm_exact.get()));
    normed_pick<<<1, 1024, 0, s>>>(m.d_norm_cand.get(), m.d_norm_count.get(), kNormedCandidateCap,
                                   m.d_norm_exact.get(), m.d_norm_ci.get(), m.d_norm_cq.get(), ld, m.w,
                                   map_w, c, best);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(m.ev[2], s));
    CUDA_CHECK(cudaMemcpyAsync(m.h_norm_best.get(), best, sizeof(DeviceOut), cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaEventRecord(m.ev[3], s));
    PARVIS_TRY(elapsed(m, &res->timings));  // waits for the copy
    const DeviceOut o = *m.h_norm_best.get();
    if (o.best_score <= kNormedCandidateCap) {
      if (o.count == ~0u) return Status::runtime("internal: the normed selection found no position");
      res->best = {Position{int(o.count % unsigned(map_w)), int(o.count / unsigned(map_w)), o.min_key}};
      res->method_used = Method::FFT;
      char note[200];
      std::snprintf(note, sizeof note,
                    ": ΣI·T from cuFFT's SSD map (each within %.3g), window sums, the rank ends and the "
                    "best on the device, its %llu candidates re-scored exactly (",
                    e, static_cast<unsigned long long>(o.best_score));
      res->explain = std::string(metric_name(m.asked.metric)) + note + res->explain + ")";
      return Status::Ok();
    }
    // More candidates than the list holds (flat images): the host's settle below.
  }
  DeviceBuffer<int2> d_cand;
  DeviceBuffer<unsigned long long> d_exact;
  DeviceBuffer<uint64_t> d_keys;
  std::vector<int2> cand;
  std::vector<uint64_t> keys;
  Status failed = Status::Ok();
  auto rescore = [&](std::vector<Position>* ps) {
    const unsigned count = unsigned(ps->size());
    if (!failed.ok() || count == 0) return;
    failed = [&]() -> Status {
      cand.resize(count);
      keys.resize(count);
      for (unsigned i = 0; i < count; ++i) cand[i] = make_int2((*ps)[i].x, (*ps)[i].y);
      PARVIS_TRY(d_cand.alloc(count));
      PARVIS_TRY(d_exact.alloc(count));
      PARVIS_TRY(d_keys.alloc(count));
      CUDA_CHECK(cudaMemcpyAsync(d_cand.get(), cand.data(), count * sizeof(int2), cudaMemcpyHostToDevice, s));
      PARVIS_TRY(enqueue_exact_ssd(m, d_cand.get(), count, nullptr, d_exact.get()));
      candidate_keys<<<div_up(size_t(count), 256), 256, 0, s>>>(d_cand.get(), count, d_exact.get(),
                                                              m.d_norm_ci.get(), m.d_norm_cq.get(), ld, m.w, c,
                                                              d_keys.get());
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaMemcpyAsync(keys.data(), d_keys.get(), count * sizeof(uint64_t), cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
      for (unsigned i = 0; i < count; ++i) (*ps)[i].score = keys[i];
      return Status::Ok();
    }();
  };
  // --all without --map: only the positions whose lower end passes the threshold come back, with
  // both ends (opt_choice.cu), unless there are more than its list holds.
  if (!top1 && device_choice(m.asked)) {
    bool overflow = false;
    PARVIS_TRY(enqueue_collect_ends(m, m.d_norm_lo.get(), m.d_norm_hi.get(), m.asked.selection));
    PARVIS_TRY(finish_ends_choice(m, m.asked, rescore, res, &overflow));
    PARVIS_TRY(failed);
    if (!overflow) {
      res->method_used = Method::FFT;
      res->explain = std::string(metric_name(m.asked.metric)) +
                     ": ΣI·T from cuFFT's SSD map, window sums and the rank ends on the device (" +
                     res->explain + ")";
      return Status::Ok();
    }
  }
  std::vector<uint64_t> lo, hi;
  PARVIS_TRY(alloc_host(&lo, n));
  PARVIS_TRY(alloc_host(&hi, n));
  CUDA_CHECK(cudaEventRecord(m.ev[2], s));
  CUDA_CHECK(cudaMemcpyAsync(lo.data(), m.d_norm_lo.get(), n * sizeof(uint64_t), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaMemcpyAsync(hi.data(), m.d_norm_hi.get(), n * sizeof(uint64_t), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaEventRecord(m.ev[3], s));
  PARVIS_TRY(elapsed(m, &res->timings));  // waits for the copies

  const double t0 = now_ms();
  Settled settled;
  settle(lo.data(), hi.data(), map_w, map_h, m.asked.top_k, m.asked.selection, m.asked.want_map, rescore,
         &settled);
  PARVIS_TRY(failed);
  res->best = std::move(settled.best);
  res->chosen = m.asked.selection.active();  // settle's answer is the choice
  if (m.asked.want_map) {  // exact wherever the answer could lie; elsewhere the rank's worse end
    PARVIS_TRY(alloc_host(&res->map, n));
    for (size_t i = 0; i < n; ++i) res->map[i] = ncc::score_of_key(hi[i]);
  }
  res->timings.compute_ms += now_ms() - t0;
  res->method_used = Method::FFT;
  char note[200];
  std::snprintf(note, sizeof note,
                ": ΣI·T from cuFFT's SSD map (each within %.3g), window sums and the rank ends on the "
                "device, the %zu positions the answer could hold re-scored exactly (select.hpp: settle) (",
                e, settled.rescored);
  res->explain = std::string(metric_name(m.asked.metric)) + note + res->explain + ")";
  return Status::Ok();
}

// What run_normed's keys leave on the host: the best (top 1), the doubles (--map) or every key,
// then res->best from them.
Status keys_back(Matcher& m, bool top1, bool want_map, const double* dmap, const uint64_t* keys,
                 const DeviceOut* best, Result* res) {
  const int map_w = m.map_w(), map_h = m.map_h();
  const size_t n = size_t(map_w) * map_h;
  cudaStream_t s = m.stream;
  CUDA_CHECK(cudaEventRecord(m.ev[2], s));
  std::vector<uint64_t> host_keys;
  if (top1) {
    PARVIS_TRY(m.h_norm_best.alloc(1));
    CUDA_CHECK(cudaMemcpyAsync(m.h_norm_best.get(), best, sizeof(DeviceOut), cudaMemcpyDeviceToHost, s));
  } else if (want_map) {
    PARVIS_TRY(alloc_host(&res->map, n));
    CUDA_CHECK(cudaMemcpyAsync(res->map.data(), dmap, n * sizeof(double), cudaMemcpyDeviceToHost, s));
  } else {
    PARVIS_TRY(alloc_host(&host_keys, n));
    CUDA_CHECK(cudaMemcpyAsync(host_keys.data(), keys, n * sizeof(uint64_t), cudaMemcpyDeviceToHost, s));
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
    best_from_ranks(host_keys.data(), map_w, map_h, m.asked, res);
  }
  res->timings.compute_ms += now_ms() - t0;
  return Status::Ok();
}

}  // namespace

bool normed_device_fits(const Matcher& m) {
  const size_t map_h = size_t(m.map_h());
  return size_t(m.map_w()) * map_h <= 0xffffffffull &&
         div_up(map_h, kColRows) <= 65535u && div_up(map_h, kKeyBlockY) <= 65535u;
}

Status run_normed(Matcher& m, const Image& src, NormedMap from, Result* res) {
  const bool ntt = from == NormedMap::Ntt;
  const int map_w = m.map_w(), map_h = m.map_h(), W = m.W;
  const size_t n = size_t(map_w) * map_h;
  if (n > 0xffffffffull) return Status::bad_input("normed match: more than 2^32 positions");
  const int top_k = m.asked.top_k;
  const bool want_map = m.asked.want_map, top1 = top_k == 1 && !map_needed(m.asked);
  const int ld = (W + 1 + 3) / 4 * 4;  // W1 writes 4 columns at a time; P needs columns 0..W
  cudaStream_t s = m.stream;

  // Buffers, per source size (DeviceBuffer::alloc keeps an allocation of the same size).
  PARVIS_TRY(m.d_norm_ci.alloc(size_t(ld) * map_h));
  PARVIS_TRY(m.d_norm_cq.alloc(size_t(ld) * map_h));
  if (from == NormedMap::Fft) return normed_from_fft(m, src, ld, res);
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
  PARVIS_TRY(enqueue_window_prefix(m, ld));
  const normed::Consts c = consts_of(m);
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

  // --all without --map: only the matching keys come back (opt_choice.cu), unless there are more
  // than its list holds.
  bool listed = false;
  if (!top1 && !want_map && device_choice(m.asked)) {
    bool overflow = false;
    PARVIS_TRY(enqueue_collect_keys(m, keys, m.asked.selection));
    PARVIS_TRY(finish_device_choice(m, m.asked, -1.0, res, &overflow));
    listed = !overflow;
  }
  if (!listed) PARVIS_TRY(keys_back(m, top1, want_map, dmap, keys, best, res));
  res->method_used = ntt ? Method::FFT : Method::Direct;
  res->explain = std::string(metric_name(m.asked.metric)) + ": ΣI·T from " +
                 (ntt ? "the exact NTT's SSD map" : "an exact SSD map") +
                 ", window sums, the normed expression and the best position on the device (" +
                 res->explain + ")";
  return Status::Ok();
}

}  // namespace parvis::match::opt
