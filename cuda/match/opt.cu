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
// Files (a newcomer's map; every kernel lives in the file of its pipeline):
//   opt.cu            this file: the matcher (create, per-size setup, upload, result record),
//                     `auto`'s cost model and the dispatch;
//   opt_matcher.cuh   what the pipelines share: the Matcher, the fused run's record, graph
//                     capture / replay, the map round trip, the exact window score of a block;
//   opt_ntt.cu        FFT method, exact: the NTT pipeline (N1-N4);
//   opt_fft.cu        FFT method otherwise: cuFFT in double + exact re-scoring (steps 1-9);
//   opt_fft_size.cu   cuFFT's padded size, timed once per source size;
//   opt_source.cu/cuh a batch's source shared by its templates' matchers: the upload's buffer
//                     and the source's transform (cuFFT spectrum + integral image, NTT rows);
//   opt_direct.cu     direct method: direct_dp4a, and the generic exact map for large templates;
//   opt_mask_fft.cu   --mask with the FFT method: the pipelines above on T & b, the masked
//                     window sums over the mask's row runs (choose_masked here picks it).
// FFT method (SSD only; seed 000's pipeline, optimized):  SSD(x,y) = S2(x,y) - 2 C(x,y) + T2,
// C from an exact NTT where every correlation value stays below its prime (opt_ntt.cu), else
// from cuFFT in double with exact re-scoring of the near-minimum positions (opt_fft.cu).
// Direct method (SSD and SAD; seed 003 optimized): opt_direct.cu.
//
// Speed: bench/run_cuda_match_timing.sh and `./main bench match` (bench/README.md: the floors;
// bench/RESULTS.md: the current times; docs/decisions/021: the times the constants below were
// fitted to). cuFFT's error stays far below its bound (docs/decisions/002).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "match/device_source.cuh"
#include "match/mask.hpp"
#include "match/mask_kernels.cuh"
#include "match/opt_matcher.cuh"
#include "match/opt_source.cuh"

