// The Matcher of the simd and omp versions. They differ only in who computes which result
// rows, the CpuExec they pass (cpu_exec.hpp): simd.cpp runs the rows in order on one
// thread; omp.cpp spreads them with `#pragma omp parallel for schedule(static)`.
// Kernels: simd_kernels.hpp; FFT method: cpu_fft.hpp.
#pragma once
#include <algorithm>
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "match/cpu_exec.hpp"
#include "match/cpu_fft.hpp"
#include "match/cpu_mask_fft.hpp"
#include "match/mask.hpp"
#include "match/match_common.hpp"
#include "match/select.hpp"
#include "match/simd_kernels.hpp"

namespace parvis::match {

struct Matcher {
  Params params;
  kernels::TemplateRows tpl;
  TemplateSums tsums;  // n, ΣT, ΣT² (the normed metrics)
  kernels::Kernels k = kernels::pick_kernels();
  int threads = 1;
  fft::PlanPtr fft;  // SSD with method auto or fft, in a build with FFTW
  // Source layouts, kept between runs so that a video reuses their memory.
  kernels::PaddedSource padded;  // SAD, and re-scoring FFT candidates
  kernels::PairedSource paired;  // SSD maps
  // Per-worker scratch of the direct method, kept so that a video's frames allocate nothing.
  std::vector<std::vector<uint64_t>> rows;
  std::vector<FilteredTopK> tops;
  WindowSums window_sums;        // ΣI, ΣI² of the normed metrics
  // --mask with a normed metric: the mask over a template of zeros, whose masked SAD and SSD
  // rows are the masked ΣI and ΣI² of each position (|I & m − 0|, (I & m − 0)²).
  kernels::TemplateRows mask_only;
  std::vector<mask::Run> runs;  // --mask with the FFT method (cpu_mask_fft.hpp)
};

namespace cpu {

// Cost model of `auto`, per pixel comparison (one |d| or d² of one position) of the direct
// kernels on one thread, fitted to the bench on the development machine; two threads scale by
// ~1.9 (the fit: docs/decisions/022).
inline double direct_ns_per_pixel(const char* isa) {
  const std::string s = isa;
  return s == "avx2" ? 0.021 : s == "sse2" ? 0.045 : 0.2;
}

inline Status create(const Image& gray_template, const Params& params, const CpuExec& exec,
                     MatcherPtr* out) {
  PARVIS_TRY(check_params(params));
  PARVIS_TRY(check_template(gray_template));
  PARVIS_TRY(mask::check(params, gray_template.width, gray_template.height));
  MatcherPtr m(new Matcher);
  m->params = params;
  m->threads = exec.workers;
  const Image* mask = mask::active(params) ? &params.mask : nullptr;
  kernels::prepare_template(gray_template, &m->tpl, mask);
  m->tsums = mask ? mask::template_sums(gray_template, *mask) : template_sums(gray_template);
  if (mask && is_normed(params.metric)) {
    Image zeros = gray_template;
    std::fill(zeros.pixels.begin(), zeros.pixels.end(), uint8_t(0));
    kernels::prepare_template(zeros, &m->mask_only, mask);
  }
  if (params.metric != Metric::SAD && params.method != Method::Direct) {  // SSD, NCC
    // --mask: the FFT correlates with the masked template (cpu_mask_fft.hpp).
    if (mask) m->runs = mask::runs_of(*mask);
    const Image fft_tpl = mask ? mask::apply(gray_template, mask::binary(*mask)) : Image();
    if (fft::available())
      PARVIS_TRY(fft::prepare(mask ? fft_tpl : gray_template, m->threads, &m->fft,
                              params.source_cache, params.fft_tuning));
    else if (params.method == Method::FFT) return fft::unavailable();
  }
  *out = std::move(m);
  return Status::Ok();
}

// `auto`: the cheaper of direct and FFT by the cost model. Both give the exact answer, so
// the choice changes only the time.
inline Method choose(const Matcher& m, const Image& src, std::string* why) {
  const Params& p = m.params;
  if (p.method != Method::Auto) {
    why->assign(method_name(p.method)).append(", as asked");
    return p.method;
  }
  if (p.metric == Metric::SAD) {
    *why = "auto chose direct: SAD has no FFT form";
    return Method::Direct;
  }
  const double positions = double(map_width_of(src.width, m.tpl.w)) * map_height_of(src.height, m.tpl.h);
  const double ns = direct_ns_per_pixel(m.k.isa) / (m.threads > 1 ? 0.95 * m.threads : 1.0);
  // --mask: the normed metrics run three masked rows; the FFT adds R runs per position.
  const double direct_ms = positions * m.tpl.w * m.tpl.h * ns * 1e-6 * (m.tpl.masked && is_normed(p.metric) ? 3 : 1);
  char buf[320];
  if (!m.fft) {
    *why = "auto chose direct: this build has no FFTW";
    return Method::Direct;
  }
  int n0, n1;
  fft::padded_size(src.width, src.height, &n0, &n1);
  const double fft_ms = fft::estimate_ms(src.width, src.height, m.threads) +
                        (m.tpl.masked ? mask::runs_ms(positions, m.runs.size(), m.threads) : 0.0);
  const bool use_fft = fft_ms < direct_ms;
  std::snprintf(buf, sizeof buf,
                "auto chose %s: direct ~%.3g ms (%.0f positions x %dx%d pixels, %s, %d thread%s) vs "
                "fft ~%.3g ms (%dx%d FFT%s)",
                use_fft ? "fft" : "direct", direct_ms, positions, m.tpl.w, m.tpl.h, m.k.isa, m.threads,
                m.threads == 1 ? "" : "s", fft_ms, n1, n0,
                m.tpl.masked ? (" + " + std::to_string(m.runs.size()) + " mask runs per position").c_str() : "");
  why->assign(buf);
  return use_fft ? Method::FFT : Method::Direct;
}

inline Status run_direct(Matcher* m, const Image& src, const CpuExec& exec, Result* res) {
  const Params& p = m->params;
  const int map_w = map_width_of(src.width, m->tpl.w), map_h = map_height_of(src.height, m->tpl.h);
  // The normed metrics: ΣI·T from the exact SSD row, ΣI and ΣI² from WindowSums.
  const bool normed = is_normed(p.metric);
  const bool ssd = p.metric != Metric::SAD;
  // --mask: the masked kernels; a normed metric takes ΣI and ΣI² from two more masked rows.
  const bool masked = m->tpl.masked, masked_normed = masked && normed;
  const kernels::SsdRowFn ssd_row = masked ? m->k.ssd_row_masked : m->k.ssd_row;
  const kernels::SadRowFn sad_row = masked ? m->k.sad_row_masked : m->k.sad_row;
  WindowSums& ws = m->window_sums;
  if (normed && !masked) PARVIS_TRY(ws.build(src));
  try {
    if (ssd) {
      kernels::pair_source_alloc(src.width, src.height, &m->paired);
      exec.for_each(src.height, [&](int y, int) { kernels::pair_source_rows(src, y, y + 1, &m->paired); });
    }
    if (!ssd || masked_normed) kernels::pad_source(src, &m->padded);
    if (map_needed(p)) res->map.assign(size_t(map_w) * size_t(map_h), 0.0);
  } catch (const std::bad_alloc&) {
    return Status::runtime("out of memory for a " + std::to_string(src.width) + "x" +
                           std::to_string(src.height) + " source");
  }
  // One row buffer and one top-K per worker, merged at the end (TopK's order is total, so
  // the merge does not depend on how rows were split).
  const int workers = exec.workers;
  std::vector<std::vector<uint64_t>>& row = m->rows;
  std::vector<FilteredTopK>& tops = m->tops;
  row.resize(size_t(workers));
  for (auto& r : row) r.resize(size_t(map_w) * (masked_normed ? 3 : 1));
  if (tops.size() != size_t(workers)) tops.assign(size_t(workers), FilteredTopK(p.top_k));
  for (FilteredTopK& t : tops) t.reset();
  exec.for_each(map_h, [&](int y, int worker) {
    uint64_t* scores = row[size_t(worker)].data();
    if (ssd) ssd_row(m->paired, m->tpl, y, scores);
    else sad_row(m->padded, m->tpl, y, scores);
    if (masked_normed) {
      uint64_t* si = scores + map_w;
      uint64_t* sii = si + map_w;
      m->k.sad_row_masked(m->padded, m->mask_only, y, si);
      m->k.ssd_row_masked(m->paired, m->mask_only, y, sii);
      double* dst = map_needed(p) ? res->map.data() + size_t(y) * size_t(map_w) : nullptr;
      mask::normed_row(p.metric, m->tsums, si, sii, map_w, scores, dst);
      tops[size_t(worker)].offer_row(scores, map_w, y);
      return;
    }
    if (normed) {
      double* dst = map_needed(p) ? res->map.data() + size_t(y) * size_t(map_w) : nullptr;
      normed_row_from_ssd(p.metric, ws, m->tsums, m->tpl.w, m->tpl.h, y, map_w, scores, dst);
      tops[size_t(worker)].offer_row(scores, map_w, y);
      return;
    }
    tops[size_t(worker)].offer_row(scores, map_w, y);
    if (map_needed(p)) {
      double* dst = res->map.data() + size_t(y) * size_t(map_w);
      for (int x = 0; x < map_w; ++x) dst[x] = double(scores[x]);
    }
  });
  for (int i = 1; i < workers; ++i) tops[0].top().merge(tops[size_t(i)].top());
  tops[0].top().sorted_into(&res->best);
  res->map_width = map_w;
  res->map_height = map_h;
  res->method_used = Method::Direct;
  return Status::Ok();
}

inline Status run_fft(Matcher* m, const Image& src, const CpuExec& exec, Result* res) {
  // Exact re-scoring of FFT candidates with the one-position kernel (the seed's loop).
  bool padded = false;
  auto rescore = [&](std::vector<Position>* cands) {
    if (!padded) kernels::pad_source(src, &m->padded), padded = true;
    Position* c = cands->data();
    exec.for_each(int(cands->size()), [&](int i, int) { c[i].score = m->k.ssd_at(m->padded, m->tpl, c[i].x, c[i].y); });
  };
  if (m->tpl.masked) {  // cpu_mask_fft.hpp; the direct method where the FFT map is not exact
    bool done = false;
    PARVIS_TRY(mask::fft_run(m->fft.get(), src, m->runs, m->tsums, m->tpl.w, m->tpl.h, m->params, exec,
                             rescore, res, &done));
    if (done) return Status::Ok();
    res->explain += "; the map is not exact everywhere: the direct method instead";
    std::vector<double>().swap(res->map);
    return run_direct(m, src, exec, res);
  }
  return fft::run(m->fft.get(), src, m->params, exec, rescore, res);
}

inline Status run(Matcher* m, const Image& src, const CpuExec& exec, Result* out) {
  PARVIS_TRY(check_source(src, m->tpl.w, m->tpl.h));
  const double t0 = now_ms();
  reset_result(out);  // filled in place: a video's frames reuse its memory
  const Method method = choose(*m, src, &out->explain);
  out->explain.append(" [").append(m->k.isa).append("]");
  if (method == Method::FFT) PARVIS_TRY(run_fft(m, src, exec, out));
  else PARVIS_TRY(run_direct(m, src, exec, out));
  finish_choice(m->params, out);
  out->timings.compute_ms = now_ms() - t0;
  return Status::Ok();
}

}  // namespace cpu
}  // namespace parvis::match
