// Template matching selftest: seed 000's worked example (the 5x5 source, the 2x2 template,
// SSD(row 1, column 2) = 72), its SAD map, the tie rule, edge sizes, the property "a template
// cut from the source is found where it was cut, with score 0", and every score of a small
// random case against a naive recomputation here. Run through the linked version.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "cli/selftest.hpp"
#include "match/fft_tuning.hpp"
#include "match/match_common.hpp"
#include "match/ncc.hpp"
#include "match/ntt.hpp"
#include "match/select.hpp"

namespace parvis {

namespace {

using match::Method;
using match::Metric;
using match::Position;

// A grey image from row-major values.
Image gray_image(int w, int h, const std::vector<int>& values) {
  Image img;
  image_alloc(w, h, 1, &img);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img.at(x, y)[0] = uint8_t(values[size_t(y) * w + x]);
  return img;
}

// Deterministic pseudo-random grey image (a 32-bit LCG; the high byte).
Image noise_image(int w, int h, uint32_t seed) {
  Image img;
  image_alloc(w, h, 1, &img);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      seed = seed * 1664525u + 1013904223u;
      img.at(x, y)[0] = uint8_t(seed >> 24);
    }
  return img;
}

Status run(const Image& src, const Image& tpl, Metric metric, int top_k, bool want_map,
           match::Result* res) {
  match::Params p;
  p.metric = metric;
  p.method = Method::Direct;
  p.top_k = top_k;
  p.want_map = want_map;
  match::MatcherPtr m;
  PARVIS_TRY(match::matcher_create(tpl, p, &m));
  return match::matcher_run(m.get(), src, res);
}

std::string pos_text(const Position& p) {
  return "(x=" + std::to_string(p.x) + " y=" + std::to_string(p.y) +
         " score=" + std::to_string(p.score) + ")";
}

bool same_positions(const std::vector<Position>& got, const std::vector<Position>& want,
                    std::string* detail) {
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < got.size(); ++i)
    ok = got[i].x == want[i].x && got[i].y == want[i].y && got[i].score == want[i].score;
  if (!ok) {
    *detail = "got";
    for (const Position& p : got) *detail += " " + pos_text(p);
    *detail += ", want";
    for (const Position& p : want) *detail += " " + pos_text(p);
  }
  return ok;
}

bool same_map(const match::Result& res, int w, int h, const std::vector<double>& want,
              std::string* detail) {
  if (res.map_width != w || res.map_height != h || res.map.size() != want.size()) {
    *detail = "map is " + std::to_string(res.map_width) + "x" + std::to_string(res.map_height) +
              ", want " + std::to_string(w) + "x" + std::to_string(h);
    return false;
  }
  for (size_t i = 0; i < want.size(); ++i)
    if (res.map[i] != want[i]) {
      *detail = "map[row " + std::to_string(i / w) + ", col " + std::to_string(i % w) +
                "] = " + std::to_string(res.map[i]) + ", want " + std::to_string(want[i]);
      return false;
    }
  return true;
}

// Seed 000, "Esempio semplificato": source 5x5, template 2x2.
const std::vector<int> kSeedSource = {1, 2, 3, 2, 1,  //
                                      4, 5, 6, 5, 4,  //
                                      7, 8, 9, 8, 7,  //
                                      4, 3, 2, 3, 4,  //
                                      1, 0, 1, 2, 3};
const std::vector<int> kSeedTemplate = {6, 5,  //
                                        3, 2};

