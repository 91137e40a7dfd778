// Runs cuda-opt's normed kernels (cuda/match/opt_normed.cuh: W1's thread body and W3's per-position
// score, the header's own __host__ __device__ functions) on the host, with W2's tiled row prefix
// and W4's tie rule replayed, and compares every score (bits), key and the best position with
// seq's normed_row_from_ssd / select_best on random images of odd sizes, flat templates and flat
// windows, for ncc and ccorr-normed. Needs nvcc but no GPU. Exit 0 when everything matches:
//   nvcc -std=c++17 -O2 -Iinclude -Isrc -Ibmp -Icuda tests/cuda/normed_emulate.cu src/match/match.cpp \
//        src/match/mask.cpp src/common/image.cpp src/cli/cli.cpp src/common/parse.cpp src/common/timing.cpp tests/cuda/emulate_link.cpp \
//        -o build/normed_emulate && build/normed_emulate
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "match/match_common.hpp"
#include "match/opt_normed.cuh"

using namespace parvis;
using namespace parvis::match;
namespace nm = parvis::match::opt::normed;

static int failures = 0, cases = 0;

static void run_case(int W, int H, int w, int h, std::mt19937& rng, int kind, Metric metric) {
  ++cases;
  // kind 0: noise; 1: flat template; 2: flat source patch + noise; 3: few grey levels (ties).
  Image src, tpl;
  image_alloc(W, H, 1, &src);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      src.row(y)[x] = uint8_t(kind == 3 ? (rng() % 3) * 100 : rng() % 256);
  if (kind == 2)
    for (int y = 0; y < H / 2; ++y)
      for (int x = 0; x < W / 2; ++x) src.row(y)[x] = 77;
  image_alloc(w, h, 1, &tpl);
  const int tx = int(rng() % unsigned(W - w + 1)), ty = int(rng() % unsigned(H - h + 1));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) tpl.row(y)[x] = kind == 1 ? 200 : src.row(ty + y)[tx + x];
  const int map_w = W - w + 1, map_h = H - h + 1;

  // The device layout: rows 16-byte aligned with >= 16 zero bytes past W.
  const size_t pitch = (size_t(W) + 16 + 15) / 16 * 16;
  std::vector<uint8_t> dsrc(pitch * H, 0);
  for (int y = 0; y < H; ++y) std::memcpy(&dsrc[size_t(y) * pitch], src.row(y), size_t(W));
  const int ld = (W + 1 + 3) / 4 * 4;
  std::vector<uint64_t> ci(size_t(ld) * map_h, 0xdeadbeefull), cq(ci);
  // W1: every thread of the grid.
  for (int y0 = 0; y0 < map_h; y0 += nm::kColRows)
    for (int x = 0; x < W; x += 4)
      nm::col_sums_thread(dsrc.data(), pitch, W, h, map_h, ci.data(), cq.data(), ld, x, y0);
  // W2: the tiles of a row, each an exclusive scan of its values (x < W), carried.
  for (int y = 0; y < map_h; ++y) {
    uint64_t* ri = &ci[size_t(y) * ld];
    uint64_t* rq = &cq[size_t(y) * ld];
    uint64_t carry_i = 0, carry_q = 0;
    for (int x0 = 0; x0 <= W; x0 += nm::kPrefixThreads) {
      uint64_t ei = 0, eq = 0;
      for (int t = 0; t < nm::kPrefixThreads; ++t) {
        const int x = x0 + t;
        const uint64_t vi = x < W ? ri[x] : 0, vq = x < W ? rq[x] : 0;
        if (x <= W) ri[x] = carry_i + ei, rq[x] = carry_q + eq;
        ei += vi;
        eq += vq;
      }
      carry_i += ei;
      carry_q += eq;
    }
  }
  // The exact SSD map, then W3 per position against seq's row conversion.
  const TemplateSums ts = template_sums(tpl);
  WindowSums ws;
  ws.build(src);
  const nm::Consts c{ts.n, ts.st, ts.stt, metric == Metric::NCC};
  std::vector<uint64_t> keys(size_t(map_w) * map_h), ref_row(static_cast<size_t>(map_w));
  std::vector<double> ref_map(static_cast<size_t>(map_w));
  int bad = 0;
  for (int y = 0; y < map_h; ++y) {
    for (int x = 0; x < map_w; ++x) {
      uint64_t ssd = 0;
      for (int j = 0; j < h; ++j)
        for (int i = 0; i < w; ++i) {
          const int d = int(src.row(y + j)[x + i]) - int(tpl.row(j)[i]);
          ssd += uint64_t(d * d);
        }
      ref_row[size_t(x)] = ssd;
      const double r = nm::score_at(ci.data(), cq.data(), ld, ssd, w, x, y, c);
      keys[size_t(y) * map_w + x] = ncc::key_of(r);
    }
    normed_row_from_ssd(metric, ws, ts, w, h, y, map_w, ref_row.data(), ref_map.data());
    for (int x = 0; x < map_w; ++x)
      if (keys[size_t(y) * map_w + x] != ref_row[size_t(x)] && bad++ < 3)
        std::printf("FAIL %dx%d/%dx%d kind %d %s: (%d, %d) key %llx, seq %llx\n", W, H, w, h, kind,
                    metric_name(metric), x, y, (unsigned long long)keys[size_t(y) * map_w + x],
                    (unsigned long long)ref_row[size_t(x)]);
  }
  // W4: the smallest key, then the smallest index — select_best's order.
  uint64_t mk = ~0ull;
  for (uint64_t k : keys) mk = k < mk ? k : mk;
  size_t mi = ~size_t(0);
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == mk) { mi = i; break; }
  const std::vector<Position> b = select_best(keys.data(), map_w, map_h, 1);
  if (b.empty() || size_t(b[0].y) * map_w + b[0].x != mi || b[0].score != mk) {
    ++bad;
    std::printf("FAIL %dx%d/%dx%d kind %d: best differs\n", W, H, w, h, kind);
  }
  if (bad) ++failures;
}

int main() {
  std::mt19937 rng(14);
  const int sizes[][4] = {{1, 1, 1, 1},   {7, 3, 3, 2},   {5, 40, 2, 33},  {300, 2, 17, 1},
                          {257, 129, 9, 7}, {64, 64, 64, 64}, {513, 70, 31, 5}, {1027, 45, 100, 40}};
  for (const auto& s : sizes)
    for (int kind = 0; kind < 4; ++kind)
      for (Metric m : {Metric::NCC, Metric::CCorrNormed}) run_case(s[0], s[1], s[2], s[3], rng, kind, m);
  std::printf("normed emulation: %d cases, %d failed\n", cases, failures);
  return failures == 0 ? 0 : 1;
}