namespace parvis::match {

namespace opt {
namespace {

// The cost model of `auto`, fitted to the GPU's bench times (docs/decisions/021).
// direct_dp4a: a thread issues ~(R + h - 1) nw (4 + 5 R) instructions; one "wave" holds
// SMs x 640 threads at R = 8 (5 blocks of 128 per SM) or SMs x 1024 at R = 4 (8 blocks), and
// a wave takes one thread's instruction count x kDirectUsPerOp (issue-bound; refitted after the
// kFull rows of direct_row; grids far below one wave run ~2x faster per instruction, which only
// makes `auto` cautious there).
constexpr double kDirectUsPerOp = 0.010;
constexpr double kDirectFixedUs = 4.0;
constexpr double kGenericMacsPerUs = 2.0e6;  // the generic exact kernel (one block per window)
// The FFT pipeline, per point of the smallest 7-smooth padded size (the timed size is often
// larger but faster).
constexpr double kFftUsPerPoint = 6.5e-5;
constexpr double kFftFixedUs = 28.0;
// The NTT pipeline, per point of its padded size (fitted on 640x480 to 3840x2560).
constexpr double kNttUsPerPoint = 4.3e-5;
constexpr double kNttFixedUs = 18.0;
// --mask (choose_masked), fitted to `./main bench match --method ssd-maskfft,ssd-maskdirect`
// (1326x1025/479x432, 640x480/64x64, 1920x1080/16x16, each within ~10 %): both methods pay
// ~4.8 ns a position (the map and its ranking), then the masked direct
// kernel 2.6e6 template pixels a us, the masked FFT its unmasked pipeline and 6.1e5 run sums a us.
constexpr double kMaskPositionUs = 4.8e-3;
constexpr double kMaskDirectPixelsPerUs = 2.6e6;
constexpr double kMaskRunsPerUs = 6.1e5;

}  // namespace
}  // namespace opt

using namespace opt;

void MatcherDeleter::operator()(Matcher* m) const { delete m; }

Status matcher_create(const Image& gray_template, const Params& params, MatcherPtr* out) {
  PARVIS_TRY(cuda::require_device());
  PARVIS_TRY(check_params(params));
  PARVIS_TRY(check_template(gray_template));
  PARVIS_TRY(mask::check(params, gray_template.width, gray_template.height));
  MatcherPtr m(new Matcher);
  m->tpl = gray_template;
  if (mask::active(params)) {  // --mask: every pipeline below runs on T & b (opt_mask_fft.cu)
    m->tpl = mask::apply(gray_template, mask::binary(params.mask));
    m->mask_runs = mask::runs_of(params.mask);
    m->mask_counted = int(m->mask_runs.size());
    std::vector<mask::Run> ignored = mask::runs_of(params.mask, false);
    m->mask_whole_rows = ignored.size() > size_t(gray_template.height);
    if (m->mask_whole_rows) {  // fewer: Σ (1 − m)·I² = ΣI²(window) − Σ m·I² (opt_mask_fft.cuh)
      ignored.clear();
      for (int j = 0; j < gray_template.height; ++j)
        ignored.push_back(mask::Run{j, 0, gray_template.width});
    }
    m->mask_runs.insert(m->mask_runs.end(), ignored.begin(), ignored.end());
  }
  m->params = is_normed(params.metric) ? ssd_params_for_normed(params) : params;
  m->params.method = params.method;  // the normed metrics' SSD map: direct, or the NTT's
  m->asked = params;
  m->w = gray_template.width;
  m->h = gray_template.height;
  const int w = m->w, h = m->h;
  double l2sq = 0;
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < w; ++i) {
      const uint64_t v = m->tpl.row(j)[i];
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
  MatchTuning tuning = MatchTuning::from_config();
  tuning.mapped_result = tuning.mapped_result && can_map != 0;
  m->set_tuning(tuning);
  if (m->tuning.mapped_result) {
    PARVIS_TRY(m->h_out.alloc_mapped(1));
    PARVIS_TRY(m->h_out.device_pointer(&m->result));
  } else {
    PARVIS_TRY(m->h_out.alloc(1));
    PARVIS_TRY(m->d_result.alloc(1));
    m->result = m->d_result.get();
  }
  for (cudaEvent_t& e : m->ev) CUDA_CHECK(cudaEventCreate(&e));

  // The template, tight, for the exact kernels.
  // Uploads on m->stream: a plain cudaMemcpy from pageable memory returns before its DMA lands,
  // and the kernels on this non-blocking stream would not wait for it (cuda/common.cuh).
  PARVIS_TRY(m->d_tpl.alloc(size_t(w) * h));
  CUDA_CHECK(cudaMemcpy2DAsync(m->d_tpl.get(), w, m->tpl.data(), m->tpl.stride, w, h,
                               cudaMemcpyHostToDevice, m->stream));

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
        words[size_t(j) * m->nw + i / 4] |= uint32_t(m->tpl.row(j)[i]) << (8 * (i % 4));
    PARVIS_TRY(m->d_tpl_words.alloc(words.size()));
    CUDA_CHECK(cudaMemcpyAsync(m->d_tpl_words.get(), words.data(), words.size() * 4,
                               cudaMemcpyHostToDevice, m->stream));
  }
  // Who makes an RGB source's grey (config::check has refused any value but host and device).
  if (const char* g = config::get(config::Var::Gray); g && *g) m->gray_device = std::strcmp(g, "device") == 0;
  PARVIS_TRY(m->copier.init(cuda::upload_tuning()));
  m->upload_tuning_note = "; upload: " + m->copier.tuning().describe();
  *out = std::move(m);
  return Status::Ok();
}