void seed_example(SelftestReport& r) {
  const Image src = gray_image(5, 5, kSeedSource), tpl = gray_image(2, 2, kSeedTemplate);
  std::string d;

  // SSD by hand for every window; the seed works out (row 1, column 2): window [6 5; 9 8],
  // (6-6)^2 + (5-5)^2 + (9-3)^2 + (8-2)^2 = 72. The minimum, 12, occurs three times:
  // (x=0, y=2), (x=3, y=2), (x=3, y=3); the tie rule picks (0, 2).
  const std::vector<double> ssd = {44, 40, 36, 40,  //
                                   56, 76, 72, 52,  //
                                   12, 20, 20, 12,  //
                                   16, 28, 24, 12};
  match::Result res;
  if (r.expect_ok("match seed 000 example SSD", run(src, tpl, Metric::SSD, 4, true, &res))) {
    r.check("match seed 000 example: SSD(row 1, col 2) = 72",
            res.map.size() == 16 && res.map[1 * 4 + 2] == 72.0,
            res.map.size() == 16 ? "got " + std::to_string(res.map[6]) : "no map");
    r.check("match seed 000 example: whole SSD map", same_map(res, 4, 4, ssd, &d), d);
    r.check("match seed 000 example: SSD top 4 (three-way tie at 12, then 16)",
            same_positions(res.best, {{0, 2, 12}, {3, 2, 12}, {3, 3, 12}, {0, 3, 16}}, &d), d);
  }

  // SAD by hand: the minimum, 6, occurs at (0,2), (1,2), (3,2), (3,3).
  const std::vector<double> sad = {12, 12, 12, 12,  //
                                   12, 14, 12, 12,  //
                                   6,  6,  8,  6,   //
                                   8,  10, 8,  6};
  if (r.expect_ok("match seed 000 example SAD", run(src, tpl, Metric::SAD, 2, true, &res))) {
    r.check("match seed 000 example: whole SAD map", same_map(res, 4, 4, sad, &d), d);
    r.check("match seed 000 example: SAD best two (tie at 6)",
            same_positions(res.best, {{0, 2, 6}, {1, 2, 6}}, &d), d);
  }
}

void edge_sizes(SelftestReport& r) {
  std::string d;
  match::Result res;

  // 1x1 template on 3x2: SSD 625 225 25 / 25 225 625; the 25 at (2,0) beats (0,1): smaller y.
  const Image src = gray_image(3, 2, {10, 20, 30, 40, 50, 60}), one = gray_image(1, 1, {35});
  if (r.expect_ok("match 1x1 template SSD", run(src, one, Metric::SSD, 1, true, &res))) {
    r.check("match 1x1 template SSD: map", same_map(res, 3, 2, {625, 225, 25, 25, 225, 625}, &d), d);
    r.check("match 1x1 template SSD: tie goes to the smaller y",
            same_positions(res.best, {{2, 0, 25}}, &d), d);
  }
  if (r.expect_ok("match 1x1 template SAD", run(src, one, Metric::SAD, 6, false, &res)))
    r.check("match 1x1 template SAD: all six ranked",
            same_positions(res.best, {{2, 0, 5}, {0, 1, 5}, {1, 0, 15}, {1, 1, 15}, {0, 0, 25}, {2, 1, 25}}, &d),
            d);

  // Template = source: one position.
  const Image noise = noise_image(7, 5, 42);
  if (r.expect_ok("match template = source", run(noise, noise, Metric::SSD, 3, true, &res)))
    r.check("match template = source: (0,0) score 0, 1x1 map, one position",
            same_positions(res.best, {{0, 0, 0}}, &d) && same_map(res, 1, 1, {0}, &d), d);

  // Flat source, flat template: every score is 0, so the order is y, then x.
  const Image flat = gray_image(4, 3, std::vector<int>(12, 7)), flat_tpl = gray_image(2, 2, {7, 7, 7, 7});
  if (r.expect_ok("match flat tie", run(flat, flat_tpl, Metric::SAD, 4, false, &res)))
    r.check("match flat: ties in row-major order",
            same_positions(res.best, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 1, 0}}, &d), d);

  // Extremes: 255 against 0 everywhere, the largest per-pixel cost.
  const Image white = gray_image(19, 3, std::vector<int>(57, 255)), black = gray_image(17, 3, std::vector<int>(51, 0));
  if (r.expect_ok("match extremes", run(white, black, Metric::SSD, 1, false, &res)))
    r.check("match extremes: 17x3 of 255^2", same_positions(res.best, {{0, 0, 51ull * 65025}}, &d), d);
}

// Errors every version must give alike (validation is shared): exit codes from DESIGN.md.
void errors(SelftestReport& r) {
  const Image small = noise_image(4, 4, 1), big = noise_image(5, 3, 2);
  match::Result res;
  Status s = run(small, big, Metric::SSD, 1, false, &res);
  if (s.message.find(" is not implemented in ") != std::string::npos) {
    r.skip("match errors", s.message);
    return;
  }
  r.check("match error: template wider than the source -> exit 2", s.code == kExitBadInput, s.message);
  match::Params p;
  p.metric = Metric::SAD;
  p.method = Method::FFT;
  match::MatcherPtr m;
  s = match::matcher_create(small, p, &m);
  r.check("match error: fft with sad -> exit 1", s.code == kExitUsage, s.message);
  p = match::Params{};
  p.top_k = 0;
  s = match::matcher_create(small, p, &m);
  r.check("match error: --top 0 -> exit 1", s.code == kExitUsage, s.message);
  Image rgb;
  image_alloc(2, 2, 3, &rgb);
  s = match::matcher_create(rgb, match::Params{}, &m);
  r.check("match error: RGB template -> exit 2", s.code == kExitBadInput, s.message);
  s = match::matcher_create(Image{}, match::Params{}, &m);
  r.check("match error: empty template -> exit 2", s.code == kExitBadInput, s.message);
}

