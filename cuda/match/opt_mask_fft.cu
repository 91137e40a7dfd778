// cuda-opt template matching: --mask with the FFT method (issue 14; DESIGN.md "Masks") — the
// masked FFT / NTT. The matcher of a masked template holds T & b (b = 0xFF where the mask
// counts), so the unmasked pipelines correlate with it unchanged; the per-position arithmetic
// is opt_mask_fft.cuh's (__host__ __device__, emulated on the host by tests/cuda/mask_fft_emulate.cu):
//   M0. once per matcher: the mask's row runs (counted, then ignored; mask::runs_of) and the
//       packed template of the masked direct kernel (cuda_mask::pack, for the re-scoring);
//   M1. the pipeline on T & b: the NTT's exact SSD' map (opt_ntt.cu, 32-bit words), or cuFFT's
//       approximate one (opt_fft.cu, doubles, |error| <= E); a batch's source transform is
//       shared as unmasked (it does not depend on the template);
//   M2. mask_row_prefix: one block per source row, the row prefix sums of I and I² (32-bit
//       pairs, modulo 2^32: a run's difference is exact);
//   M3. mask_scores, one thread per position (32 x 8 blocks, x along the warp: each run's loads
//       are coalesced, and every thread of a warp reads the same run): the window sums over the
//       R runs (the counted ones, then the ignored ones or the h whole rows, whichever are
//       fewer), then
//         NTT:   the exact score word (the masked direct kernel's format: the SSD or the
//                normed double's bits) -> cuda_direct::download_and_rank, as the masked direct
//                kernel ends: every option, maps exact;
//         cuFFT: rank keys bounding the exact rank (mask_fft::rank_bounds); on the host the K-th
//                smallest pessimistic key, and every position whose optimistic key is at most
//                that is re-scored exactly:
//   M4. mask_rescore, one block per candidate: the masked direct kernel's body
//       (cuda_mask::window) over the template rows, one row a thread, summed -> the exact
//       masked SSD, thread 0 the run sums and the score word; the K best on the host.
// cuFFT with a map asked for takes the masked direct kernel (cuFFT's map is approximate).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "match/mask.hpp"
#include "match/mask_kernels.cuh"
#include "match/opt_mask_fft.cuh"
#include "match/opt_matcher.cuh"

