// Choosing the reported positions: select.hpp.
#include "match/select.hpp"

#include <algorithm>
#include <cstdlib>
#include <queue>

namespace parvis::match {

// Kept positions bucketed in cells of D x D: a position within D of a kept one (|dx| < D and
// |dy| < D) lies in the 3 x 3 cells around its own. D <= 1 suppresses nothing (and keeps no cells).
class Suppressor {
 public:
  Suppressor(int d, int map_width, int map_height)
      : d_(d), cw_(d > 1 ? map_width / d + 1 : 0), ch_(d > 1 ? map_height / d + 1 : 0),
        cells_(size_t(cw_) * size_t(ch_)) {}
  bool near(int x, int y) const {
    if (cells_.empty()) return false;
    const int cx = x / d_, cy = y / d_;
    for (int yy = std::max(0, cy - 1); yy <= std::min(ch_ - 1, cy + 1); ++yy)
      for (int xx = std::max(0, cx - 1); xx <= std::min(cw_ - 1, cx + 1); ++xx)
        for (const Position& q : cells_[size_t(yy) * size_t(cw_) + size_t(xx)])
          if (std::abs(x - q.x) < d_ && std::abs(y - q.y) < d_) return true;
    return false;
  }
  void add(const Position& p) {
    if (!cells_.empty()) cells_[size_t(p.y / d_) * size_t(cw_) + size_t(p.x / d_)].push_back(p);
  }

 private:
  int d_, cw_, ch_;
  std::vector<std::vector<Position>> cells_;
};

std::vector<Position> select_sorted(const std::vector<Position>& sorted, const Selection& sel,
                                    int top_k, int map_width, int map_height) {
  size_t limit = size_t(std::max(top_k, 1));
  if (sel.all) {  // the matches: a prefix of the order
    limit = 0;
    while (limit < sorted.size() && sorted[limit].score <= sel.max_rank) ++limit;
  }
  if (sel.min_distance <= 1)
    return std::vector<Position>(sorted.begin(), sorted.begin() + std::ptrdiff_t(std::min(limit, sorted.size())));
  Suppressor kept_near(sel.min_distance, map_width, map_height);
  std::vector<Position> kept;
  for (size_t i = 0; i < sorted.size() && (sel.all ? i < limit : kept.size() < limit); ++i) {
    const Position& p = sorted[i];
    if (kept_near.near(p.x, p.y)) continue;
    kept_near.add(p);
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

void choose_within_ends(std::vector<Ranged>* cands, const Selection& sel, int map_width,
                        int map_height, RankRescoreFn rescore, Settled* out) {
  std::vector<Ranged>& c = *cands;
  out->best.clear();
  out->rescored = 0;
  std::vector<Position> batch;
  std::vector<uint32_t> batch_of;  // the candidate each batch entry stands for
  auto rescore_batch = [&] {
    if (batch.empty()) return;
    rescore(&batch);
    out->rescored += batch.size();
    for (size_t j = 0; j < batch.size(); ++j) c[batch_of[j]].lo = c[batch_of[j]].hi = batch[j].score;
    batch.clear();
    batch_of.clear();
  };
  auto open_into_batch = [&](uint32_t i) {
    if (c[i].lo == c[i].hi) return;
    batch.push_back(Position{c[i].x, c[i].y, 0});
    batch_of.push_back(i);
  };
  // The order (lo, y, x): the candidates sorted once; a re-scored one (its lo can only grow)
  // goes back through a small heap beside the sorted run.
  auto before = [&](uint32_t a, uint32_t b) {
    if (c[a].lo != c[b].lo) return c[a].lo < c[b].lo;
    if (c[a].y != c[b].y) return c[a].y < c[b].y;
    return c[a].x < c[b].x;
  };
  std::vector<uint32_t> order;
  order.reserve(c.size());
  for (uint32_t i = 0; i < uint32_t(c.size()); ++i)
    if (c[i].lo <= sel.max_rank) order.push_back(i);
  std::sort(order.begin(), order.end(), before);
  auto after = [&](uint32_t a, uint32_t b) { return before(b, a); };
  std::priority_queue<uint32_t, std::vector<uint32_t>, decltype(after)> back(after);
  {  // 1. What the lower ends, taken as exact, would choose, in one batch: with narrow ends, the
     //    answer itself.
    Suppressor guess_near(sel.min_distance, map_width, map_height);
    for (uint32_t i : order) {
      if (guess_near.near(c[i].x, c[i].y)) continue;
      guess_near.add(Position{c[i].x, c[i].y, 0});
      open_into_batch(i);
    }
    // The re-scored ones moved up (a lower end only grows): out of the sorted run, into the heap.
    std::vector<char> moved(batch_of.empty() ? 0 : c.size(), 0);
    for (uint32_t i : batch_of) moved[i] = 1;
    const std::vector<uint32_t> moved_ones = batch_of;
    rescore_batch();
    if (!moved_ones.empty()) {
      order.erase(std::remove_if(order.begin(), order.end(), [&](uint32_t i) { return moved[i] != 0; }),
                  order.end());
      for (uint32_t i : moved_ones) back.push(i);
    }
  }
  // 2. The exact order: the front candidate, once exact, ranks before every other one (each
  //    lies at or above its lower end), so it is chosen unless a kept one lies near it; one still
  //    open is re-scored with the next ones in line (batches that double). The front is the
  //    sorted run's or the heap's, whichever ranks first.
  size_t next = 0;  // the sorted run's front
  auto front = [&](uint32_t* i) {
    const bool run = next < order.size(), heap = !back.empty();
    if (!run && !heap) return false;
    *i = !heap || (run && before(order[next], back.top())) ? order[next] : back.top();
    return true;
  };
  auto pop = [&](uint32_t i) {
    if (!back.empty() && back.top() == i) back.pop();
    else ++next;
  };
  Suppressor kept_near(sel.min_distance, map_width, map_height);
  std::vector<uint32_t> popped;
  size_t grow = 1;
  uint32_t i = 0;
  while (front(&i)) {
    const Ranged& r = c[i];
    if (r.lo > sel.max_rank) break;  // every one left ranks above the threshold
    if (kept_near.near(r.x, r.y)) {  // a better one was kept nearby
      pop(i);
      continue;
    }
    if (r.lo == r.hi) {
      const Position p{r.x, r.y, r.lo};
      pop(i);
      out->best.push_back(p);
      kept_near.add(p);
      continue;
    }
    uint32_t j = 0;
    while (batch.size() < grow && front(&j)) {
      pop(j);
      if (kept_near.near(c[j].x, c[j].y)) continue;
      popped.push_back(j);
      open_into_batch(j);
    }
    rescore_batch();
    for (uint32_t k : popped) back.push(k);
    popped.clear();
    grow = std::min(grow * 2, size_t(1) << 16);
  }
}

void settle(uint64_t* lo, uint64_t* hi, int map_width, int map_height, int top_k,
            const Selection& sel, bool exact_map, RankRescoreFn rescore, Settled* out) {
  const size_t n = size_t(map_width) * size_t(map_height);
  const size_t k = size_t(std::max(top_k, 1));
  out->best.clear();
  out->rescored = 0;
  if (n == 0) return;
  if (sel.all && !exact_map) {
    std::vector<Ranged> cands;
    for (size_t i = 0; i < n; ++i)
      if (lo[i] <= sel.max_rank)
        cands.push_back(Ranged{int(i % size_t(map_width)), int(i / size_t(map_width)), lo[i], hi[i]});
    choose_within_ends(&cands, sel, map_width, map_height, rescore, out);
    return;
  }
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