// Every score of a random case against a naive recomputation here, for both metrics; then
// templates cut from the source (corners and middle, odd widths) are found where they were
// cut, with score 0.
void random_cases(SelftestReport& r) {
  const Image src = noise_image(61, 37, 7), tpl = noise_image(13, 7, 9);
  for (Metric metric : {Metric::SSD, Metric::SAD}) {
    const std::string name = std::string("match random 61x37 / 13x7 ") + match::metric_name(metric);
    match::Result res;
    if (!r.expect_ok(name, run(src, tpl, metric, 5, true, &res))) return;
    const int mw = 61 - 13 + 1, mh = 37 - 7 + 1;
    std::vector<uint64_t> want(size_t(mw) * mh);
    for (int y = 0; y < mh; ++y)
      for (int x = 0; x < mw; ++x) {
        uint64_t sum = 0;
        for (int j = 0; j < 7; ++j)
          for (int i = 0; i < 13; ++i) {
            const int diff = int(src.at(x + i, y + j)[0]) - int(tpl.at(i, j)[0]);
            sum += uint64_t(metric == Metric::SSD ? diff * diff : (diff < 0 ? -diff : diff));
          }
        want[size_t(y) * mw + x] = sum;
      }
    std::vector<double> want_map;
    match::scores_to_map(want.data(), mw, mh, &want_map);
    std::string d;
    r.check(name + ": whole map", same_map(res, mw, mh, want_map, &d), d);
    r.check(name + ": top 5", same_positions(res.best, match::select_best(want.data(), mw, mh, 5), &d), d);
  }

  const Rect cuts[] = {{0, 0, 1, 1}, {5, 9, 6, 4}, {44, 20, 17, 17}, {0, 30, 15, 7}, {30, 0, 31, 2}, {59, 35, 2, 2}};
  for (const Rect& c : cuts) {
    const std::string name = "match cut " + std::to_string(c.w) + "x" + std::to_string(c.h) +
                             " at (" + std::to_string(c.x) + "," + std::to_string(c.y) + ") found there";
    const Image piece = crop(src, c);
    for (Metric metric : {Metric::SSD, Metric::SAD}) {
      match::Result res;
      if (!r.expect_ok(name, run(src, piece, metric, 1, false, &res))) return;
      std::string d;
      r.check(name + std::string(" (") + match::metric_name(metric) + ")",
              same_positions(res.best, {{c.x, c.y, 0}}, &d), d);
    }
  }
}

