// cuda-opt template matching: what its pipeline files share — the prepared matcher (template
// data once; per source size the buffers, plans, spectra and graphs), the fused run's record
// and its last-block publication, the exact window score of one block, and the host plumbing
// every pipeline uses (graph capture and replay, timed upload, the map round trip, the fused
// result). Included by the files of the cuda-opt version only:
//   opt.cu         the matcher: create, per-size setup, upload, `auto`'s cost model, run
//   opt_ntt.cu     the exact NTT pipeline (FFT method, small and dark templates)
//   opt_fft.cu     the cuFFT pipeline in double + exact re-scoring (FFT method otherwise)
//   opt_direct.cu  the dp4a direct kernel and the generic exact map (direct method)
//   opt_mask_fft.cu  --mask with the FFT method (the NTT / cuFFT map of T & b, run sums)
//   opt_choice.cu  --all chosen on the device: only the matches come back
#pragma once
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "common.cuh"
#include "match/fft_common.cuh"
#include "match/mask.hpp"
#include "match/match_common.hpp"
#include "match/select.hpp"
#include "match/ntt.hpp"
#include "match/tuning.hpp"
#include "scan.cuh"
#include "upload/upload.hpp"

namespace parvis::match {

using cuda::BlockScratch;
using cuda::DeviceBuffer;
using cuda::div_up;
using cuda::PinnedBuffer;

namespace opt {

constexpr int kRescoreThreads = 256;  // the exact kernels: one block per window (or chunk)
constexpr size_t kDirectMaxTemplateBytes = 44 * 1024;  // + static smem stays under 48 KiB (every arch)

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

// The exact SSD or SAD of template rows j0..j1-1 of the window at (x, y), summed by the whole
// block in 64 bits (rescore_select in opt_fft.cu, exact_map in opt_direct.cu).
static __device__ uint64_t block_exact_rows(const uint8_t* src, size_t pitch, const uint8_t* tpl,
                                            int w, int x, int y, int j0, int j1, bool sad,
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

// n zeroed host values, or a runtime error naming `what` when the host is out of memory.
template <typename T>
inline Status alloc_host(std::vector<T>* v, size_t n, const char* what = "scores") {
  try {
    v->assign(n, T(0));
  } catch (const std::bad_alloc&) {
    return Status::runtime("out of host memory for " + std::to_string(n) + " " + what);
  }
  return Status::Ok();
}

// A batch's source transform (opt_source.cuh) for one enqueue of an FFT pipeline: whether it
// computes its own as a single call does, makes the batch's shared one, or reads it.
enum class SourceRole { Own, Make, Read };
struct SourceTransform;
struct SourceBinding {
  SourceRole role = SourceRole::Own;
  SourceTransform* slot = nullptr;  // Make / Read: the batch's slot
  bool counted = false;             // this run is counted as made or reused (once per run)
};
// What a captured graph baked in of its binding (the role and the shared buffers it reads).
struct GraphBinding {
  SourceRole role = SourceRole::Own;
  const void* a = nullptr;
  const void* b = nullptr;
  bool operator==(const GraphBinding& o) const { return role == o.role && a == o.a && b == o.b; }
};

}  // namespace opt

// The prepared matcher: template data once, and per source size the buffers, cuFFT plans, the
// template spectrum and the captured graphs.
struct Matcher {
  opt::MatchTuning tuning;  // filled once in matcher_create; the values that run
  std::string tuning_note;  // "; " + tuning.describe(), appended to every run's explain
  std::string upload_tuning_note;  // "; upload: " + the copier's tuning, made once (no allocation a frame)
  Image tpl;
  Params params;  // what runs: for the normed metrics, exact SSD with its map
  Params asked;   // what was asked for
  WindowSums window_sums;  // the normed metrics' ΣI, ΣI² (host), reused from run to run
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
  cuda::StagedCopier copier;       // the user's pageable source -> d_src (cuda/upload/tuning.hpp)
  cuda::TransferInfo upload_info;  // how the last upload went
  bool source_on_device = false;  // matcher_run_device: d_src is already written, no upload
  bool gray_device = true;         // PARVIS_GRAY=device (default) | host: who makes an RGB source's grey
  const Image* rgb_source = nullptr;  // matcher_run_rgb: the RGB bytes to upload and make grey
  std::string upload_note;         // how the source got to d_src beyond upload_info (timing line)
  // The timing line's text for upload_info + upload_note, and what it was made from.
  std::string upload_how_text, upload_how_note;
  cuda::TransferInfo upload_how_info;
  bool upload_how_made = false;
  DeviceBuffer<opt::DeviceOut> d_out;         // the FFT / NTT paths' working record
  DeviceBuffer<opt::DeviceOut> d_direct_rec;  // direct_dp4a's, only ever left clean
  PinnedBuffer<opt::DeviceOut> h_out;         // the result on the host (mapped where possible)
  DeviceBuffer<opt::DeviceOut> d_result;      // the result on the device where h_out is not mapped
  opt::DeviceOut* result = nullptr;           // where the kernels write the result (h_out's
                                              // device pointer where tuning.mapped_result)

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

