// The choice of positions from the CPU FFT method's ranks: cpu_fft_select.hpp.
#include "match/cpu_fft_select.hpp"

#include <cstdio>

namespace parvis::match::fft {

void to_ranks(const RankForm& form, const Image& src, int w, int h, const CpuExec& exec,
              std::vector<Position>* cands) {
  Position* c = cands->data();
  exec.for_each(int(cands->size()), [&](int i, int) {
    uint64_t si = 0, sii = 0;
    for (int j = 0; j < h; ++j) {
      const uint8_t* r = src.row(c[i].y + j) + c[i].x;
      for (int k = 0; k < w; ++k) si += r[k], sii += uint32_t(r[k]) * r[k];
    }
    const uint64_t sit = (sii + form.t.stt - c[i].score) / 2;  // exact: SSD = ΣI² − 2ΣI·T + ΣT²
    c[i].score = sit_rank(form, si, sii, sit);
  });
}

static void write_map(const uint64_t* ranks, Metric metric, int map_w, int map_h, const CpuExec& exec,
                      Result* res) {
  res->map.resize(size_t(map_w) * size_t(map_h));
  exec.for_each(map_h, [&](int y, int) {
    const size_t o = size_t(y) * size_t(map_w);
    for (int x = 0; x < map_w; ++x) res->map[o + size_t(x)] = score_value(metric, ranks[o + size_t(x)]);
  });
}

void choose(const RankMap& r, const Params& params, bool as_is, double c_bound, const CpuExec& exec,
            RankRescoreFn rescore, ChoiceScratch* scratch, Result* res, char* note, size_t note_size) {
  const int map_w = r.map_w, map_h = r.map_h;
  const size_t n = size_t(map_w) * size_t(map_h);
  std::vector<Position>& best = scratch->best;
  res->map_width = map_w;
  res->map_height = map_h;
  if (!r.hi) {
    // Every rank is exact. Check the reported ones once more by direct re-scoring (cheap: K
    // windows); a difference would mean the bound failed, and then every position is re-scored
    // directly rather than report a wrong match.
    select_best_parallel(r.lo, map_w, map_h, params.top_k, exec, &scratch->tops, &best);
    scratch->check.assign(best.begin(), best.end());
    rescore(&scratch->check);
    bool agree = true;
    for (size_t i = 0; i < best.size(); ++i) agree = agree && scratch->check[i].score == best[i].score;
    if (agree) {
      std::snprintf(note, note_size,
                    "rounding bound on sum(I*T) %.3g < 0.5, so rounding gives every score exactly "
                    "(best re-scored directly: equal)", c_bound);
    } else {
      std::vector<Position> all;
      all.reserve(n);
      for (int y = 0; y < map_h; ++y)
        for (int x = 0; x < map_w; ++x) all.push_back(Position{x, y, 0});
      rescore(&all);
      for (const Position& q : all) r.lo[size_t(q.y) * size_t(map_w) + size_t(q.x)] = q.score;
      select_best_parallel(r.lo, map_w, map_h, params.top_k, exec, &scratch->tops, &best);
      std::snprintf(note, note_size,
                    "FFT score differed from the direct one despite the bound %.3g; every position "
                    "was re-scored directly", c_bound);
    }
    if (params.selection.active()) {
      res->best = select_ranks(r.lo, map_w, map_h, params.selection, params.top_k);
      res->chosen = true;
    } else {
      res->best.assign(best.begin(), best.end());
    }
    if (params.want_map) write_map(r.lo, params.metric, map_w, map_h, exec, res);
    return;
  }
  if (as_is) {
    res->best.clear();
    std::snprintf(note, note_size, "rounding bound on sum(I*T) %.3g >= 0.5: each SSD within %llu",
                  c_bound, static_cast<unsigned long long>(r.err));
    return;
  }
  Settled settled;
  settle(r.lo, r.hi, map_w, map_h, params.top_k, params.selection, params.want_map, rescore, &settled);
  res->best = std::move(settled.best);
  res->chosen = params.selection.active();  // settle's answer is the choice
  if (params.want_map) write_map(r.hi, params.metric, map_w, map_h, exec, res);
  std::snprintf(note, note_size,
                "rounding bound on sum(I*T) %.3g >= 0.5 (each SSD within %llu): re-scored directly "
                "the %zu positions the answer could hold (select.hpp: settle)",
                c_bound, static_cast<unsigned long long>(r.err), settled.rescored);
}

}  // namespace parvis::match::fft