// NCC and ccorr-normed against a recomputation here by their textbook definitions (means
// subtracted, long double), on noise with planted flat windows (a 20x12 patch of 77) and a
// row of zeros; flat windows score exactly 0, a flat template exactly 1 (ncc), the best is
// the largest score; the rank key orders like the score and reads back.
void normed_cases(SelftestReport& r) {
  Image src = noise_image(61, 37, 11);
  const Image tpl = noise_image(13, 7, 12);
  for (int y = 3; y < 15; ++y)
    for (int x = 30; x < 50; ++x) src.at(x, y)[0] = 77;
  for (int x = 0; x < 61; ++x) for (int y = 30; y < 37; ++y) src.at(x, y)[0] = 0;
  const Image flat_tpl = crop(src, Rect{31, 4, 9, 5});
  const int tw = tpl.width, th = tpl.height;
  for (Metric metric : {Metric::NCC, Metric::CCorrNormed}) {
    const bool coeff = metric == Metric::NCC;
    const std::string name = std::string("match random 61x37 / 13x7 ") + match::metric_name(metric);
    match::Result res;
    if (!r.expect_ok(name, run(src, tpl, metric, 5, true, &res))) return;
    const int mw = 61 - tw + 1, mh = 37 - th + 1;
    long double tmean = 0;
    for (int j = 0; j < th; ++j)
      for (int i = 0; i < tw; ++i) tmean += tpl.at(i, j)[0];
    tmean = coeff ? tmean / (tw * th) : 0;
    double worst = 0;
    int flat_wrong = 0, flat_windows = 0;
    for (int y = 0; y < mh; ++y)
      for (int x = 0; x < mw; ++x) {
        long double imean = 0;
        for (int j = 0; j < th; ++j)
          for (int i = 0; i < tw; ++i) imean += src.at(x + i, y + j)[0];
        imean = coeff ? imean / (tw * th) : 0;
        long double num = 0, di = 0, dt = 0;
        for (int j = 0; j < th; ++j)
          for (int i = 0; i < tw; ++i) {
            const long double a = src.at(x + i, y + j)[0] - imean, b = tpl.at(i, j)[0] - tmean;
            num += a * b, di += a * a, dt += b * b;
          }
        const double got = res.map[size_t(y) * mw + x];
        if (di == 0) {
          ++flat_windows;
          flat_wrong += got != 0.0;
          continue;
        }
        worst = std::max(worst, double(std::fabs(num / std::sqrt(di * dt) - got)));
      }
    r.check(name + ": whole map within 1e-12 of the definition", worst <= 1e-12,
            "largest difference " + std::to_string(worst));
    r.check(name + ": flat windows score 0", flat_windows > 0 && flat_wrong == 0,
            std::to_string(flat_wrong) + " of " + std::to_string(flat_windows));
    std::vector<uint64_t> keys(res.map.size());
    for (size_t i = 0; i < keys.size(); ++i) keys[i] = match::ncc::key_of(res.map[i]);
    std::string d;
    r.check(name + ": top 5 are the largest", same_positions(res.best, match::select_best(keys.data(), mw, mh, 5), &d), d);
    r.check(name + ": best first", res.best.size() == 5 &&
                                       match::score_value(metric, res.best[0].score) >=
                                           match::score_value(metric, res.best[4].score));
    if (!r.expect_ok(name, run(src, crop(src, Rect{5, 9, tw, th}), metric, 1, false, &res))) return;
    r.check(name + ": a cut is found where it was cut, score 1",
            res.best.size() == 1 && res.best[0].x == 5 && res.best[0].y == 9 &&
                match::score_value(metric, res.best[0].score) == 1.0);
  }
  match::Result res;
  if (r.expect_ok("match ncc flat template", run(src, flat_tpl, Metric::NCC, 3, true, &res))) {
    bool all_one = true;
    for (double v : res.map) all_one = all_one && v == 1.0;
    std::string d;
    r.check("match ncc flat template: 1 everywhere, ties by (y, x)",
            all_one && same_positions(res.best, {{0, 0, match::ncc::key_of(1.0)}, {1, 0, match::ncc::key_of(1.0)},
                                                 {2, 0, match::ncc::key_of(1.0)}}, &d), d);
  }
  const double v[] = {-1.0, -0.75, -1e-300, 0.0, 1e-300, 0.3, 0.99999999999999989, 1.0};
  bool ordered = true;
  for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) {
    ordered = ordered && match::ncc::score_of_key(match::ncc::key_of(v[i])) == v[i];
    if (i) ordered = ordered && match::ncc::key_of(v[i]) < match::ncc::key_of(v[i - 1]);
  }
  r.check("match ncc rank key: larger score, smaller key; reads back", ordered);
  // The 64-bit path (templates up to kNarrowMaxN pixels) gives the 128-bit path's bits: random
  // sums of windows of n pixels, n up to the limit, extreme values included.
  uint64_t state = 99;
  auto next = [&state]() { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
  int narrow_bad = 0;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t n = i < 4 ? match::ncc::kNarrowMaxN : 1 + (next() >> 11) % match::ncc::kNarrowMaxN;
    uint64_t sum[2], sq[2];
    for (int k = 0; k < 2; ++k) {  // a window of n pixels taking two values a <= b, c of them b
      const uint64_t a = (next() >> 56) % 256, b = a + (next() >> 56) % (256 - a), c = (next() >> 11) % (n + 1);
      const bool extreme = i < 4;
      sum[k] = extreme ? 255 * (n / 2) : a * (n - c) + b * c;
      sq[k] = extreme ? 255 * 255 * (n / 2) : a * a * (n - c) + b * b * c;
    }
    const uint64_t sit = (next() >> 11) % (std::min(sq[0], sq[1]) + 1);
    const double narrow = match::ncc::score(true, n, sum[0], sq[0], sit, sum[1], sq[1]);
    const double wide = match::ncc::score(true, n, sum[0], sq[0], sit, sum[1], sq[1], true);
    narrow_bad += narrow != wide;
  }
  r.check("match ncc: the 64-bit path equals the 128-bit path (20000 random sums)", narrow_bad == 0,
          std::to_string(narrow_bad) + " differ");
  // 2^31 pixels, half 0 and half 255, in window and template alike: n·ΣI·T = 255²·2^61 needs
  // the 128-bit sums (num = v_I = v_T = 255²·2^60).
  const uint64_t half = uint64_t(1) << 30;
  r.check("match ncc: exact 128-bit sums at 2^31 pixels",
          match::ncc::score(true, 2 * half, 255 * half, 255 * 255 * half, 255 * 255 * half,
                            255 * half, 255 * 255 * half) == 1.0 &&
              match::ncc::score(true, 2 * half, 255 * half, 255 * 255 * half, 0, 255 * half,
                                255 * 255 * half) == -1.0);
}