  // The normed metrics on the device (opt_normed.cu), per source size.
  DeviceBuffer<uint64_t> d_norm_ci, d_norm_cq, d_norm_ssd64, d_norm_keys;
  DeviceBuffer<uint32_t> d_norm_ssd32;
  DeviceBuffer<double> d_norm_map, d_norm_approx;
  DeviceBuffer<uint64_t> d_norm_lo, d_norm_hi;  // cuFFT: the ranks' ends
  DeviceBuffer<int2> d_norm_cand;                // cuFFT, top 1: the candidates on the device
  DeviceBuffer<unsigned> d_norm_count;
  DeviceBuffer<unsigned long long> d_norm_exact;
  DeviceBuffer<opt::DeviceOut> d_norm_best;
  PinnedBuffer<opt::DeviceOut> h_norm_best;

  // --mask with the FFT method (opt_mask_fft.cu): tpl above is T & b; the mask's row runs,
  // counted first (mask_counted of them), then the ignored ones or (mask_whole_rows) the h
  // whole rows, whichever are fewer; on the device once, and the row prefix sums per size.
  std::vector<mask::Run> mask_runs;
  int mask_counted = 0;
  bool mask_whole_rows = false;
  DeviceBuffer<mask::Run> d_mask_runs;
  DeviceBuffer<uint16_t> d_mask_tm;  // cuda_mask::pack, for the re-scoring
  DeviceBuffer<uint2> d_mask_pre;
  // Per size, kept between runs: the pipeline's map of T & b (NTT: exact SSD', cuFFT: the
  // approximate one) and the per-position words (NTT: the score; cuFFT: the two rank keys).
  DeviceBuffer<uint32_t> d_mask_ssd;
  DeviceBuffer<double> d_mask_approx;
  DeviceBuffer<uint64_t> d_mask_a, d_mask_b;

  // --all on the device (opt_choice.cu): the map kept there (32-bit exact, or cuFFT's), the
  // listed positions and their exact scores, and their copies on the host (reused run to run).
  DeviceBuffer<uint32_t> d_choice_map32;
  DeviceBuffer<double> d_choice_approx;
  DeviceBuffer<int2> d_choice_cand;
  DeviceBuffer<unsigned long long> d_choice_vals, d_choice_his;  // his: the normed upper ends
  DeviceBuffer<unsigned> d_choice_count;
  PinnedBuffer<unsigned> h_choice_count;
  std::vector<int2> h_choice_cand;
  std::vector<unsigned long long> h_choice_vals, h_choice_his;
  std::vector<Position> h_choice_sorted;
  std::vector<Ranged> h_choice_ends;
  // --min-distance's prune (opt_choice.cu): each position's ends, window minima, the dropped
  // flags, and whether each round dropped any.
  DeviceBuffer<uint64_t> d_prune_low, d_prune_hi, d_prune_a, d_prune_b, d_prune_c;
  DeviceBuffer<uint32_t> d_prune_dropped;
  DeviceBuffer<unsigned> d_prune_dropped_any;

