// Choosing the reported positions: select.hpp.
#include "match/select.hpp"

#include <algorithm>
#include <cstdlib>

namespace parvis::match {

std::vector<Position> select_sorted(const std::vector<Position>& sorted, const Selection& sel,
                                    int top_k, int map_width, int map_height) {
  size_t limit = size_t(std::max(top_k, 1));
  if (sel.all) {  // the matches: a prefix of the order
    limit = 0;
    while (limit < sorted.size() && sorted[limit].score <= sel.max_rank) ++limit;
  }
  if (sel.min_distance <= 1)
    return std::vector<Position>(sorted.begin(), sorted.begin() + std::ptrdiff_t(std::min(limit, sorted.size())));
  // Kept positions bucketed in cells of D x D: a conflict lies in the 3 x 3 cells around.
  const int d = sel.min_distance;
  const int cw = map_width / d + 1, ch = map_height / d + 1;
  std::vector<std::vector<int>> cells(size_t(cw) * size_t(ch));
  std::vector<Position> kept;
  for (size_t i = 0; i < sorted.size() && (sel.all ? i < limit : kept.size() < limit); ++i) {
    const Position& p = sorted[i];
    const int cx = p.x / d, cy = p.y / d;
    bool clear = true;
    for (int yy = std::max(0, cy - 1); clear && yy <= std::min(ch - 1, cy + 1); ++yy)
      for (int xx = std::max(0, cx - 1); clear && xx <= std::min(cw - 1, cx + 1); ++xx)
        for (int k : cells[size_t(yy) * size_t(cw) + size_t(xx)]) {
          const Position& q = kept[size_t(k)];
          if (std::abs(p.x - q.x) < d && std::abs(p.y - q.y) < d) {
            clear = false;
            break;
          }
        }
    if (!clear) continue;
    cells[size_t(cy) * size_t(cw) + size_t(cx)].push_back(int(kept.size()));
    kept.push_back(p);
  }
  return kept;
}

// The choice from rank_at(i) for every position i (row-major): the candidates in the order of
// `better`, then select_sorted.
template <typename RankAt>
static std::vector<Position> select_by(RankAt rank_at, int map_width, int map_height,
                                       const Selection& sel, int top_k) {
  std::vector<Position> cand;
  for (int y = 0; y < map_height; ++y)
    for (int x = 0; x < map_width; ++x) {
      const uint64_t s = rank_at(size_t(y) * size_t(map_width) + size_t(x));
      if (!sel.all || s <= sel.max_rank) cand.push_back(Position{x, y, s});
    }
  std::sort(cand.begin(), cand.end(), better);
  return select_sorted(cand, sel, top_k, map_width, map_height);
}

std::vector<Position> select_matches(const std::vector<double>& map, int map_width,
                                     int map_height, Metric metric, bool all, uint64_t max_rank,
                                     int k, int min_distance) {
  Selection sel;
  sel.all = all;
  sel.max_rank = max_rank;
  sel.min_distance = min_distance;
  return select_by([&](size_t i) { return rank_of(metric, map[i]); }, map_width, map_height, sel, k);
}

std::vector<Position> select_ranks(const uint64_t* ranks, int map_width, int map_height,
                                   const Selection& sel, int top_k) {
  return select_by([&](size_t i) { return ranks[i]; }, map_width, map_height, sel, top_k);
}

void best_from_ranks(const uint64_t* ranks, int map_width, int map_height, const Params& params,
                     Result* res) {
  res->chosen = params.selection.active();
  res->best = res->chosen ? select_ranks(ranks, map_width, map_height, params.selection, params.top_k)
                          : select_best(ranks, map_width, map_height, params.top_k);
}

void finish_choice(const Params& params, Result* res) {
  const Selection& sel = params.selection;
  if (sel.active() && !res->chosen) {
    res->best = select_matches(res->map, res->map_width, res->map_height, params.metric, sel.all,
                               sel.max_rank, params.top_k, sel.min_distance);
    res->chosen = true;
  }
  if (!params.want_map) res->map.clear();  // the memory stays for the next run
}

void settle(uint64_t* lo, uint64_t* hi, int map_width, int map_height, int top_k,
            const Selection& sel, RankRescoreFn rescore, Settled* out) {
  const size_t n = size_t(map_width) * size_t(map_height);
  const size_t k = size_t(std::max(top_k, 1));
  out->best.clear();
  out->rescored = 0;
  if (n == 0) return;
  // The m-th smallest hi (m >= n: every position): a bounded max-heap in one pass for small m
  // (one comparison for most positions), nth_element on a copy otherwise.
  std::vector<uint64_t> part;
  auto threshold = [&](size_t m) {
    if (m >= n) return UINT64_MAX;
    if (m <= 256) {
      part.assign(hi, hi + m);
      std::make_heap(part.begin(), part.end());
      for (size_t i = m; i < n; ++i)
        if (hi[i] < part.front()) {
          std::pop_heap(part.begin(), part.end());
          part.back() = hi[i];
          std::push_heap(part.begin(), part.end());
        }
      return part.front();
    }
    part.assign(hi, hi + n);
    std::nth_element(part.begin(), part.begin() + std::ptrdiff_t(m - 1), part.end());
    return part[m - 1];
  };
  size_t m = k;
  uint64_t t = sel.all ? sel.max_rank : threshold(m);
  std::vector<Position> cand, sorted;
  for (;;) {
    // Every position that could rank at most t: the exact ones as they are, the others to be
    // re-scored.
    cand.clear();
    sorted.clear();
    for (size_t i = 0; i < n; ++i) {
      if (lo[i] > t) continue;
      const Position p{int(i % size_t(map_width)), int(i / size_t(map_width)), hi[i]};
      (lo[i] == hi[i] ? sorted : cand).push_back(p);
    }
    if (!cand.empty()) rescore(&cand);
    out->rescored += cand.size();
    for (const Position& p : cand) {
      const size_t i = size_t(p.y) * size_t(map_width) + size_t(p.x);
      lo[i] = hi[i] = p.score;
      if (p.score <= t) sorted.push_back(p);
    }
    // Every position ranking at most t is exact now, and in `sorted` (no other is).
    std::sort(sorted.begin(), sorted.end(), better);
    out->best = select_sorted(sorted, sel, top_k, map_width, map_height);
    if (sel.all || out->best.size() >= k || t == UINT64_MAX) return;
    m *= 4;  // too few kept apart (--min-distance): look further down
    t = threshold(m);
  }
}

}  // namespace parvis::match