// One prepared FFT matcher run again and again (cpu_fft.cpp: the first run of a size redoes the
// template's column transforms, the second keeps them, the later ones reuse them; another size
// in between starts over): every run's whole map and top 3 equal the direct method's, without
// the fallback that re-scores every position when the FFT's best disagree with direct scores.
void fft_repeated_runs(SelftestReport& r) {
  // The CPU FFT path (cpu_fft.cpp) only: cuda-naive's FFT map is approximate by design (seed
  // 000's float transforms, re-scored where it matters) and cuda-opt's FFT method is the exact
  // NTT; their own cases hold them to seq.
  if (std::string(kVersionName).rfind("cuda-", 0) == 0) {
    r.skip("match fft repeated runs", "the CPU FFT path; the CUDA versions have their own");
    return;
  }
  const Image tpl = noise_image(23, 11, 5);
  const Image a = noise_image(97, 41, 11), b = noise_image(64, 50, 12);
  match::fft::Tuning plain = match::fft::Tuning::from_config();
  plain.bound_scale = 1;  // the bound as it is, whatever PARVIS_TUNING says (the maps must be exact)
  match::Params p;
  p.method = Method::FFT;
  p.top_k = 3;
  p.want_map = true;
  p.fft_tuning = &plain;
  match::MatcherPtr m;
  Status s = match::matcher_create(tpl, p, &m);
  if (!s.ok()) {
    r.skip("match fft repeated runs", s.message);
    return;
  }
  const Image* order[] = {&a, &a, &a, &a, &b, &a, &b, &b, &b};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; ++i) {
    const Image& src = *order[i];
    const std::string name = "match fft repeated run " + std::to_string(i + 1) + " (" +
                             std::to_string(src.width) + "x" + std::to_string(src.height) + ")";
    match::Result got, want;
    if (!r.expect_ok(name, match::matcher_run(m.get(), src, &got))) return;
    if (!r.expect_ok(name, run(src, tpl, Metric::SSD, 3, true, &want))) return;
    std::string d;
    r.check(name + ": whole map", same_map(got, want.map_width, want.map_height, want.map, &d), d);
    r.check(name + ": top 3", same_positions(got.best, want.best, &d), d);
    // The FFT's own scores, not the safety net's re-scoring of every position, made them.
    r.check(name + ": FFT scores exact", got.explain.find("despite the bound") == std::string::npos,
            got.explain);
  }
  // The path for a bound >= 0.5 (large images): forced by the tuning's bound_scale
  // (match.fft_bound_scale), the best come from the candidates re-scored directly and must still
  // be the direct method's.
  match::fft::Tuning scaled = match::fft::Tuning::from_config();
  scaled.bound_scale = 1e9;
  p.fft_tuning = &scaled;
  s = match::matcher_create(tpl, p, &m);
  if (!r.expect_ok("match fft re-scored candidates: matcher", s)) return;
  for (const Image* src : {&a, &b}) {
    const std::string name = "match fft re-scored candidates (" + std::to_string(src->width) + "x" +
                             std::to_string(src->height) + ")";
    match::Result got, want;
    const bool ok = r.expect_ok(name, match::matcher_run(m.get(), *src, &got)) &&
                    r.expect_ok(name, run(*src, tpl, Metric::SSD, 3, true, &want));
    std::string d;
    if (ok) {
      r.check(name + ": top 3", same_positions(got.best, want.best, &d), d);
      r.check(name + ": that path taken", got.explain.find("re-scored directly the") != std::string::npos,
              got.explain);
    }
  }
}

