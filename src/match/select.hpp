// Choosing the reported positions (DESIGN.md, "Every match and suppression"): from an exact rank
// map, or from a map known only within bounds (a double FFT past its rounding bound), made exact
// wherever the choice could look. Shared by every version, host code.
#pragma once
#include <cstdint>
#include <vector>

#include "common/function_ref.hpp"
#include "match/match_common.hpp"

namespace parvis::match {

// The choice over positions already in the order of `better`, with exact ranks: with sel.all
// those ranking at most sel.max_rank, otherwise the first top_k kept; with sel.min_distance > 1
// a position is dropped when a kept one lies closer than D in both x and y.
std::vector<Position> select_sorted(const std::vector<Position>& sorted, const Selection& sel,
                                    int top_k, int map_width, int map_height);

// Every match, or the K best, at least `min_distance` apart (--all / --top with --min-distance).
// From a score map (Result::map: exact wherever a chosen position could lie, select.hpp's settle), positions are
// taken in the order of `better` (score, then y, then x) — with `all`, only those scoring at
// most `max_score` — and a position is kept unless a kept one lies closer than min_distance in
// both x and y (|dx| < D and |dy| < D): the better one always wins, so ties go to the smaller
// y, then x. Without `all`, stops after k kept. min_distance <= 1 suppresses nothing.
// `max_rank` is the threshold as a rank (rank_of: for NCC the key of --min-score).
std::vector<Position> select_matches(const std::vector<double>& map, int map_width,
                                     int map_height, Metric metric, bool all, uint64_t max_rank,
                                     int k, int min_distance);

// The same choice from exact ranks (row-major, map_width x map_height): sel with top_k.
std::vector<Position> select_ranks(const uint64_t* ranks, int map_width, int map_height,
                                   const Selection& sel, int top_k);

// res->best from exact ranks: an active params.selection's choice (then Result::chosen), or the
// params.top_k best.
void best_from_ranks(const uint64_t* ranks, int map_width, int map_height, const Params& params,
                     Result* res);

// The end of every matcher_run: with an active params.selection and a version that has not
// chosen on its own (Result::chosen), the choice from res->map (select_matches), made for it
// (map_needed); then the map is emptied unless the caller asked for it (want_map).
void finish_choice(const Params& params, Result* res);

// Exact ranks (Position::score) for the candidate positions, filled in place.
using RankRescoreFn = FunctionRef<void(std::vector<Position>* candidates)>;

struct Settled {
  std::vector<Position> best;
  size_t rescored = 0;
};

// A position whose rank is known within two ends: lo <= the exact rank <= hi (lo == hi: exact).
struct Ranged {
  int x = 0, y = 0;
  uint64_t lo = 0, hi = 0;
};

// --all's choice (sel.all) among candidates known within ends, where every position whose rank
// could be at most sel.max_rank is a candidate. Re-scores only what the choice needs: the chosen
// positions and those whose order against them the ends leave open. First, in one batch, what
// the ends' midpoints would choose; then, in the exact order (lo, y, x), any candidate still open
// when it comes first, with the next ones in line (batches that double). out->best gets the
// choice with exact ranks; *cands is updated in place (exact where re-scored).
void choose_within_ends(std::vector<Ranged>* cands, const Selection& sel, int map_width,
                        int map_height, RankRescoreFn rescore, Settled* out);

// A rank map known within bounds: lo[i] <= the exact rank of position i (row-major) <= hi[i];
// lo[i] == hi[i] means exact. With sel.all and no `exact_map`, choose_within_ends on every
// position whose lower end is at most the threshold. Otherwise re-scores, through `rescore`,
// every position whose exact rank could be at most a threshold T, and writes each exact rank
// into lo and hi:
//   sel.all              T = sel.max_rank (every match is then known exactly);
//   otherwise            T = the m-th smallest hi, m = top_k (at least top_k positions rank at
//                        most T); with sel.min_distance > 1, m grows fourfold until the choice
//                        among the positions ranking at most T keeps top_k of them (or T covers
//                        every position).
// Every position ranking at most T is then exact in hi, and every other one has hi > T, so that
// select_matches on hi (or the K smallest of hi) gives exactly the answer of the exact map (for
// a --map: `exact_map`). `best` gets that answer; `rescored` the positions re-scored.
void settle(uint64_t* lo, uint64_t* hi, int map_width, int map_height, int top_k,
            const Selection& sel, bool exact_map, RankRescoreFn rescore, Settled* out);

}  // namespace parvis::match