namespace opt {

// ---- upload: the user's pageable image -> d_src ---------------------------------------------------
// By the matcher's StagedCopier (cuda/upload/upload.hpp; its tuning, PARVIS_UPLOAD and the
// upload.* keys, read once; pinned memory allocated per source size).
// Rows past W in d_src stay zero in every mode (set once per size; the copies write W bytes).
// An RGB source (matcher_run_rgb) goes as its RGB bytes, made grey on the GPU (gray_of).
namespace {

Status upload_host(Matcher& m, const Image& src, uint8_t* dst) {
  if (m.rgb_source) {
    m.upload_note = ", RGB bytes, grey made on the GPU";
    return m.copier.rgb_to_gray_device(dst, m.pitch, m.rgb_source->row(0), m.rgb_source->stride,
                                       m.W, m.H, m.stream, &m.upload_info);
  }
  return m.copier.to_device(dst, m.pitch, src.row(0), src.stride, size_t(src.width),
                            size_t(src.height), m.stream, &m.upload_info);
}

// A batch's source (Params::source_cache, ./main match SOURCE T1 T2 ...; SharedSource in
// opt_source.cuh): uploaded (and made grey) once, by the first template's matcher; every
// template's matcher then copies it into its own d_src on the device (a copy of whole rows of
// the same pitch: the bytes past W are zero in both).
Status upload_shared(Matcher& m, const Image& host, SourceCache* cache) {
  auto* shared = dynamic_cast<SharedSource*>(cache->state.get());
  if (shared && shared->same(host, m.W, m.H, m.pitch)) {
    // Uploaded by an earlier template's matcher: its stream's upload first, then the copy.
    CUDA_CHECK(cudaStreamWaitEvent(m.stream, shared->ready, 0));
    m.upload_note = "the batch's source, copied on the device (uploaded by an earlier template)";
    ++cache->upload.reused;
  } else {
    cache->state.reset();  // another source's: its last reader has finished (runs are synchronous)
    std::unique_ptr<SharedSource> fresh(new SharedSource);
    if (!fresh->d.alloc(m.pitch * m.H).ok()) {  // no room for a second copy: as a single call
      (void)cudaGetLastError();
      return upload_host(m, host, m.d_src.get());
    }
    CUDA_CHECK(cudaMemsetAsync(fresh->d.get(), 0, m.pitch * m.H, m.stream));
    CUDA_CHECK(cudaEventCreateWithFlags(&fresh->ready, cudaEventDisableTiming));
    PARVIS_TRY(upload_host(m, host, fresh->d.get()));
    CUDA_CHECK(cudaEventRecord(fresh->ready, m.stream));
    fresh->pixels = host.data();
    fresh->W = m.W;
    fresh->H = m.H;
    fresh->channels = host.channels;
    fresh->stride = host.stride;
    fresh->pitch = m.pitch;
    shared = fresh.get();
    cache->state = std::move(fresh);
    m.upload_note += ", kept on the device for the batch";
    ++cache->upload.made;
  }
  CUDA_CHECK(cudaMemcpy2DAsync(m.d_src.get(), m.pitch, shared->d.get(), shared->pitch, m.pitch,
                               size_t(m.H), cudaMemcpyDeviceToDevice, m.stream));
  return Status::Ok();
}

}  // namespace

Status upload_source(Matcher& m, const Image& src) {
  if (m.source_on_device) return Status::Ok();  // matcher_run_device: already there
  m.upload_note.clear();
  const Image& host = m.rgb_source ? *m.rgb_source : src;
  if (SourceCache* cache = m.asked.source_cache) return upload_shared(m, host, cache);
  return upload_host(m, host, m.d_src.get());
}

// The upload of a timed run, between events 0 and 1 (`upload` false: the source is already on
// the device, the span is empty).
Status timed_upload(Matcher& m, const Image& src, bool upload) {
  m.upload_info = cuda::TransferInfo{};  // bytes 0: no upload to report
  m.upload_note.clear();
  CUDA_CHECK(cudaEventRecord(m.ev[0], m.stream));
  if (upload) PARVIS_TRY(upload_source(m, src));
  CUDA_CHECK(cudaEventRecord(m.ev[1], m.stream));
  return Status::Ok();
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
  t->upload_bytes = double(m.upload_info.bytes);
  // The text is made again only when the copy changed shape: a video's frames allocate nothing.
  if (m.upload_info.bytes && !(m.upload_how_made && m.upload_how_info.same_shape(m.upload_info) &&
                               m.upload_how_note == m.upload_note)) {
    m.upload_how_text = m.upload_info.describe() + m.upload_note;
    m.upload_how_info = m.upload_info;
    m.upload_how_note = m.upload_note;
    m.upload_how_made = true;
  }
  t->upload_how.assign(m.upload_info.bytes ? m.upload_how_text : m.upload_note);
  return Status::Ok();
}

// After a fused graph: the result record on the host. `download` is the copy where the record
// is not mapped, and ~0 where the kernel already wrote it to the host.
Status fetch_result(Matcher& m, Timings* t, DeviceOut* o) {
  CUDA_CHECK(cudaEventRecord(m.ev[2], m.stream));
  if (!m.tuning.mapped_result)
    CUDA_CHECK(cudaMemcpyAsync(m.h_out.get(), m.result, sizeof(DeviceOut), cudaMemcpyDeviceToHost,
                               m.stream));
  CUDA_CHECK(cudaEventRecord(m.ev[3], m.stream));
  PARVIS_TRY(elapsed(m, t));  // waits for ev[3]: the graph and the kernel's writes are done
  std::memcpy(o, m.h_out.get(), sizeof(DeviceOut));
  return Status::Ok();
}

namespace {

// ---- per-size setup ------------------------------------------------------------------------------
// rgb: the source will go as its RGB bytes (the copier is prepared for those: a normed RGB run
// sizes the matcher in matcher_gray_on_device, before matcher_run_rgb sets m.rgb_source).
// host: the image the upload will take, where known (the copier reads it ahead: prepare's
// `next`; the caller ends that reading before it returns).
Status setup_source_size(Matcher& m, int W, int H, bool rgb, const Image* host = nullptr) {
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
  // The copier's pinned slots (and device slots for an RGB source's conversion), once per size;
  // not where a batch's source of this size is already on the device (upload_shared copies it
  // there: this matcher uploads nothing). A copy that finds them too small allocates them then.
  const auto* shared = m.asked.source_cache
                           ? dynamic_cast<const SharedSource*>(m.asked.source_cache->state.get())
                           : nullptr;
  if (!shared || shared->W != W || shared->H != H)
    PARVIS_TRY(m.copier.prepare(size_t(W) * (rgb ? 3 : 1), size_t(H), m.pitch, rgb,
                                host ? host->row(0) : nullptr, host ? host->stride : 0));
  PARVIS_TRY(m.d_out.alloc(1));
  PARVIS_TRY(m.d_direct_rec.alloc(1));
  for (DeviceOut* rec : {m.d_out.get(), m.d_direct_rec.get()})
    CUDA_CHECK(cudaMemcpyAsync(rec, &kCleanRecord, sizeof(DeviceOut), cudaMemcpyHostToDevice,
                               m.stream));
  CUDA_CHECK(cudaStreamSynchronize(m.stream));
  return Status::Ok();
}

// ---- auto: the cost model --------------------------------------------------------------------------
// The FFT method's estimate: the NTT where it takes the template, else cuFFT; its padded size.
double fft_estimate_us(const Matcher& m, bool* ntt, int* P, int* Q) {
  std::string no_ntt;
  *ntt = ntt_eligible(m, &no_ntt);
  *P = *ntt ? ntt::good_length(m.W) : cuda::fft::good_size(m.W);
  *Q = *ntt ? ntt::good_length(m.H) : cuda::fft::good_size(m.H);
  return *ntt ? kNttFixedUs + kNttUsPerPoint * double(*P) * *Q
              : kFftFixedUs + kFftUsPerPoint * double(*P) * *Q;
}

// --mask: the masked direct kernel (mask_kernels.cuh: one thread per position, every template
// pixel) or the masked FFT / NTT (opt_mask_fft.cu: the FFT method on T & b, R run sums per
// position, the map of 8 (NTT) or 16 (cuFFT) bytes a position back). `auto` compares
//   direct: positions x (kMaskPositionUs + w h / kMaskDirectPixelsPerUs),
//   fft:    the FFT estimate + positions x (kMaskPositionUs + R / kMaskRunsPerUs).
Method choose_masked(const Matcher& m, std::string* why) {
  std::string no;
  const Method asked = m.asked.method;
  const char* name = asked == Method::Auto ? "auto" : method_name(asked);
  if (asked == Method::Direct || !mask_fft_applies(m, &no)) {
    why->assign(name).append(": direct (--mask: the masked kernel of mask_kernels.cuh");
    if (!no.empty()) why->append("; no masked FFT: ").append(no);
    why->append(")");
    return Method::Direct;
  }
  bool ntt = false;
  int P = 0, Q = 0;
  const double positions = double(m.map_w()) * m.map_h();
  const double fft_us = fft_estimate_us(m, &ntt, &P, &Q) +
                        positions * (kMaskPositionUs + double(m.mask_runs.size()) / kMaskRunsPerUs);
  const double direct_us = positions * (kMaskPositionUs + double(m.w) * m.h / kMaskDirectPixelsPerUs);
  const bool fft = asked == Method::FFT || fft_us < direct_us;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s: %s (--mask: masked direct ~%.0f us vs masked %s ~%.0f us, %zu row runs)",
                asked == Method::Auto ? (fft ? "auto chose fft" : "auto chose direct") : "fft, as asked",
                fft ? "the masked FFT / NTT of opt_mask_fft.cu" : "the masked kernel of mask_kernels.cuh",
                direct_us, ntt ? "NTT" : "cuFFT", fft_us, m.mask_runs.size());
  why->assign(buf);
  return fft ? Method::FFT : Method::Direct;
}

// The normed metrics on the device (opt_normed.cu); match.ncc_host=1 or a map too large for
// its grids: on the host, from an exact SSD map.
bool normed_device(const Matcher& m) {
  return is_normed(m.asked.metric) && !m.tuning.ncc_host && normed_device_fits(m);
}

// cuFFT's map serves the normed metrics on the device, settled where the answer could lie
// (opt_normed.cu), except for a --map of their own: its other scores would be approximate, and
// the normed maps are exact on every version.
bool cufft_serves_normed(const Matcher& m) {
  return normed_device(m) && !m.asked.want_map;
}

Method choose(const Matcher& m, std::string* why) {
  if (m.params.metric == Metric::SAD) {
    *why = "auto chose direct: SAD has no FFT form";
    return Method::Direct;
  }
  // Where the NTT cannot take the template, cuFFT serves SSD's K best without a map, and the
  // normed metrics on the device (cufft_serves_normed).
  std::string no_ntt;
  const bool cufft_serves =
      is_normed(m.asked.metric) ? cufft_serves_normed(m) : !map_needed(m.params) || device_choice(m.params);
  if (!cufft_serves && !ntt_eligible(m, &no_ntt)) {
    *why = "auto chose direct: the run reads an exact score map, which direct gives (no NTT: " +
           no_ntt + ")";
    return Method::Direct;
  }
  const double macs = double(m.map_w()) * m.map_h() * m.w * m.h;
  double direct_us = macs / kGenericMacsPerUs;
  const int R = m.direct_fast ? direct_rows(m) : 0;
  if (m.direct_fast) {
    const double threads = double(div_up(m.map_w(), 4)) * div_up(m.map_h(), R);
    const double ops = double(R + m.h - 1) * m.nw * (4 + 5 * R);
    const double waves = std::max(1.0, threads / (double(m.num_sms) * (R == 4 ? 1024 : 640)));
    direct_us = kDirectFixedUs + ops * waves * kDirectUsPerOp;
  }
  bool ntt = false;
  int P = 0, Q = 0;
  const double fft_us = fft_estimate_us(m, &ntt, &P, &Q);
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "auto chose %s: direct ~%.0f us (%.3g multiply-adds, %s kernel%s) vs fft ~%.0f us "
                "(%dx%d %s)",
                direct_us <= fft_us ? "direct" : "fft", direct_us, macs,
                m.direct_fast ? "dp4a" : "generic", R == 8 ? ", 8 rows a thread" : R == 4 ? ", 4 rows a thread" : "",
                fft_us, P, Q,
                ntt ? "exact NTTs + window sums" : "double FFTs + integral image + exact re-scoring");
  why->assign(buf);
  return direct_us <= fft_us ? Method::Direct : Method::FFT;
}

}  // namespace
}  // namespace opt