// The FFT method for every metric and every choice of positions (select.hpp; issue 34): the K
// best, the K best apart, every match under a threshold (with and without suppression) equal
// the direct method's, on noise with the template cut from it, on a smooth ramp with a flat band
// (flat windows: ncc 0) and with a flat template (ncc 1 everywhere: ties decide). Twice on the
// CPU versions: as the bound allows, and with it scaled by 1e6 (match.fft_bound_scale: every
// ΣI·T moved within the wider bound, so that only select.hpp's settle re-scoring the right
// positions gives the answer). The CUDA versions run it as they choose.
void fft_every_choice(SelftestReport& r) {
  const bool cpu = std::string(kVersionName).rfind("cuda-", 0) != 0;
  const Image noise = noise_image(97, 41, 21);
  Image ramp;
  image_alloc(83, 47, 1, &ramp);
  uint32_t seed = 5;
  for (int y = 0; y < ramp.height; ++y)
    for (int x = 0; x < ramp.width; ++x) {
      seed = seed * 1664525u + 1013904223u;
      ramp.at(x, y)[0] = uint8_t(y < 12 ? 128 : (x * 3 + y * 2 + int(seed >> 29)) % 256);
    }
  Image cut, flat = gray_image(9, 7, std::vector<int>(63, 77));
  image_alloc(23, 11, 1, &cut);
  for (int y = 0; y < 11; ++y)
    for (int x = 0; x < 23; ++x) cut.at(x, y)[0] = noise.at(30 + x, 12 + y)[0];
  struct Scene {
    const char* name;
    const Image *src, *tpl;
  } scenes[] = {{"noise", &noise, &cut}, {"ramp", &ramp, &cut}, {"flat template", &ramp, &flat}};
  match::fft::Tuning scaled = match::fft::Tuning::from_config();
  scaled.bound_scale = 1e6;
  for (const Scene& sc : scenes)
    for (Metric metric : {Metric::SSD, Metric::NCC, Metric::CCorrNormed}) {
      match::Result want;
      if (!r.expect_ok("match fft every choice: direct", run(*sc.src, *sc.tpl, metric, 1, true, &want))) return;
      std::vector<uint64_t> ranks(want.map.size());
      for (size_t i = 0; i < ranks.size(); ++i) ranks[i] = match::rank_of(metric, want.map[i]);
      const uint64_t twelfth = match::select_best(ranks.data(), want.map_width, want.map_height, 12).back().score;
      struct Choice {
        const char* name;
        int top_k;
        match::Selection sel;
      } choices[] = {{"top 3", 3, {}}, {"top 5 apart by 4", 5, {false, 0, 4}},
                     {"all under the 12th", 1, {true, twelfth, 3}}, {"all under the 12th, no suppression", 1, {true, twelfth, 0}}};
      for (const match::fft::Tuning* tuning : {static_cast<const match::fft::Tuning*>(nullptr),
                                                  static_cast<const match::fft::Tuning*>(&scaled)}) {
        if (tuning && !cpu) continue;
        // A choice twice: alone (only what it needs re-scored) and with a --map (exact wherever
        // the choice could lie).
        for (size_t pass = 0; pass < 2 * (sizeof choices / sizeof choices[0]); ++pass) {
          const Choice& c = choices[pass / 2];
          const bool with_map = pass % 2 == 1;
          if (with_map && !c.sel.active()) continue;
          const std::string name = std::string("match fft every choice: ") + sc.name + ", " +
                                   match::metric_name(metric) + ", " + c.name + (tuning ? ", bound x1e6" : "") +
                                   (with_map ? ", with its map" : "");
          match::Params p;
          p.metric = metric;
          p.method = Method::FFT;
          p.top_k = c.top_k;
          p.want_map = with_map;
          p.selection = c.sel;
          p.fft_tuning = tuning;
          match::MatcherPtr m;
          match::Result got;
          const Status s = match::matcher_create(*sc.tpl, p, &m);
          if (!s.ok() && s.message.find("FFTW") != std::string::npos) {
            r.skip(name, s.message);
            continue;
          }
          if (!r.expect_ok(name, s) || !r.expect_ok(name, match::matcher_run(m.get(), *sc.src, &got))) continue;
          // matcher_run returns the choice; the map it was asked for is exact wherever the choice
          // could lie, so the same choice comes from it.
          const std::vector<Position>& got_pos = got.best;
          std::vector<Position> want_pos;
          if (c.sel.active()) {
            want_pos = match::select_matches(want.map, want.map_width, want.map_height, metric, c.sel.all,
                                             c.sel.max_rank, c.top_k, c.sel.min_distance);
          } else {
            want_pos = match::select_best(ranks.data(), want.map_width, want.map_height, c.top_k);
          }
          if (with_map) {
            const std::vector<Position> from_map = match::select_matches(
                got.map, got.map_width, got.map_height, metric, c.sel.all, c.sel.max_rank, c.top_k, c.sel.min_distance);
            std::string d;
            r.check(name + ": from its map", same_positions(from_map, want_pos, &d), d);
          }
          std::string d;
          r.check(name, same_positions(got_pos, want_pos, &d), d);
          if (tuning)
            r.check(name + ": re-scored past the bound", got.explain.find("re-scored directly the") != std::string::npos,
                    got.explain);
        }
      }
    }
}

