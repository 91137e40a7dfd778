// Template matching, the part shared by every version: names, validation, top-K selection.
// No version-specific code here (this file is linked into CPU and CUDA versions alike).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <new>
#include <string>

#include "match/cpu_exec.hpp"
#include "match/mask.hpp"
#include "match/match_common.hpp"
#include "match/ncc.hpp"

namespace parvis::match {

const char* metric_name(Metric m) {
  switch (m) {
    case Metric::SSD: return "ssd";
    case Metric::SAD: return "sad";
    case Metric::NCC: return "ncc";
    case Metric::CCorrNormed: return "ccorr-normed";
  }
  return "?";
}

const char* method_name(Method m) {
  switch (m) {
    case Method::Auto: return "auto";
    case Method::Direct: return "direct";
    case Method::FFT: return "fft";
  }
  return "?";
}

Status parse_metric(const std::string& text, Metric* out) {
  if (text == "ssd") *out = Metric::SSD;
  else if (text == "sad") *out = Metric::SAD;
  else if (text == "ncc") *out = Metric::NCC;
  else if (text == "ccorr-normed") *out = Metric::CCorrNormed;
  else return Status::usage("unknown metric '" + text + "' (known: ssd, sad, ncc, ccorr-normed)");
  return Status::Ok();
}

Status parse_method(const std::string& text, Method* out) {
  if (text == "auto") *out = Method::Auto;
  else if (text == "direct") *out = Method::Direct;
  else if (text == "fft") *out = Method::FFT;
  else return Status::usage("unknown method '" + text + "' (known: auto, direct, fft)");
  return Status::Ok();
}

Status check_params(const Params& params) {
  if (params.top_k < 1)
    return Status::usage("--top must be at least 1 (got " + std::to_string(params.top_k) + ")");
  // The FFT method rests on SSD = sum I^2 - 2 sum I*T + sum T^2; |I - T| has no such expansion.
  if (params.method == Method::FFT && params.metric == Metric::SAD)
    return Status::usage("SAD has no FFT form: use --method direct (or auto) with --metric sad");
  return Status::Ok();
}

static std::string size_text(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

Status check_template(const Image& gray_template) {
  if (gray_template.empty()) return Status::bad_input("the template is empty");
  if (gray_template.channels != 1)
    return Status::bad_input("the template must be grey (1 channel), it has " +
                             std::to_string(gray_template.channels));
  return Status::Ok();
}

Status check_source(const Image& gray_source, int template_width, int template_height) {
  if (gray_source.empty()) return Status::bad_input("the source image is empty");
  if (gray_source.channels != 1)
    return Status::bad_input("the source must be grey (1 channel), it has " +
                             std::to_string(gray_source.channels));
  if (template_width > gray_source.width || template_height > gray_source.height)
    return Status::bad_input("the template (" + size_text(template_width, template_height) +
                             ") is larger than the source (" +
                             size_text(gray_source.width, gray_source.height) + ")");
  return Status::Ok();
}

// The defaults of every version that makes no grey itself and starts nothing ahead (all but
// cuda-opt, which defines its own in cuda/match/opt.cu: a strong definition there replaces
// these weak ones at link time, so that the version files without it need no copy of them).
__attribute__((weak)) Status matcher_gray_on_device(Matcher*, int, int, bool* on_device) {
  *on_device = false;
  return Status::Ok();
}
__attribute__((weak)) Status matcher_run_rgb(Matcher* matcher, const Image& rgb_source, Result* out) {
  return matcher_run(matcher, to_gray(rgb_source), out);
}

// The heap is ordered so that its front is the worst kept position: `better` as "less".
void TopK::offer(const Position& p) {
  if (heap_.size() < k_) {
    heap_.push_back(p);
    std::push_heap(heap_.begin(), heap_.end(), better);
  } else if (better(p, heap_.front())) {
    std::pop_heap(heap_.begin(), heap_.end(), better);
    heap_.back() = p;
    std::push_heap(heap_.begin(), heap_.end(), better);
  }
}

void TopK::merge(const TopK& other) {
  for (const Position& p : other.heap_) offer(p);
}

std::vector<Position> TopK::sorted() const {
  std::vector<Position> out;
  sorted_into(&out);
  return out;
}

void TopK::sorted_into(std::vector<Position>* out) const {
  out->assign(heap_.begin(), heap_.end());
  std::sort(out->begin(), out->end(), better);
}

void reset_result(Result* r) {
  r->best.clear();
  r->map_width = r->map_height = 0;
  r->map.clear();
  r->chosen = false;
  r->method_used = Method::Direct;
  r->explain.clear();
  const Timings fresh;
  r->timings.upload_ms = fresh.upload_ms;
  r->timings.compute_ms = fresh.compute_ms;
  r->timings.download_ms = fresh.download_ms;
  r->timings.upload_bytes = fresh.upload_bytes;
  r->timings.upload_how.clear();
  r->timings.gray_host_ms = fresh.gray_host_ms;
  r->timings.stages.clear();
}

std::vector<Position> select_best(const uint64_t* scores, int map_width, int map_height, int k) {
  TopK top(k);
  for (int y = 0; y < map_height; ++y)
    for (int x = 0; x < map_width; ++x) top.offer(x, y, scores[size_t(y) * map_width + x]);
  return top.sorted();
}

uint64_t score_at(const Image& gray_source, const Image& gray_template, Metric metric, int x,
                  int y, const Image* mask) {
  if (mask && !mask->empty()) return mask::rank_at(gray_source, gray_template, *mask, metric, x, y);
  if (is_normed(metric)) {  // the rank key of the normed score, from the exact sums
    const TemplateSums ts = template_sums(gray_template);
    uint64_t si = 0, sii = 0, sit = 0;
    for (int j = 0; j < gray_template.height; ++j) {
      const uint8_t* s = gray_source.row(y + j) + x;
      const uint8_t* t = gray_template.row(j);
      for (int i = 0; i < gray_template.width; ++i)
        si += s[i], sii += uint32_t(s[i]) * s[i], sit += uint32_t(s[i]) * t[i];
    }
    return ncc::key_of(ncc::score(metric == Metric::NCC, ts.n, si, sii, sit, ts.st, ts.stt));
  }
  uint64_t sum = 0;
  for (int j = 0; j < gray_template.height; ++j) {
    const uint8_t* s = gray_source.row(y + j) + x;
    const uint8_t* t = gray_template.row(j);
    for (int i = 0; i < gray_template.width; ++i) sum += pixel_cost(metric, int(s[i]) - int(t[i]));
  }
  return sum;
}

Subpixel subpixel_fit(const Image& gray_source, const Image& gray_template, Metric metric,
                      const Position& p, const Image* mask) {
  Subpixel out;
  out.x = p.x;
  out.y = p.y;
  const int map_w = map_width_of(gray_source.width, gray_template.width);
  const int map_h = map_height_of(gray_source.height, gray_template.height);
  if (p.x < 1 || p.y < 1 || p.x + 1 >= map_w || p.y + 1 >= map_h) return out;
  // s[j + 1][i + 1] = the score at (x + i, y + j), as a cost to minimise: the integer SSD / SAD
  // (< 2^47), or minus the normed score. In doubles: for the integer metrics every sum below
  // is an exact integer (< 2^51), so these are the exact 6 b, 6 d, 6 c, 6 f, 4 e; for the normed
  // ones a fixed sequence of roundings (shared code: the same bits on every version).
  double s[3][3];
  for (int j = -1; j <= 1; ++j)
    for (int i = -1; i <= 1; ++i) {
      const uint64_t v = score_at(gray_source, gray_template, metric, p.x + i, p.y + j, mask);
      s[j + 1][i + 1] = is_normed(metric) ? -ncc::score_of_key(v) : double(v);
    }
  double col[3] = {0, 0, 0}, row[3] = {0, 0, 0};
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) col[i] += s[j][i], row[j] += s[j][i];
  const double b6 = col[2] - col[0], d6 = (col[2] + col[0]) - 2 * col[1];
  const double c6 = row[2] - row[0], f6 = (row[2] + row[0]) - 2 * row[1];
  const double e4 = ((s[2][2] - s[0][2]) - s[2][0]) + s[0][0];
  const double b = b6 / 6.0, d = d6 / 6.0, c = c6 / 6.0, f = f6 / 6.0, e = e4 / 4.0;
  // Gradient zero: [2d e; e 2f] (ox, oy) = -(b, c).
  const double two_d = 2.0 * d, two_f = 2.0 * f;
  const double det = two_d * two_f - e * e;
  if (!(d > 0.0) || !(det > 0.0)) return out;
  const double ox = (e * c - two_f * b) / det;
  const double oy = (e * b - two_d * c) / det;
  if (!(std::fabs(ox) <= 1.0) || !(std::fabs(oy) <= 1.0)) return out;
  out.x = double(p.x) + ox;
  out.y = double(p.y) + oy;
  out.fitted = true;
  return out;
}

double score_value(Metric metric, uint64_t score) {
  return is_normed(metric) ? ncc::score_of_key(score) : double(score);
}

uint64_t rank_of(Metric metric, double map_value) {
  return is_normed(metric) ? ncc::key_of(map_value) : uint64_t(map_value);  // exact integers
}

TemplateSums template_sums(const Image& gray_template) {
  TemplateSums t;
  t.n = uint64_t(gray_template.width) * uint64_t(gray_template.height);
  for (int j = 0; j < gray_template.height; ++j) {
    const uint8_t* r = gray_template.row(j);
    for (int i = 0; i < gray_template.width; ++i) t.st += r[i], t.stt += uint64_t(r[i]) * r[i];
  }
  return t;
}

Status WindowSums::build(const Image& src) {
  stride_ = size_t(src.width) + 1;
  const size_t n = stride_ * (size_t(src.height) + 1);
  try {  // row 0 and column 0 are the zero border; the rest is written below
    i_.resize(n);
    q_.resize(n);
    std::fill(i_.begin(), i_.begin() + std::ptrdiff_t(stride_), uint64_t(0));
    std::fill(q_.begin(), q_.begin() + std::ptrdiff_t(stride_), uint64_t(0));
  } catch (const std::bad_alloc&) {
    return Status::runtime("out of memory for the window sums of a " + size_text(src.width, src.height) +
                           " source");
  }
  for (int y = 0; y < src.height; ++y) {
    const uint8_t* r = src.row(y);
    uint64_t row_i = 0, row_q = 0;
    const size_t above = size_t(y) * stride_, here = above + stride_;
    i_[here] = q_[here] = 0;
    for (int x = 0; x < src.width; ++x) {
      row_i += r[x];
      row_q += uint64_t(r[x]) * r[x];
      i_[here + size_t(x) + 1] = i_[above + size_t(x) + 1] + row_i;
      q_[here + size_t(x) + 1] = q_[above + size_t(x) + 1] + row_q;
    }
  }
  return Status::Ok();
}

void normed_row_from_ssd(Metric metric, const WindowSums& ws, const TemplateSums& ts, int w,
                         int h, int y, int map_width, uint64_t* scores, double* map_row) {
  const bool coeff = metric == Metric::NCC;
  for (int x = 0; x < map_width; ++x) {
    uint64_t si, sii;
    ws.at(x, y, w, h, &si, &sii);
    const uint64_t sit = (sii + ts.stt - scores[x]) / 2;  // exact: SSD = ΣI² − 2ΣI·T + ΣT²
    const double r = ncc::score(coeff, ts.n, si, sii, sit, ts.st, ts.stt);
    scores[x] = ncc::key_of(r);
    if (map_row) map_row[x] = r;
  }
}

Params ssd_params_for_normed(const Params& params) {
  Params p = params;
  p.metric = Metric::SSD;
  p.method = Method::Direct;
  p.want_map = true;
  p.top_k = 1;
  p.selection = Selection();  // the caller chooses from the normed result
  return p;
}

Status normed_from_ssd_map(const Image& gray_source, const TemplateSums& ts, int w, int h,
                           const Params& params, Result* res, const CpuExec* exec_or_null,
                           WindowSums* ws_or_null) {
  const CpuExec exec = exec_or_null ? *exec_or_null : serial_exec();
  const double t0 = now_ms();
  const int map_w = res->map_width, map_h = res->map_height;
  if (res->map.size() != size_t(map_w) * size_t(map_h))
    return Status::runtime("internal: the normed metric needs the exact SSD map");
  WindowSums local;
  WindowSums& ws = ws_or_null ? *ws_or_null : local;
  PARVIS_TRY(ws.build(gray_source));
  // Rows over the workers, one row buffer and one top-K each (merged: the order is total).
  std::vector<std::vector<uint64_t>> rows(size_t(exec.workers), std::vector<uint64_t>(size_t(map_w)));
  std::vector<FilteredTopK> tops(size_t(exec.workers), FilteredTopK(params.top_k));
  exec.for_each(map_h, [&](int y, int worker) {
    double* map_row = res->map.data() + size_t(y) * size_t(map_w);
    uint64_t* row = rows[size_t(worker)].data();
    for (int x = 0; x < map_w; ++x) row[x] = uint64_t(map_row[x]);  // exact SSD
    normed_row_from_ssd(params.metric, ws, ts, w, h, y, map_w, row, map_row);
    tops[size_t(worker)].offer_row(row, map_w, y);
  });
  for (size_t i = 1; i < tops.size(); ++i) tops[0].top().merge(tops[i].top());
  res->best = tops[0].top().sorted();
  if (!map_needed(params)) std::vector<double>().swap(res->map);
  res->timings.compute_ms += now_ms() - t0;
  res->explain = std::string(metric_name(params.metric)) +
                 ": ΣI·T from an exact SSD map, window sums and the normed expression on the "
                 "host (" + res->explain + ")";
  return Status::Ok();
}

void scores_to_map(const uint64_t* scores, int map_width, int map_height,
                   std::vector<double>* map) {
  const size_t n = size_t(map_width) * size_t(map_height);
  map->resize(n);
  for (size_t i = 0; i < n; ++i) (*map)[i] = double(scores[i]);
}

}  // namespace parvis::match