// matcher_run before the choice (finish_choice).
static Status run_unchosen(Matcher* m, const Image& gray_source, Result* out) {
  PARVIS_TRY(cuda::require_device());
  PARVIS_TRY(check_source(gray_source, m->w, m->h));
  // The pixels the upload takes, read ahead by the copier's threads on a new size (a single
  // call's first upload; cuda/upload/upload.hpp): no thread reads them after this returns.
  const Image* host = m->source_on_device ? nullptr : m->rgb_source ? m->rgb_source : &gray_source;
  struct EndReadAhead {
    cuda::StagedCopier* copier;
    ~EndReadAhead() {
      if (copier) copier->end_read_ahead();
    }
  } end_read_ahead{host ? &m->copier : nullptr};
  PARVIS_TRY(setup_source_size(*m, gray_source.width, gray_source.height, m->rgb_source != nullptr, host));
  reset_result(out);  // filled in place: a video's frames reuse its memory
  out->map_width = m->map_w();
  out->map_height = m->map_h();
  if (mask::active(m->asked)) {  // --mask: the masked direct kernel or the masked FFT / NTT
    if (m->source_on_device) return Status::usage("--mask needs the source on the host");
    const Method masked = choose_masked(*m, &out->explain);
    out->explain.append(m->tuning_note);
    if (masked == Method::FFT) return run_mask_fft(*m, gray_source, out);
    return cuda_mask::run(gray_source, m->tpl, m->asked, out);
  }
  Method method = m->params.method;
  if (method == Method::Auto)
    method = choose(*m, &out->explain);
  else
    out->explain.assign(method_name(method)).append(", as asked");
  // The normed metrics and a choice of positions (Params::selection) read a map. The direct
  // kernels' and the NTT's are exact; cuFFT's (exact near the best only) serves the normed
  // metrics on the device, settled there (opt_normed.cu), but not a choice of SSD positions nor
  // the host's normed path.
  std::string no_ntt;
  const bool normed = is_normed(m->asked.metric), ntt = ntt_eligible(*m, &no_ntt);
  if (method == Method::FFT && !ntt &&
      (normed ? !cufft_serves_normed(*m) : m->params.selection.active() && !device_choice(m->params))) {
    method = Method::Direct;
    out->explain.append("; the run reads an exact score map and the NTT cannot take it (")
        .append(no_ntt)
        .append("): the direct method's");
  }
  out->explain.append(m->tuning_note);
  if (host) out->explain.append(m->upload_tuning_note);
  // The normed metrics on the device (opt_normed.cu); match.ncc_host=1: on the host, as before.
  if (normed_device(*m))
    return run_normed(*m, gray_source,
                      method != Method::FFT ? NormedMap::Direct : ntt ? NormedMap::Ntt : NormedMap::Fft, out);
  if (method == Method::FFT)
    PARVIS_TRY(run_fft(*m, gray_source, out));
  else
    PARVIS_TRY(run_direct(*m, gray_source, out));
  if (is_normed(m->asked.metric)) {
    if (m->source_on_device)  // the window sums are taken on the host, from its pixels
      return Status::usage(std::string(metric_name(m->asked.metric)) + " needs the source on the host");
    PARVIS_TRY(normed_from_ssd_map(gray_source, template_sums(m->tpl), m->w, m->h, m->asked, out,
                                   nullptr, &m->window_sums));
  }
  return Status::Ok();
}

