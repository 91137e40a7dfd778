// cuda-opt template matching: the direct method — the dp4a kernel and the generic exact map.
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
#include <algorithm>

#include "match/opt_matcher.cuh"

namespace parvis::match::opt {

namespace {

constexpr int kDirectBlockX = 32, kDirectBlockY = 4;  // direct_dp4a: 128 threads

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

}  // namespace

// ---- direct_dp4a launch --------------------------------------------------------------------------
// R, the output rows per thread: 8 reuses each source row for more outputs (fewer instructions
// per position), 4 needs ~60 registers instead of ~96, so 8 blocks fit on an SM instead of 5.
// R = 4 wins for short templates whose grid fits in two waves, and for grids that would fill
// less than half the GPU at R = 8; otherwise R = 8. R = 2 (twice the threads of R = 4) was
// slower than R = 4 on short templates (docs/decisions/004). match.direct_rows=4|8 forces one.
int direct_rows(const Matcher& m) {
  if (m.tuning.direct_rows) return m.tuning.direct_rows;
  const double blocks4 = double(div_up(m.map_w(), 4 * kDirectBlockX)) *
                         div_up(m.map_h(), kDirectBlockY * 4);
  const double threads8 = double(div_up(m.map_w(), 4)) * div_up(m.map_h(), 8);
  if (m.h <= 32 && blocks4 <= 2.0 * m.num_sms * 8) return 4;
  if (threads8 < 0.5 * m.num_sms * 640) return 4;
  return 8;
}

namespace {

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

}  // namespace

// The exact map alone, for the normed metrics (opt_normed.cu).
Status enqueue_ssd_map(Matcher& m, uint32_t* map32, uint64_t* map64) {
  if (m.direct_fast) return enqueue_direct(m, nullptr, map32);
  const size_t n = size_t(m.map_w()) * m.map_h();
  const unsigned grid = unsigned(std::min<size_t>(n, size_t(m.num_sms) * 16));
  exact_map<<<grid, kRescoreThreads, 0, m.stream>>>(m.d_src.get(), m.pitch, m.d_tpl.get(), m.w,
                                                    m.h, false, m.map_w(), n, map64);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
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
  best_from_ranks(scores.data(), m.map_w(), m.map_h(), m.params, res);
  if (m.params.want_map) scores_to_map(scores.data(), m.map_w(), m.map_h(), &res->map);
  res->timings.compute_ms += now_ms() - t0;
  res->method_used = Method::Direct;
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
  if (m.params.top_k == 1 && !map_needed(m.params)) {
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

}  // namespace parvis::match::opt
