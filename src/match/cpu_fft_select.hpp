// The CPU FFT method's ranks and the choice of positions from them (cpu_fft.cpp's run; the
// exactness argument: cpu_fft.hpp). Past the rounding bound a rank is known within two ends;
// select.hpp's settle then re-scores exactly every position the answer could hold.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "match/cpu_exec.hpp"
#include "match/ncc.hpp"
#include "match/select.hpp"

namespace parvis::match::fft {

// How a position's exact sums make its rank: the metric and the template's sums.
struct RankForm {
  Metric metric;
  TemplateSums t;
};

// The normed rank (ncc::key_of of ncc::score) of a window with sums ΣI = si, ΣI² = sii and the
// exact correlation ΣI·T = sit.
inline uint64_t sit_rank(const RankForm& f, uint64_t si, uint64_t sii, uint64_t sit) {
  return ncc::key_of(ncc::score(f.metric == Metric::NCC, f.t.n, si, sii, sit, f.t.st, f.t.stt));
}

// The ends of the normed rank when ΣI·T lies within e of c (ncc::key_ends).
inline void sit_rank_bounds(const RankForm& f, uint64_t si, uint64_t sii, int64_t c, uint64_t e,
                            uint64_t* lo, uint64_t* hi) {
  ncc::key_ends(f.metric == Metric::NCC, f.t.n, si, sii, c - int64_t(e), c + int64_t(e), f.t.st, f.t.stt, lo,
                hi);
}

// The candidates' exact SSDs (Position::score, from the version's re-scoring) made their normed
// ranks, with ΣI and ΣI² summed over each window of the source.
void to_ranks(const RankForm& form, const Image& src, int w, int h, const CpuExec& exec,
              std::vector<Position>* cands);

// The ranks of every position (row-major, map_w x map_h): exact in lo (hi null), or within
// [lo, hi] past the rounding bound, each SSD within err.
struct RankMap {
  uint64_t* lo;
  uint64_t* hi;
  int map_w, map_h;
  uint64_t err;
};
// Kept from run to run (a video's frames allocate nothing once warm).
struct ChoiceScratch {
  std::vector<FilteredTopK> tops;  // per worker (select_best_parallel)
  std::vector<Position> best, check;
};

// res->best and, with params.want_map, res->map (score_value of each rank) from the ranks:
//   exact      the K best (params.top_k), re-scored once more as a check of the bound; should
//              they differ, every position is re-scored and the K best taken again;
//   past it    select.hpp's settle: exact wherever params.selection or the K best could lie; the
//              map holds the exact rank there and the upper end elsewhere. With `as_is` (the
//              masked FFT, which then runs the direct method) nothing is re-scored or written.
// `note` gets one line of what was done about rounding.
void choose(const RankMap& ranks, const Params& params, bool as_is, double c_bound,
            const CpuExec& exec, RankRescoreFn rescore, ChoiceScratch* scratch, Result* res,
            char* note, size_t note_size);

}  // namespace parvis::match::fft