Status matcher_run(Matcher* m, const Image& gray_source, Result* out) {
  PARVIS_TRY(run_unchosen(m, gray_source, out));
  finish_choice(m->asked, out);
  return Status::Ok();
}

// ---- a source already on the device (device_source.cuh) -----------------------------------------
Status matcher_device_source(Matcher* m, int W, int H, uint8_t** d_src, size_t* pitch,
                             cudaStream_t* stream) {
  PARVIS_TRY(cuda::require_device());
  if (W < m->w || H < m->h)
    return Status::bad_input("the template (" + std::to_string(m->w) + "x" + std::to_string(m->h) +
                             ") is larger than the source (" + std::to_string(W) + "x" +
                             std::to_string(H) + ")");
  PARVIS_TRY(setup_source_size(*m, W, H, false));
  *d_src = m->d_src.get();
  *pitch = m->pitch;
  *stream = m->stream;
  return Status::Ok();
}

Status matcher_run_device(Matcher* m, Result* out) {
  if (!m->d_src.get()) return Status::runtime("matcher_run_device before matcher_device_source");
  m->source_on_device = true;  // upload_source skips the copy: the shape is all matcher_run needs
  const Status s = matcher_run(m, gray_shape(m->W, m->H), out);
  m->source_on_device = false;
  return s;
}

