// Shared by every version of template matching (seq, simd, omp, CUDA host code): the
// checks that decide which inputs are errors, the order that decides the best match,
// and the top-K selection. Defined once, in src/match/match.cpp, so that every version
// refuses the same inputs with the same exit codes and breaks ties the same way.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "match/match.hpp"

namespace parvis::match {

// ---- names and parsing -------------------------------------------------------------------
// "ssd" / "sad" / "ncc" / "ccorr-normed" and "auto" / "direct" / "fft" -> the enums; anything else is a usage error.
Status parse_metric(const std::string& text, Metric* out);
Status parse_method(const std::string& text, Method* out);

// ---- validation --------------------------------------------------------------------------
// top_k >= 1; FFT only with SSD ("SAD has no FFT form"). Usage errors (exit 1).
Status check_params(const Params& params);
// One channel and not empty. Bad input (exit 2).
Status check_template(const Image& gray_template);
// One channel and at least as large as the template on both sides. Bad input (exit 2).
Status check_source(const Image& gray_source, int template_width, int template_height);

// The score map has one entry per position of the template's top-left corner.
inline int map_width_of(int source_width, int template_width) {
  return source_width - template_width + 1;
}
inline int map_height_of(int source_height, int template_height) {
  return source_height - template_height + 1;
}

// Whether a run makes Result::map: for the caller (want_map), or to pick the choice from it
// (an active selection, where the version has no other way: select.hpp's finish_choice).
inline bool map_needed(const Params& p) { return p.want_map || p.selection.active(); }

// ---- the metrics ---------------------------------------------------------------------------
// The cost of one pixel difference d = source - template (|d| <= 255): the only place
// where SSD and SAD differ. A window's score is the exact sum over its pixels (64-bit:
// at most 2^31 pixels x 255^2 < 2^47).
inline uint32_t pixel_cost_ssd(int d) { return uint32_t(d * d); }
inline uint32_t pixel_cost_sad(int d) { return uint32_t(d < 0 ? -d : d); }
inline uint32_t pixel_cost(Metric metric, int d) {
  return metric == Metric::SSD ? pixel_cost_ssd(d) : pixel_cost_sad(d);
}
// The same with the metric fixed at compile time, for inner loops (pixel_cost<Metric::SSD>(d)).
template <Metric M>
inline uint32_t pixel_cost(int d) {
  return M == Metric::SSD ? pixel_cost_ssd(d) : pixel_cost_sad(d);
}

// ---- normalized cross-correlation (ncc.hpp, DESIGN.md) ------------------------------------
// NCC and ccorr-normed: largest is best, scores are doubles (Position::score: their rank key).
inline bool is_normed(Metric m) { return m == Metric::NCC || m == Metric::CCorrNormed; }
// The value a reported score stands for: the integer SSD / SAD, or the normed double.
double score_value(Metric metric, uint64_t score);
// The rank (Position::score) of a map entry: the exact integer, or the normed key.
uint64_t rank_of(Metric metric, double map_value);

// The template's part of the sums: n = w * h, ΣT, ΣT².
struct TemplateSums {
  uint64_t n = 0, st = 0, stt = 0;
};
TemplateSums template_sums(const Image& gray_template);

// ΣI and ΣI² of any w x h window in O(1): integral images of I and I² ((W+1) x (H+1),
// u64, exact: < 2^47). Built once per source; the versions that get ΣI·T from an SSD map
// (SSD = ΣI² − 2ΣI·T + ΣT², so ΣI·T = (ΣI² + ΣT² − SSD) / 2, exactly) take the rest here.
class WindowSums {
 public:
  Status build(const Image& gray_source);  // runtime error when out of memory
  void at(int x, int y, int w, int h, uint64_t* si, uint64_t* sii) const {
    const size_t s = stride_, x0 = size_t(x), x1 = size_t(x) + size_t(w);
    const size_t y0 = size_t(y) * s, y1 = (size_t(y) + size_t(h)) * s;
    *si = i_[y1 + x1] - i_[y0 + x1] - i_[y1 + x0] + i_[y0 + x0];
    *sii = q_[y1 + x1] - q_[y0 + x1] - q_[y1 + x0] + q_[y0 + x0];
  }