// select.hpp's settle on made-up ranks: exact ranks from a hash, ends up to 40 either side (some
// exact), the re-scoring a lookup that counts what it is asked. Every choice must equal
// select_sorted on the exact ranks, and a position whose lower end is above the answer's last
// rank (the K-th, or the --all threshold) must never be re-scored.
void settle_cases(SelftestReport& r) {
  const int W = 37, H = 23;
  const size_t n = size_t(W) * H;
  std::vector<uint64_t> exact(n), lo0(n), hi0(n);
  uint32_t seed = 99;
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    exact[i] = 1000 + (seed >> 24) % 200;  // many ties: the order (y, x) must decide them
    const uint64_t below = (seed >> 8) % 41, above = (seed >> 16) % 41;
    lo0[i] = exact[i] - std::min<uint64_t>(below, exact[i]);
    hi0[i] = exact[i] + ((seed & 7) == 0 ? 0 : above);
    if ((seed & 7) == 0) lo0[i] = exact[i];  // an eighth exact already
  }
  std::vector<Position> sorted;
  for (size_t i = 0; i < n; ++i) sorted.push_back(Position{int(i % W), int(i / W), exact[i]});
  std::sort(sorted.begin(), sorted.end(), match::better);
  struct Choice {
    const char* name;
    int top_k;
    match::Selection sel;
  } choices[] = {{"top 1", 1, {}},
                 {"top 7", 7, {}},
                 {"top 6 apart by 5", 6, {false, 0, 5}},
                 {"top 40 apart by 9 (the threshold grows)", 40, {false, 0, 9}},
                 {"all under 1010", 1, {true, 1010, 0}},
                 {"all under 1030 apart by 4", 1, {true, 1030, 4}},
                 {"all under 1150 apart by 6", 1, {true, 1150, 6}}};
  // --all twice: every position under the threshold made exact (a --map), and only what the
  // choice needs (choose_within_ends), which must re-score fewer when it suppresses.
  size_t full_asked = 0;
  for (int pass = 0; pass < int(sizeof choices / sizeof choices[0]) * 2; ++pass) {
    const Choice& c = choices[pass / 2];
    const bool exact_map = pass % 2 == 0;
    if (!exact_map && !c.sel.all) continue;
    const std::string name = std::string("match settle: ") + c.name + (exact_map ? "" : ", choice only");
    std::vector<uint64_t> lo = lo0, hi = hi0;
    size_t asked = 0;
    bool wasteful = false;
    const std::vector<Position> want = match::select_sorted(sorted, c.sel, c.top_k, W, H);
    const uint64_t last = c.sel.all ? c.sel.max_rank : want.empty() ? 0 : want.back().score;
    auto rescore = [&](std::vector<Position>* ps) {
      for (Position& p : *ps) {
        const size_t i = size_t(p.y) * W + size_t(p.x);
        // The first round may look past the answer's last rank by the ends' width only.
        wasteful = wasteful || (c.sel.min_distance <= 1 && lo0[i] > last + 80);
        p.score = exact[i];
        ++asked;
      }
    };
    match::Settled got;
    match::settle(lo.data(), hi.data(), W, H, c.top_k, c.sel, exact_map, rescore, &got);
    std::string d;
    r.check(name, same_positions(got.best, want, &d), d);
    r.check(name + ": re-scored " + std::to_string(asked) + " of " + std::to_string(n) + ", none far past the answer",
            !wasteful && asked == got.rescored && asked < n);
    if (exact_map) full_asked = asked;
    else if (c.sel.min_distance > 1)
      r.check(name + ": re-scored " + std::to_string(asked) + ", fewer than every match's " + std::to_string(full_asked),
              asked < full_asked);
  }
}

