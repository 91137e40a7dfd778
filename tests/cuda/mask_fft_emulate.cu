// Runs cuda-opt's masked FFT / NTT arithmetic (cuda/match/opt_mask_fft.cuh: what the threads of
// opt_mask_fft.cu's mask_scores and mask_rescore compute) on the host, position by position,
// against seq's definition (src/match/mask.hpp: mask::rank_at), on random sources, templates and
// masks of odd sizes (holes, ring, one pixel, full, one row), flat windows, SSD / NCC /
// ccorr-normed:
//   - the run sums over the counted and the ignored runs, or the counted runs and the whole
//     rows (alternate positions);
//   - exact_word from the exact SSD' of T & b (the NTT's map) has seq's rank;
//   - rank_bounds from SSD' moved by up to ±e (cuFFT's error) brackets seq's rank;
//   - word_from_masked_ssd after the re-scoring's row-by-row sum of cuda_mask::window has seq's
//     rank.
// The row prefix sums are mask_fft::prefix_row (the words mask_row_prefix makes on the device).
// Needs nvcc but no GPU. Exit 0 when every check holds. Build and run with
//   nvcc -std=c++17 -O2 -Iinclude -Isrc -Ibmp -Icuda tests/cuda/mask_fft_emulate.cu src/match/mask.cpp \
//        src/match/match.cpp src/common/image.cpp src/cli/cli.cpp src/common/parse.cpp src/common/timing.cpp tests/cuda/emulate_link.cpp \
//        -o /tmp/mfe && /tmp/mfe
#include <cstdio>
#include <vector>

#include "match/opt_mask_fft.cuh"
#include "mask_emulate_cases.hpp"

using namespace parvis;
using namespace parvis::match;
using parvis::emulate::next;
using parvis::emulate::random_image;
namespace mf = parvis::match::opt::mask_fft;

namespace {

// 0 holes, 1 one pixel, 2 full, 3 ring, 4 one counted row
Image make_mask(int w, int h, int kind, uint32_t* seed) {
  Image mask = random_image(w, h, seed, 2);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t& v = mask.row(y)[x];
      if (kind == 1) v = (x == w / 2 && y == h / 2) ? 1 : 0;
      if (kind == 2) v = 9;
      if (kind == 3) v = (x < 2 || y < 2 || x >= w - 2 || y >= h - 2) ? 200 : 0;
      if (kind == 4) v = y == h / 3 ? 255 : 0;
    }
  bool any = false;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) any = any || mask.row(y)[x];
  if (!any) mask.row(0)[0] = 255;
  return mask;
}

// One case: the number of failed checks.
size_t check(int W, int H, int w, int h, int mask_kind, int levels, uint32_t seed) {
  const Image src = random_image(W, H, &seed, levels);
  const Image tpl = random_image(w, h, &seed, levels);
  const Image mask = make_mask(w, h, mask_kind, &seed);
  const Image tb = mask::apply(tpl, mask::binary(mask));  // T & b: what the FFT correlates
  const Image all = make_mask(w, h, 2, &seed);
  std::vector<uint8_t> px(size_t(W) * H);
  const size_t ld = size_t(W) + 1;
  std::vector<uint2> pre(ld * H);
  for (int y = 0; y < H; ++y) {
    for (int x = 0; x < W; ++x) px[size_t(y) * W + x] = src.row(y)[x];
    mf::prefix_row(src.row(y), W, pre.data() + size_t(y) * ld);
  }
  // The counted runs, then the ignored ones (runs) or the whole rows (rows_runs).
  std::vector<mask::Run> runs = mask::runs_of(mask), rows_runs = runs;
  const int counted = int(runs.size());
  const std::vector<mask::Run> ignored = mask::runs_of(mask, false);
  runs.insert(runs.end(), ignored.begin(), ignored.end());
  for (int j = 0; j < h; ++j) rows_runs.push_back(mask::Run{j, 0, w});
  const std::vector<uint16_t> tm = cuda_mask::pack(tpl, mask);
  const TemplateSums ts = mask::template_sums(tpl, mask);
  size_t bad = 0;
  for (Metric metric : {Metric::SSD, Metric::NCC, Metric::CCorrNormed}) {
    const mf::Consts c{ts.n, ts.st, ts.stt, cuda_mask::kind_of(metric)};
    const bool normed = c.kind >= 2;
    for (int y = 0; y + h <= H; ++y)
      for (int x = 0; x + w <= W; ++x) {
        const uint64_t want = mask::rank_at(src, tpl, mask, metric, x, y);
        const bool whole_rows = (x + y) % 2 == 1;  // both ways, on alternate positions
        const std::vector<mask::Run>& list = whole_rows ? rows_runs : runs;
        const mf::Sums s = mf::run_sums(pre.data(), ld, list.data(), counted, int(list.size()),
                                        whole_rows, x, y);
        // The NTT's exact SSD' of T & b, unmasked.
        const uint64_t whole = mask::cost_at<Metric::SSD>(src, tb, all, x, y);
        const uint64_t exact = cuda_mask::rank_of_word(normed, mf::exact_word(whole, s, c));
        // cuFFT's approximation, moved within ±e.
        const double e = 3.5;
        const double approx = double(whole) + e * (double(next(&seed) >> 8) / 8388608.0 - 1.0);
        uint64_t opt = 0, pess = 0;
        mf::rank_bounds(approx, e, s, c, &opt, &pess);
        // The re-scoring: cuda_mask::window of each template row, summed.
        uint64_t masked = 0;
        for (int j = 0; j < h; ++j)
          masked += cuda_mask::window(px.data() + size_t(j) * W, W, tm.data() + size_t(j) * w, w,
                                      1, x, y, 0, c.n, c.st, c.stt);
        const uint64_t rescored = cuda_mask::rank_of_word(normed, mf::word_from_masked_ssd(masked, s, c));
        const bool ok = exact == want && opt <= want && want <= pess && rescored == want;
        if (!ok && bad++ < 5)
          std::printf("differs: %dx%d in %dx%d, mask %d, %s at (%d,%d): seq %llu, exact %llu, "
                      "bounds [%llu, %llu], re-scored %llu\n",
                      w, h, W, H, mask_kind, metric_name(metric), x, y, (unsigned long long)want,
                      (unsigned long long)exact, (unsigned long long)opt,
                      (unsigned long long)pess, (unsigned long long)rescored);
      }
  }
  return bad;
}

}  // namespace

int main() { return parvis::emulate::sweep(5, 29u, check); }