 private:
  size_t stride_ = 0;
  std::vector<uint64_t> i_, q_;
};

// One row y of normed scores from the exact SSD row of a w x h template: `scores` holds the
// SSD on entry and the rank keys on return; `map_row` (when not null) gets the doubles.
void normed_row_from_ssd(Metric metric, const WindowSums& ws, const TemplateSums& ts, int w,
                         int h, int y, int map_width, uint64_t* scores, double* map_row);

// The parameters of the exact SSD run a normed match is computed from (the direct method,
// with its map), and the conversion of that run's Result (map of exact SSDs) into the normed
// result the caller asked for (`params`): best positions, and the map when asked for; its
// host time is added to the compute time. cuda-opt's normed metrics, and the CPU versions' on
// an exact FFT map.
Params ssd_params_for_normed(const Params& params);
// `exec` (cpu_exec.hpp; null: one thread, in order) runs the rows; `ws` (null: a new one)
// holds the window sums, so that a matcher reuses their memory from run to run.
struct CpuExec;
Status normed_from_ssd_map(const Image& gray_source, const TemplateSums& ts, int w, int h,
                           const Params& params, Result* res, const CpuExec* exec = nullptr,
                           WindowSums* ws = nullptr);

// ---- the best positions ----------------------------------------------------------------------
// True when `a` ranks before `b`: the smaller score; on equal scores the smaller y, then the
// smaller x. A total order on positions, so the answer does not depend on visiting order.
inline bool better(const Position& a, const Position& b) {
  if (a.score != b.score) return a.score < b.score;
  if (a.y != b.y) return a.y < b.y;
  return a.x < b.x;
}

// Keeps the K best positions offered so far (a bounded max-heap on `better`: its front is
// the worst kept one). Threads or blocks may keep one each and merge them at the end.
class TopK {
 public:
  explicit TopK(int k) : k_(k < 1 ? 1 : size_t(k)) {}
  void offer(const Position& p);
  void offer(int x, int y, uint64_t score) { offer(Position{x, y, score}); }
  void merge(const TopK& other);
  // The kept positions, best first.
  std::vector<Position> sorted() const;
  void sorted_into(std::vector<Position>* out) const;  // the same, reusing out's memory
  void reset() { heap_.clear(); }                      // empty again, keeping the memory
  size_t k() const { return k_; }

 private:
  size_t k_;
  std::vector<Position> heap_;
};

// The `k` best positions of a full row-major score map (fewer when the map is smaller).
std::vector<Position> select_best(const uint64_t* scores, int map_width, int map_height, int k);

// The exact score of the window at (x, y), on the host (scalar loops, as seq): the neighbours
// of the sub-pixel fit, the same bits whichever version found the match. For the normed
// metrics its rank key (ncc::key_of of the score).
// With a `mask` (not empty; mask.hpp) the sums are over its counted pixels.
uint64_t score_at(const Image& gray_source, const Image& gray_template, Metric metric, int x, int y,
                  const Image* mask = nullptr);

// --subpixel: a least-squares quadratic f(i, j) = a + b i + c j + d i^2 + e i j + f j^2 on the
// exact scores of the 3 x 3 positions around a reported match, and its stationary point
// (x + ox, y + oy). Closed form on that grid, with C_i / R_j the column / row sums of the
// scores: b = (C_1 - C_-1) / 6, d = (C_1 + C_-1 - 2 C_0) / 6, c and f the same with R,
// e = (s(1,1) - s(1,-1) - s(-1,1) + s(-1,-1)) / 4. Kept (fitted = true) when the quadratic is a
// minimum (d > 0, 4 d f - e^2 > 0) and |ox|, |oy| <= 1; otherwise, and where the 3 x 3
// positions are not all inside the map (a match on its edge), the integer position. The scores
// are costs: SSD / SAD (their sums exact in doubles, < 2^51), or minus the normed score (so the
// fit looks for the maximum of NCC); then one fixed sequence of double operations (shared
// code, compiled once: the same bits on every version).
struct Subpixel {
  double x = 0, y = 0;
  bool fitted = false;
};
Subpixel subpixel_fit(const Image& gray_source, const Image& gray_template, Metric metric,
                      const Position& p, const Image* mask = nullptr);

// Empties a Result for the next run, keeping the memory of its vectors and strings (a video's
// frames then allocate nothing). matcher_run fills *out in place; after an error its content
// is unspecified.
void reset_result(Result* r);

// Copies exact scores into Result::map (float64, exact: scores < 2^47 < 2^53).
void scores_to_map(const uint64_t* scores, int map_width, int map_height, std::vector<double>* map);

}  // namespace parvis::match