// The shared top-K: order-independent, merge equals one pass.
void top_k_helper(SelftestReport& r) {
  const std::vector<Position> all = {{3, 1, 5}, {0, 2, 5}, {1, 1, 5}, {2, 0, 9}, {0, 0, 1}, {4, 4, 5}};
  match::TopK a(3), b(3), one(3);
  for (size_t i = 0; i < all.size(); ++i) {
    (i % 2 ? a : b).offer(all[i]);
    one.offer(all[all.size() - 1 - i]);
  }
  a.merge(b);
  std::string d;
  const std::vector<Position> want = {{0, 0, 1}, {1, 1, 5}, {3, 1, 5}};
  r.check("match TopK: merge of two halves", same_positions(a.sorted(), want, &d), d);
  r.check("match TopK: reverse order", same_positions(one.sorted(), want, &d), d);
}

// The exact NTT of cuda-opt (match/ntt.hpp), on the host: the modulus' constants, then the
// pipeline's correlation against direct sums on noise, for sizes that exercise every radix
// (3, 5, 4, 2) and several lengths per image (odd widths, 1-pixel templates, template = source).
void ntt_correlation(SelftestReport& r) {
  using namespace match::ntt;
  r.check("match NTT: -p^-1 mod 2^32", uint32_t(kMontNegInv * kMod) == 0xffffffffu);
  r.check("match NTT: 31 generates (Z/p)*", pow_mod(kGenerator, (kMod - 1) / 2) != 1 &&
                                                pow_mod(kGenerator, (kMod - 1) / 3) != 1 &&
                                                pow_mod(kGenerator, (kMod - 1) / 5) != 1);
  r.check("match NTT: good lengths", good_length(2160) == 2560 && good_length(3840) == 3840 &&
                                         good_length(1) == 1 && good_length(7) == 8 &&
                                         good_length(1025) == 1280);
  struct Case {
    int W, H, w, h;
  };
  const Case cases[] = {{37, 23, 5, 4}, {60, 45, 16, 16}, {31, 17, 1, 1}, {45, 30, 45, 30},
                        {64, 9, 13, 9}, {11, 75, 3, 20}, {160, 97, 32, 24}};
  uint32_t seed = 7;
  for (const Case& c : cases) {
    const Image src = noise_image(c.W, c.H, seed++), tpl = noise_image(c.w, c.h, seed++);
    const std::vector<uint32_t> got =
        match::ntt::correlate_host(src.data(), c.W, c.H, tpl.data(), c.w, c.h);
    int bad = 0;
    std::string first;
    for (int y = 0; y + c.h <= c.H; ++y)
      for (int x = 0; x + c.w <= c.W; ++x) {
        uint64_t want = 0;
        for (int j = 0; j < c.h; ++j)
          for (int i = 0; i < c.w; ++i) want += uint64_t(src.at(x + i, y + j)[0]) * tpl.at(i, j)[0];
        if (got[size_t(y) * c.W + x] != want && bad++ == 0)
          first = "at (" + std::to_string(x) + "," + std::to_string(y) + "): " +
                  std::to_string(got[size_t(y) * c.W + x]) + " != " + std::to_string(want);
      }
    r.check("match NTT: correlation " + std::to_string(c.W) + "x" + std::to_string(c.H) + " / " +
                std::to_string(c.w) + "x" + std::to_string(c.h) + " equals the direct sums",
            bad == 0, first);
  }
}

}  // namespace

void selftest_match(SelftestReport& r) {
  seed_example(r);
  edge_sizes(r);
  errors(r);
  random_cases(r);
  normed_cases(r);
  fft_repeated_runs(r);
  fft_every_choice(r);
  settle_cases(r);
  top_k_helper(r);
  ntt_correlation(r);
}

}  // namespace parvis