// ---- an RGB source made grey on the GPU (match.hpp) ----------------------------------------------
Status matcher_gray_on_device(Matcher* m, int W, int H, bool* on_device) {
  *on_device = false;
  if (!m->gray_device || mask::active(m->asked)) return Status::Ok();  // --mask: host grey
  if (W < m->w || H < m->h) return Status::Ok();  // matcher_run says why, as for a grey source
  if (is_normed(m->asked.metric)) {  // on the device only where run_normed takes the source
    if (m->tuning.ncc_host) return Status::Ok();
    PARVIS_TRY(cuda::require_device());
    PARVIS_TRY(setup_source_size(*m, W, H, true));  // the copier prepared for the RGB bytes
    if (!normed_device_fits(*m)) return Status::Ok();
  }
  *on_device = true;
  return Status::Ok();
}

Status matcher_run_rgb(Matcher* m, const Image& rgb_source, Result* out) {
  bool device = false;
  PARVIS_TRY(matcher_gray_on_device(m, rgb_source.width, rgb_source.height, &device));
  if (rgb_source.channels != 3 || !device) return matcher_run(m, to_gray(rgb_source), out);
  m->rgb_source = &rgb_source;  // upload_source takes the RGB bytes: the grey's shape is enough
  const Status s = matcher_run(m, gray_shape(rgb_source.width, rgb_source.height), out);
  m->rgb_source = nullptr;
  if (s.ok()) out->explain += "; source: its RGB bytes uploaded, grey made on the GPU (PARVIS_GRAY=device)";
  return s;
}

}  // namespace parvis::match