namespace parvis::match::opt {

namespace {

using mask_fft::Consts;
using mask_fft::Sums;

constexpr int kPrefixThreads = 256;            // M2: one block per source row
constexpr int kScoreBlockX = 32, kScoreBlockY = 8;  // M3
// Template rows of at most this many pixels keep a run's sum of squares below 2^32.
constexpr int kMaxRunWidth = 66051;

// ---- M2 ----------------------------------------------------------------------------------------
__global__ __launch_bounds__(kPrefixThreads) void mask_row_prefix(const uint8_t* src, size_t pitch,
                                                                  int W, uint2* pre, size_t ld) {
  __shared__ cuda::BlockScratch<uint32_t> scratch;
  const uint8_t* row = src + size_t(blockIdx.x) * pitch;
  uint2* out = pre + size_t(blockIdx.x) * ld;
  uint32_t carry_i = 0, carry_q = 0;  // modulo 2^32, as mask_fft::prefix_row
  for (int x0 = 0; x0 <= W; x0 += kPrefixThreads) {
    const int x = x0 + threadIdx.x;
    const uint32_t p = x < W ? row[x] : 0u;
    uint32_t ti = 0, tq = 0;
    const uint32_t ei = cuda::block_exclusive_sum(p, scratch, &ti);
    const uint32_t eq = cuda::block_exclusive_sum(p * p, scratch, &tq);
    if (x <= W) out[x] = make_uint2(carry_i + ei, carry_q + eq);
    carry_i += ti;
    carry_q += tq;
  }
}

// ---- M3 ----------------------------------------------------------------------------------------
// ssd32 given (NTT): a[idx] = the exact score word. Else (cuFFT): a, b = the optimistic and
// pessimistic rank keys from the approximate SSD'. The grid's rows stride down the map
// (gridDim.y <= 65535).
__global__ __launch_bounds__(kScoreBlockX* kScoreBlockY) void mask_scores(
    const uint32_t* ssd32, const double* approx, double e, const uint2* pre, size_t ld,
    const mask::Run* runs, int counted, int total, bool whole_rows, int map_w, int map_h,
    Consts c, uint64_t* a, uint64_t* b) {
  const int x = blockIdx.x * kScoreBlockX + threadIdx.x;
  if (x >= map_w) return;
  for (int64_t y = int64_t(blockIdx.y) * kScoreBlockY + threadIdx.y; y < map_h;
       y += int64_t(gridDim.y) * kScoreBlockY) {
    const size_t idx = size_t(y) * map_w + x;
    const Sums s = mask_fft::run_sums(pre, ld, runs, counted, total, whole_rows, x, int(y));
    if (ssd32)
      a[idx] = mask_fft::exact_word(ssd32[idx], s, c);
    else
      mask_fft::rank_bounds(approx[idx], e, s, c, a + idx, b + idx);
  }
}

// ---- M4 ----------------------------------------------------------------------------------------
__global__ __launch_bounds__(kRescoreThreads) void mask_rescore(
    const uint8_t* src, size_t pitch, const uint16_t* tm, int w, int h, const int2* cand,
    int ncand, const uint2* pre, size_t ld, const mask::Run* runs, int counted, int total,
    bool whole_rows, Consts c, uint64_t* words) {
  __shared__ BlockScratch<unsigned long long> scratch;
  for (int i = blockIdx.x; i < ncand; i += gridDim.x) {
    const int2 p = cand[i];
    unsigned long long part = 0;  // the masked direct kernel's body, one template row a thread
    for (int j = threadIdx.x; j < h; j += blockDim.x)
      part += cuda_mask::window(src + size_t(j) * pitch, int(pitch), tm + size_t(j) * w, w, 1,
                                p.x, p.y, 0, c.n, c.st, c.stt);
    const unsigned long long ssd = cuda::block_sum(part, scratch);
    if (threadIdx.x == 0)
      words[i] = mask_fft::word_from_masked_ssd(
          ssd, mask_fft::run_sums(pre, ld, runs, counted, total, whole_rows, p.x, p.y), c);
  }
}

dim3 score_grid(int map_w, int map_h) {
  return dim3(unsigned(div_up(size_t(map_w), kScoreBlockX)),
              unsigned(std::min<size_t>(div_up(size_t(map_h), kScoreBlockY), 65535)));
}

// M0, once per matcher: the runs and the packed template on the device.
Status upload_mask(Matcher& m) {
  if (m.d_mask_runs.get()) return Status::Ok();
  const std::vector<uint16_t> tm = cuda_mask::pack(m.tpl, m.asked.mask);
  PARVIS_TRY(m.d_mask_runs.alloc(m.mask_runs.size()));
  PARVIS_TRY(m.d_mask_tm.alloc(tm.size()));
  CUDA_CHECK(cudaMemcpyAsync(m.d_mask_runs.get(), m.mask_runs.data(),
                             m.mask_runs.size() * sizeof(mask::Run), cudaMemcpyHostToDevice,
                             m.stream));
  CUDA_CHECK(cudaMemcpyAsync(m.d_mask_tm.get(), tm.data(), tm.size() * sizeof(uint16_t),
                             cudaMemcpyHostToDevice, m.stream));
  CUDA_CHECK(cudaStreamSynchronize(m.stream));  // tm goes
  return Status::Ok();
}

// cuFFT: the K best from the rank bounds (host), re-scored exactly on the device (M4).
Status rescore_best(Matcher& m, const std::vector<uint64_t>& opt, const std::vector<uint64_t>& pess,
                    size_t ld, const Consts& c, Result* res, size_t* rescored) {
  const int map_w = m.map_w();
  const size_t n = opt.size(), k = std::min<size_t>(size_t(std::max(1, m.asked.top_k)), n);
  std::vector<uint64_t> part(pess);
  std::nth_element(part.begin(), part.begin() + (k - 1), part.end());
  const uint64_t threshold = part[k - 1];
  std::vector<int2> cand;
  for (size_t i = 0; i < n; ++i)
    if (opt[i] <= threshold) cand.push_back(make_int2(int(i % size_t(map_w)), int(i / size_t(map_w))));
  *rescored = cand.size();
  if (cand.empty()) return Status::runtime("internal: no position within the masked FFT's bounds");
  DeviceBuffer<int2> d_cand;
  DeviceBuffer<uint64_t> d_words;
  PARVIS_TRY(d_cand.alloc(cand.size()));
  PARVIS_TRY(d_words.alloc(cand.size()));
  std::vector<uint64_t> words(cand.size());
  cudaStream_t s = m.stream;
  CUDA_CHECK(cudaMemcpyAsync(d_cand.get(), cand.data(), cand.size() * sizeof(int2),
                             cudaMemcpyHostToDevice, s));
  const unsigned grid = unsigned(std::min<size_t>(cand.size(), size_t(m.num_sms) * 16));
  mask_rescore<<<grid, kRescoreThreads, 0, s>>>(
      m.d_src.get(), m.pitch, m.d_mask_tm.get(), m.w, m.h, d_cand.get(), int(cand.size()),
      m.d_mask_pre.get(), ld, m.d_mask_runs.get(), m.mask_counted, int(m.mask_runs.size()),
      m.mask_whole_rows, c, d_words.get());
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpyAsync(words.data(), d_words.get(), words.size() * sizeof(uint64_t),
                             cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  TopK top(m.asked.top_k);
  for (size_t i = 0; i < cand.size(); ++i)
    top.offer(cand[i].x, cand[i].y, cuda_mask::rank_of_word(c.kind >= 2, words[i]));
  res->best = top.sorted();
  return Status::Ok();
}

}  // namespace

bool mask_fft_applies(const Matcher& m, std::string* why_not) {
  std::string no_ntt;
  if (m.asked.metric == Metric::SAD) {
    *why_not = "SAD has no FFT form";
  } else if (m.w > kMaxRunWidth) {
    *why_not = "template rows wider than 66051 pixels (32-bit run sums)";
  } else if (map_needed(m.asked) && !ntt_eligible(m, &no_ntt)) {
    *why_not = "the run reads a map (--map, or a choice of positions) and the NTT cannot take T & b (" +
               no_ntt + "), whose map would be approximate";
  } else {
    return true;
  }
  return false;
}

Status run_mask_fft(Matcher& m, const Image& src, Result* res) {
  const int W = m.W, H = m.H, map_w = m.map_w(), map_h = m.map_h();
  const size_t n = size_t(map_w) * map_h, ld = size_t(W) + 1;
  cudaStream_t s = m.stream;
  std::string no_ntt;
  const bool ntt = ntt_eligible(m, &no_ntt);
  const TemplateSums ts = mask::template_sums(m.tpl, m.asked.mask);
  const Consts c{ts.n, ts.st, ts.stt, cuda_mask::kind_of(m.asked.metric)};
  const int total = int(m.mask_runs.size());
  PARVIS_TRY(upload_mask(m));
  PARVIS_TRY(m.d_mask_pre.alloc(ld * H));  // these keep their memory while the size holds
  PARVIS_TRY(m.d_mask_a.alloc(n));
  if (!ntt) PARVIS_TRY(m.d_mask_b.alloc(n));

  PARVIS_TRY(timed_upload(m, src, true));
  mask_row_prefix<<<H, kPrefixThreads, 0, s>>>(m.d_src.get(), m.pitch, W, m.d_mask_pre.get(), ld);
  CUDA_CHECK_LAUNCH();
  char note[384];
  double e = 0;
  if (ntt) {
    PARVIS_TRY(m.d_mask_ssd.alloc(n));
    PARVIS_TRY(enqueue_ntt_map(m, m.d_mask_ssd.get()));
    mask_scores<<<score_grid(map_w, map_h), dim3(kScoreBlockX, kScoreBlockY), 0, s>>>(
        m.d_mask_ssd.get(), nullptr, 0.0, m.d_mask_pre.get(), ld, m.d_mask_runs.get(), m.mask_counted,
        total, m.mask_whole_rows, map_w, map_h, c, m.d_mask_a.get(), nullptr);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(m.ev[2], s));
    CUDA_CHECK(cudaEventRecord(m.ev[3], s));
    PARVIS_TRY(elapsed(m, &res->timings));  // waits: d_mask_a is written
    cuda::EventTimer timer;
    PARVIS_TRY(cuda_direct::download_and_rank(m.d_mask_a.get(), map_w, map_h, c.kind >= 2, m.asked,
                                               &timer, res));
    std::snprintf(note, sizeof note, "ΣI·T from the exact NTT of T & b (size %dx%d)",
                  int(m.row_plan.n), int(m.col_plan.n));
  } else {
    PARVIS_TRY(m.d_mask_approx.alloc(n));
    PARVIS_TRY(enqueue_fft_map(m, m.d_mask_approx.get(), &e));
    mask_scores<<<score_grid(map_w, map_h), dim3(kScoreBlockX, kScoreBlockY), 0, s>>>(
        nullptr, m.d_mask_approx.get(), e, m.d_mask_pre.get(), ld, m.d_mask_runs.get(), m.mask_counted,
        total, m.mask_whole_rows, map_w, map_h, c, m.d_mask_a.get(), m.d_mask_b.get());
    CUDA_CHECK_LAUNCH();
    std::vector<uint64_t> opt, pess;
    PARVIS_TRY(alloc_host(&opt, n));
    PARVIS_TRY(alloc_host(&pess, n));
    CUDA_CHECK(cudaEventRecord(m.ev[2], s));
    CUDA_CHECK(cudaMemcpyAsync(opt.data(), m.d_mask_a.get(), n * 8, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaMemcpyAsync(pess.data(), m.d_mask_b.get(), n * 8, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaEventRecord(m.ev[3], s));
    PARVIS_TRY(elapsed(m, &res->timings));
    const double t0 = now_ms();
    size_t rescored = 0;
    PARVIS_TRY(rescore_best(m, opt, pess, ld, c, res, &rescored));
    res->timings.compute_ms += now_ms() - t0;
    std::snprintf(note, sizeof note,
                  "ΣI·T from cuFFT in double on T & b (size %dx%d, bound %.3g; no NTT: %s), %zu "
                  "positions re-scored exactly",
                  int(m.P), int(m.Q), e, no_ntt.c_str(), rescored);
  }
  res->method_used = Method::FFT;
  res->explain.append("; --mask: ").append(note);
  res->explain += ", the masked window sums over the mask's " + std::to_string(m.mask_counted) +
                  " counted row runs and " + std::to_string(total - m.mask_counted) +
                  (m.mask_whole_rows ? " whole rows" : " ignored ones") + " (opt_mask_fft.cu)";
  return Status::Ok();
}

}  // namespace parvis::match::opt
