// Template matching, the reference (seeds 000 and 003): slide the grey template over every
// position of the grey source and sum, exactly in 64-bit integers, the per-pixel cost
// (d^2 for SSD, |d| for SAD). Plain loops; every other version must agree bit for bit.
#include <new>

#include "match/cpu_fft.hpp"
#include "match/cpu_mask_fft.hpp"
#include "match/mask.hpp"
#include "match/match_common.hpp"
#include "match/select.hpp"
#include "match/ncc.hpp"

namespace parvis::match {

struct Matcher {
  Image tpl;  // the grey template
  Params params;
  fft::PlanPtr fft;  // --method fft: plans and template spectrum (cpu_fft.hpp)
  TopK top{1};       // the direct method's K best, kept so that a video's frames reuse it
  Image masked_tpl;  // --mask with --method fft: T & b, what the FFT correlates (cpu_mask_fft.hpp)
  std::vector<mask::Run> runs;
};

void MatcherDeleter::operator()(Matcher* m) const { delete m; }

Status matcher_create(const Image& gray_template, const Params& params, MatcherPtr* out) {
  PARVIS_TRY(check_params(params));
  PARVIS_TRY(check_template(gray_template));
  PARVIS_TRY(mask::check(params, gray_template.width, gray_template.height));
  out->reset(new Matcher);
  Matcher& m = **out;
  m.tpl = gray_template;
  m.params = params;
  if (mask::active(params)) {
    m.masked_tpl = mask::apply(gray_template, mask::binary(params.mask));
    m.runs = mask::runs_of(params.mask);
  }
  if (params.method == Method::FFT)  // SSD, NCC
    PARVIS_TRY(fft::prepare(mask::active(params) ? m.masked_tpl : gray_template, 1, &m.fft,
                            params.source_cache, params.fft_tuning));
  return Status::Ok();
}

// The score of the template with its top-left corner at (x, y) in the source. The metric is
// a template parameter so that the compiler sees one plain loop per metric.
template <Metric M>
static uint64_t window_score(const Image& src, const Image& tpl, int x, int y) {
  uint64_t sum = 0;
  for (int j = 0; j < tpl.height; ++j) {
    const uint8_t* s = src.row(y + j) + x;
    const uint8_t* t = tpl.row(j);
    for (int i = 0; i < tpl.width; ++i) sum += pixel_cost<M>(int(s[i]) - int(t[i]));
  }
  return sum;
}

// Every position's score: the K best kept, the map (when not null) filled.
template <Metric M>
static void score_all(const Image& src, const Image& tpl, TopK* top, std::vector<double>* map) {
  const int map_w = map_width_of(src.width, tpl.width);
  const int map_h = map_height_of(src.height, tpl.height);
  for (int y = 0; y < map_h; ++y) {
    for (int x = 0; x < map_w; ++x) {
      const uint64_t score = window_score<M>(src, tpl, x, y);
      top->offer(x, y, score);
      if (map) (*map)[size_t(y) * map_w + x] = double(score);
    }
  }
}

// NCC / ccorr-normed: every position's ΣI, ΣI² and ΣI·T summed directly (exact, 64-bit),
// then the one double expression of ncc.hpp.
static void score_all_normed(const Image& src, const Image& tpl, Metric metric, TopK* top,
                             std::vector<double>* map) {
  const int map_w = map_width_of(src.width, tpl.width);
  const int map_h = map_height_of(src.height, tpl.height);
  const TemplateSums ts = template_sums(tpl);
  for (int y = 0; y < map_h; ++y) {
    for (int x = 0; x < map_w; ++x) {
      uint64_t si = 0, sii = 0, sit = 0;
      for (int j = 0; j < tpl.height; ++j) {
        const uint8_t* s = src.row(y + j) + x;
        const uint8_t* t = tpl.row(j);
        for (int i = 0; i < tpl.width; ++i) {
          si += s[i];
          sii += uint32_t(s[i]) * s[i];
          sit += uint32_t(s[i]) * t[i];
        }
      }
      const double r = ncc::score(metric == Metric::NCC, ts.n, si, sii, sit, ts.st, ts.stt);
      top->offer(x, y, ncc::key_of(r));
      if (map) (*map)[size_t(y) * map_w + x] = r;
    }
  }
}

// --mask: every score from the sums over the counted pixels, by mask.hpp's direct definition.
static void score_all_masked(const Image& src, const Image& tpl, const Image& mask, Metric metric,
                             TopK* top, std::vector<double>* map) {
  const int map_w = map_width_of(src.width, tpl.width);
  const int map_h = map_height_of(src.height, tpl.height);
  const TemplateSums ts = mask::template_sums(tpl, mask);
  for (int y = 0; y < map_h; ++y) {
    for (int x = 0; x < map_w; ++x) {
      uint64_t rank;
      double value;
      if (metric == Metric::SSD) {
        rank = mask::cost_at<Metric::SSD>(src, tpl, mask, x, y), value = double(rank);
      } else if (metric == Metric::SAD) {
        rank = mask::cost_at<Metric::SAD>(src, tpl, mask, x, y), value = double(rank);
      } else {
        uint64_t si, sii, sit;
        mask::sums_at(src, tpl, mask, x, y, &si, &sii, &sit);
        value = ncc::score(metric == Metric::NCC, ts.n, si, sii, sit, ts.st, ts.stt);
        rank = ncc::key_of(value);
      }
      top->offer(x, y, rank);
      if (map) (*map)[size_t(y) * map_w + x] = value;
    }
  }
}

// The direct method.
static Status match_direct(Matcher& m, const Image& src, Result* res) {
  const int map_w = map_width_of(src.width, m.tpl.width);
  const int map_h = map_height_of(src.height, m.tpl.height);
  res->map_width = map_w;
  res->map_height = map_h;
  if (map_needed(m.params)) {
    try {
      res->map.assign(size_t(map_w) * size_t(map_h), 0.0);
    } catch (const std::bad_alloc&) {
      return Status::runtime("out of memory for a " + std::to_string(map_w) + "x" +
                             std::to_string(map_h) + " score map");
    }
  }
  if (m.top.k() != size_t(m.params.top_k)) m.top = TopK(m.params.top_k);
  m.top.reset();
  std::vector<double>* map = map_needed(m.params) ? &res->map : nullptr;
  if (mask::active(m.params)) score_all_masked(src, m.tpl, m.params.mask, m.params.metric, &m.top, map);
  else if (m.params.metric == Metric::SSD) score_all<Metric::SSD>(src, m.tpl, &m.top, map);
  else if (m.params.metric == Metric::SAD) score_all<Metric::SAD>(src, m.tpl, &m.top, map);
  else score_all_normed(src, m.tpl, m.params.metric, &m.top, map);
  m.top.sorted_into(&res->best);
  res->method_used = Method::Direct;
  return Status::Ok();
}

Status matcher_run(Matcher* m, const Image& gray_source, Result* out) {
  PARVIS_TRY(check_source(gray_source, m->tpl.width, m->tpl.height));
  const double t0 = now_ms();
  reset_result(out);  // filled in place: a video's frames reuse its memory
  switch (m->params.method) {
    case Method::Auto:
      out->explain = "auto chose direct: seq computes the exact direct sums (FFT only on --method fft)";
      PARVIS_TRY(match_direct(*m, gray_source, out));
      break;
    case Method::Direct:
      out->explain = "direct, as asked";
      PARVIS_TRY(match_direct(*m, gray_source, out));
      break;
    case Method::FFT: {
      // SSD through FFT cross-correlation (cpu_fft.hpp) on one thread; the positions it must
      // re-score exactly are re-scored by window_score.
      out->explain = "fft, as asked";
      auto rescore = [&](std::vector<Position>* candidates) {
        for (Position& p : *candidates) p.score = window_score<Metric::SSD>(gray_source, m->tpl, p.x, p.y);
      };
      if (mask::active(m->params)) {  // cpu_mask_fft.hpp: rescore is against T & b, unmasked
        auto rescore_masked = [&](std::vector<Position>* candidates) {
          for (Position& p : *candidates)
            p.score = window_score<Metric::SSD>(gray_source, m->masked_tpl, p.x, p.y);
        };
        bool done = false;
        PARVIS_TRY(mask::fft_run(m->fft.get(), gray_source, m->runs,
                                 mask::template_sums(m->tpl, m->params.mask), m->tpl.width,
                                 m->tpl.height, m->params, serial_exec(), rescore_masked, out, &done));
        if (!done) {
          out->explain += "; the map is not exact everywhere: the direct method instead";
          std::vector<double>().swap(out->map);
          PARVIS_TRY(match_direct(*m, gray_source, out));
        }
        break;
      }
      PARVIS_TRY(fft::run(m->fft.get(), gray_source, m->params, serial_exec(), rescore, out));
      break;
    }
  }
  finish_choice(m->params, out);
  out->timings.compute_ms = now_ms() - t0;
  return Status::Ok();
}

}  // namespace parvis::match
