// cuda-opt template matching: the FFT method exactly — NTT modulo p (match/ntt.hpp).
//
// FFT method (SSD only; seed 000's pipeline, optimized):  SSD(x,y) = S2(x,y) - 2 C(x,y) + T2.
// Two implementations of C, picked per template and size (ntt_eligible()):
//
// Exact NTT (match/ntt.hpp) when every correlation value 255 sum(T) stays below the prime
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
#include <cstdio>
#include <string>
#include <vector>

#include "match/opt_matcher.cuh"
#include "match/opt_source.cuh"

namespace parvis::match::opt {

namespace {

constexpr int kNttThreads = 256;                   // the NTT row kernels: one row per block
constexpr int kNttColThreads = 1024;              // ntt_columns: 2 blocks of 8 columns per SM
constexpr int kVsumThreads = 64, kVsumRows = 32;   // window_col_sums

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
// in shared memory, stored as P words (digit-reversed order).
__global__ __launch_bounds__(kNttThreads) void ntt_rows_forward(const uint8_t* src, size_t pitch,
                                                                int W, ntt::Plan plan,
                                                                uint32_t* out) {
  extern __shared__ uint32_t s_row[];
  const int y = blockIdx.x, P = plan.n;
  const uint8_t* srow = src + size_t(y) * pitch;
  for (int x = threadIdx.x; x < P; x += kNttThreads) s_row[x] = x < W ? srow[x] : 0u;
  ntt::ntt_shared<false>(s_row, 1, plan, threadIdx.x, kNttThreads);
  uint32_t* orow = out + size_t(y) * P;
  for (int x = threadIdx.x; x < P; x += kNttThreads) orow[x] = s_row[x];
}

// N3. ntt_columns: 2^cb_log2 adjacent columns per block (their words are contiguous in every
// row, so loads are 32-byte segments), rows_in rows of `in` read (the rest are zero), forward
// transform down each column in shared memory; then either
//   tpl_spec == nullptr (the template, once): times `scale` (= 2^32 / (P Q) mod p: Montgomery
//                        form with the inverse transform's 1/(P Q) folded in) into spec_out;
//   otherwise (the source): times the template's spectrum, inverse transform down the column,
//                        rows < rows_out written to `data` (in place where in == data; a batch's
//                        shared row transforms are only read: opt_source.cuh). The first kernel
//                        of every graph shape, so it also resets the run's record `rec`.
__global__ __launch_bounds__(kNttColThreads) void ntt_columns(const uint32_t* in, uint32_t* data,
                                                           int P, int rows_in, int rows_out,
                                                           ntt::Plan plan, int cb_log2,
                                                           const uint32_t* tpl_spec,
                                                           ntt::Const scale, uint32_t* spec_out,
                                                           DeviceOut* rec) {
  extern __shared__ uint32_t s_cols[];
  const int Q = plan.n, cb = 1 << cb_log2, f0 = blockIdx.x * cb;
  const int n = Q << cb_log2;
  if (blockIdx.x == 0 && threadIdx.x == 0 && rec) rec->min_key = ~0ull, rec->done = 0;
  for (int i = threadIdx.x; i < n; i += kNttColThreads) {
    const int g = i >> cb_log2, col = f0 + (i & (cb - 1));
    s_cols[i] = (g < rows_in && col < P) ? in[size_t(g) * P + col] : 0u;
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

// ---- the NTT pipeline: eligibility, per-size setup, steps N1-N4 ---------------------------------------
// Shared memory of the NTT kernels, in bytes (dynamic part; the static scratch is < 1 KiB).
size_t ntt_row_smem(int P) { return size_t(P) * 4; }
size_t ntt_ssd_smem(int P, int W) { return (size_t(P) + W) * 4; }
size_t ntt_col_smem(int Q, int cb_log2) { return size_t(Q) * 4 << cb_log2; }
int vsum_ld(int W) { return (W + 31) / 32 * 32; }  // 128-byte rows

}  // namespace

// The NTT method is exact when every correlation value 255 sum(T) stays below p, the SSD fits
// 32 bits and the rows and a column fit in shared memory. Says why not otherwise.
bool ntt_eligible(const Matcher& m, std::string* why_not) {
  const int P = ntt::good_length(m.W), Q = ntt::good_length(m.H);
  const size_t limit = size_t(m.smem_optin) - 1024;
  if (!m.tuning.ntt) {
    *why_not = "match.ntt=0";
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

namespace {

// Asks for more than the default 48 KiB of dynamic shared memory where a kernel needs it.
template <typename Kernel>
Status allow_smem(Kernel kernel, size_t bytes) {
  if (bytes > 48 * 1024)
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    int(bytes)));
  return Status::Ok();
}

// On `stream`, where the kernels that read the table run (cuda/common.cuh: why not cudaMemcpy).
Status upload_plan(int n, ntt::Plan* plan, DeviceBuffer<ntt::Const>* tw, cudaStream_t stream) {
  std::vector<ntt::Const> table(static_cast<size_t>(n));
  *plan = ntt::make_plan(n, table.data());
  PARVIS_TRY(tw->alloc(table.size()));
  CUDA_CHECK(cudaMemcpyAsync(tw->get(), table.data(), table.size() * sizeof(ntt::Const),
                             cudaMemcpyHostToDevice, stream));
  plan->tw = tw->get();
  return Status::Ok();
}

// Per source size: plans, buffers, and the template's spectrum (once): the template flipped
// (T'(y, x) = T(-y mod Q, -x mod P), so that the cyclic convolution with T' is the correlation
// with T), transformed by the same kernels, scaled into Montgomery form with 1/(P Q) folded in.
Status setup_ntt(Matcher& m) {
  if (m.ntt_ready) return Status::Ok();
  const int P = ntt::good_length(m.W), Q = ntt::good_length(m.H);
  PARVIS_TRY(upload_plan(P, &m.row_plan, &m.d_row_tw, m.stream));
  PARVIS_TRY(upload_plan(Q, &m.col_plan, &m.d_col_tw, m.stream));
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
  CUDA_CHECK(cudaMemcpyAsync(d_flipped.get(), flipped.data(), flipped.size(),
                             cudaMemcpyHostToDevice, m.stream));
  const ntt::Const scale = ntt::spectrum_scale(P, Q);
  ntt_rows_forward<<<Q, kNttThreads, ntt_row_smem(P), m.stream>>>(
      d_flipped.get(), size_t(P), P, m.row_plan, m.d_ntt_rows.get());
  CUDA_CHECK_LAUNCH();
  ntt_columns<<<div_up(P, size_t(1) << m.cb_log2), kNttColThreads, ntt_col_smem(Q, m.cb_log2),
                m.stream>>>(m.d_ntt_rows.get(), m.d_ntt_rows.get(), P, Q, Q, m.col_plan,
                            m.cb_log2, nullptr, scale, m.d_ntt_spec.get(), nullptr);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(m.stream));
  m.ntt_ready = true;
  return Status::Ok();
}

// N1-N4 on the uploaded source; the record's min_key ends as the best (score << 32 | index).
// N1 (memory-bound) runs on a side branch beside N2-N3 (issue-bound) and joins before N4; with
// stage times on, everything runs in one stream so that the marks time one kernel each.
// N2 runs unless a batch's matcher reads the source's row transforms from the batch's shared
// slot (m.src_bind, opt_source.cuh; a maker writes them there); N3 reads them either way.
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
  const SourceBinding& bind = m.src_bind;
  uint32_t* rows = bind.role == SourceRole::Own ? m.d_ntt_rows.get() : bind.slot->rows.get();
  if (bind.role != SourceRole::Read) {
    ntt_rows_forward<<<H, kNttThreads, ntt_row_smem(P), s>>>(m.d_src.get(), m.pitch, W,
                                                             m.row_plan, rows);
    CUDA_CHECK_LAUNCH();
    PARVIS_TRY(st.mark(kStageCrossCorrelation, "ntt_rows_forward"));
  }
  ntt_columns<<<div_up(P, size_t(1) << m.cb_log2), kNttColThreads, ntt_col_smem(Q, m.cb_log2), s>>>(
      rows, m.d_ntt_rows.get(), P, H, map_h, m.col_plan, m.cb_log2, m.d_ntt_spec.get(),
      ntt::Const{}, nullptr, m.d_out.get());
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

// Before each enqueue, after the upload (opt_source.cuh): the batch's slot of the source's row
// transforms at this padded size, or the matcher's own buffer.
Status bind_ntt_source(Matcher& m) {
  SourceTransformSizes sizes;
  sizes.rows = size_t(m.row_plan.n) * m.H;
  return bind_source_transform(m, kNttRows, m.row_plan.n, m.col_plan.n, sizes);
}

}  // namespace

// ---- NTT path (the exact FFT method) -------------------------------------------------------------
Status enqueue_ntt_map(Matcher& m, uint32_t* map) {
  m.src_bind.counted = false;  // this run's made / reused not counted yet
  PARVIS_TRY(setup_ntt(m));
  PARVIS_TRY(bind_ntt_source(m));
  cuda::StageTimer untimed(false);
  PARVIS_TRY(enqueue_ntt(m, map, untimed));
  return source_transform_made(m);
}

Status run_ntt(Matcher& m, const Image& src, Result* res) {
  m.src_bind.counted = false;  // this run's made / reused not counted yet
  PARVIS_TRY(setup_ntt(m));
  char note[96];  // appended without temporaries: a video's frames allocate nothing
  std::snprintf(note, sizeof note, "; exact NTT modulo p = 15*2^27+1, size %dx%d", int(m.row_plan.n),
                int(m.col_plan.n));
  res->explain.append(note);
  const bool fused = m.params.top_k == 1 && !map_needed(m.params);
  if (fused)
    PARVIS_TRY(time_stages(m, src, res, [&](cuda::StageTimer& st) {
      PARVIS_TRY(bind_ntt_source(m));
      PARVIS_TRY(enqueue_ntt(m, nullptr, st));
      return source_transform_made(m);
    }));
  PARVIS_TRY(timed_upload(m, src));
  cuda::StageTimer untimed(false);
  PARVIS_TRY(bind_ntt_source(m));
  if (fused) {
    // The graph of this binding: a reader's has no N2 nodes (opt_source.cuh).
    PARVIS_TRY(rebind_graph(m, &m.graph_ntt, &m.graph_ntt_bound));
    PARVIS_TRY(finish_fused_key(m, &m.graph_ntt, res,
                                [&] { return enqueue_ntt(m, nullptr, untimed); }));
  } else {
    PARVIS_TRY(
        finish_u32_map(m, res, [&](uint32_t* map) { return enqueue_ntt(m, map, untimed); }));
  }
  PARVIS_TRY(source_transform_made(m));
  res->method_used = Method::FFT;
  return Status::Ok();
}

}  // namespace parvis::match::opt