  cudaGraphExec_t graph_fft = nullptr, graph_direct = nullptr, graph_ntt = nullptr;
  // A batch's source transform (opt_source.cuh): this enqueue's binding, and the one each FFT
  // graph was captured for (maker and reader graphs differ: a reader's has no source nodes).
  opt::SourceBinding src_bind;
  opt::GraphBinding graph_fft_bound, graph_ntt_bound;

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
  void set_tuning(const opt::MatchTuning& t) {
    tuning = t;
    tuning_note = "; " + t.describe();
  }
  int map_w() const { return W - w + 1; }
  int map_h() const { return H - h + 1; }
};

namespace opt {

// ---- shared host plumbing (opt.cu) ------------------------------------------------------------------
Status upload_source(Matcher& m, const Image& src);
Status timed_upload(Matcher& m, const Image& src, bool upload = true);
Status elapsed(Matcher& m, Timings* t);
Status fetch_result(Matcher& m, Timings* t, DeviceOut* o);

// ---- the pipelines' entry points ----------------------------------------------------------------------
// opt_direct.cu
int direct_rows(const Matcher& m);
Status run_direct(Matcher& m, const Image& src, Result* res);
Status run_exact_map(Matcher& m, const Image& src, Result* res, bool uploaded);
// The exact SSD map of m.params on the stream: into map32 where direct_fast, else into map64.
Status enqueue_ssd_map(Matcher& m, uint32_t* map32, uint64_t* map64);
// opt_normed.cu: NCC / ccorr-normed (m.asked) on the device, from an SSD map: the direct
// kernels' or the exact NTT's (exact), or cuFFT's (approximate: each rank within its ends, the
// positions the answer could hold re-scored exactly, select.hpp's settle).
enum class NormedMap { Direct, Ntt, Fft };
Status run_normed(Matcher& m, const Image& src, NormedMap from, Result* res);
bool normed_device_fits(const Matcher& m);  // the grids of run_normed hold the map
// opt_ntt.cu
bool ntt_eligible(const Matcher& m, std::string* why_not);
Status run_ntt(Matcher& m, const Image& src, Result* res);
// The exact SSD map of m's template into map (map_w x map_h) on m.stream, the source uploaded
// (opt_mask_fft.cu; not a graph: the masked method's other kernels follow it).
Status enqueue_ntt_map(Matcher& m, uint32_t* map);
// opt_fft.cu (runs the NTT pipeline where ntt_eligible())
Status run_fft(Matcher& m, const Image& src, Result* res);
// cuFFT's approximate SSD map likewise; *e the bound on |approx - exact| (opt_mask_fft.cu).
Status enqueue_fft_map(Matcher& m, double* map, double* e);
// The exact SSD of each of `count` positions into exact[] (zeroed here), on m.stream; with
// count_ptr, of min(*count_ptr, count) positions (read on the device).
Status enqueue_exact_ssd(Matcher& m, const int2* cand, unsigned count, const unsigned* count_ptr,
                         unsigned long long* exact);
// opt_choice.cu: --all (a threshold, no --map) chosen on the device. After an exact 32-bit map
// (enqueue_collect_exact; then e < 0) or cuFFT's (enqueue_collect_approx, e its bound E: what the
// choice needs re-scored exactly), finish_device_choice brings the list back and chooses into res
// (Result::chosen); *overflow when more positions could match than the list holds (nothing
// chosen then).
// The choice is `p`'s (m.params; the normed metrics: m.asked).
bool device_choice(const Params& p);
Status enqueue_collect_exact(Matcher& m, const uint32_t* map, const Selection& sel);
Status enqueue_collect_keys(Matcher& m, const uint64_t* keys, const Selection& sel);
Status enqueue_collect_approx(Matcher& m, const double* map, double e);
Status finish_device_choice(Matcher& m, const Params& p, double e, Result* res, bool* overflow);
// The normed metrics on cuFFT's map (opt_normed.cu): every position whose rank's lower end is at
// most the threshold, with both ends; finish_ends_choice chooses among them, re-scoring through
// `rescore` only what the choice needs (select.hpp: choose_within_ends).
Status enqueue_collect_ends(Matcher& m, const uint64_t* lo, const uint64_t* hi, const Selection& sel);
Status finish_ends_choice(Matcher& m, const Params& p, RankRescoreFn rescore, Result* res,
                          bool* overflow);
// opt_mask_fft.cu: --mask with the FFT method (m.asked's metric, m.tpl = T & b).
bool mask_fft_applies(const Matcher& m, std::string* why_not);
Status run_mask_fft(Matcher& m, const Image& src, Result* res);
// opt_fft_size.cu: cuFFT's padded size P x Q for a W x H source (timed once per size and process)
Status tune_fft_size(Matcher& m, int W, int H, int* P, int* Q);

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

// ---- graphs: capture once per source size, replay every run ----------------------------------------
template <typename Enqueue>
Status run_graph(Matcher& m, cudaGraphExec_t* exec, Enqueue enqueue) {
  if (!*exec && m.tuning.graph) {
    // Capture is an optimisation: on any failure the same work runs without it, from now on.
    opt::MatchTuning uncaptured = m.tuning;
    uncaptured.graph = false;
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamBeginCapture(m.stream, cudaStreamCaptureModeThreadLocal));
    const Status captured = enqueue();
    const cudaError_t end = cudaStreamEndCapture(m.stream, &graph);
    if (!captured.ok() || end != cudaSuccess) {
      if (graph) cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      m.set_tuning(uncaptured);
    } else {
      const cudaError_t inst = cudaGraphInstantiate(exec, graph, 0);
      cudaGraphDestroy(graph);
      if (inst != cudaSuccess) {
        (void)cudaGetLastError();
        *exec = nullptr;
        m.set_tuning(uncaptured);
      }
    }
  }
  if (*exec) {
    CUDA_CHECK(cudaGraphLaunch(*exec, m.stream));
    return Status::Ok();
  }
  return enqueue();
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
// picks the K best. --all without --map: the matches alone come back (opt_choice.cu), unless
// there are more than its list holds.
template <typename Enqueue>
Status finish_u32_map(Matcher& m, Result* res, Enqueue enqueue) {
  const int map_w = m.map_w(), map_h = m.map_h();
  if (device_choice(m.params)) {
    bool overflow = false;
    PARVIS_TRY(m.d_choice_map32.alloc(size_t(map_w) * size_t(map_h)));
    PARVIS_TRY(enqueue(m.d_choice_map32.get()));
    PARVIS_TRY(enqueue_collect_exact(m, m.d_choice_map32.get(), m.params.selection));
    PARVIS_TRY(finish_device_choice(m, m.params, -1.0, res, &overflow));
    if (!overflow) return Status::Ok();
  }
  std::vector<uint32_t> map32;
  PARVIS_TRY(fetch_map(m, &map32, &res->timings, enqueue));
  const double t0 = now_ms();
  std::vector<uint64_t> scores(map32.begin(), map32.end());
  best_from_ranks(scores.data(), map_w, map_h, m.params, res);
  if (m.params.want_map) scores_to_map(scores.data(), map_w, map_h, &res->map);
  res->timings.compute_ms += now_ms() - t0;
  return Status::Ok();
}

}  // namespace opt
}  // namespace parvis::match
