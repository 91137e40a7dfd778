// Runs the CUDA versions' masked kernel body (cuda/match/mask_kernels.cuh: cuda_mask::window,
// what each thread of maskedScore computes) on the host, position by position, against seq's
// definition (src/match/mask.hpp: mask::rank_at) on random sources, templates and masks of odd
// sizes (holes, one pixel, full), flat windows, every metric. Needs nvcc but no GPU. Exit 0 when
// every score has the same bits. Build and run with
//   nvcc -std=c++17 -O2 -Iinclude -Isrc -Ibmp -Icuda tests/cuda/mask_emulate.cu src/match/mask.cpp \
//        src/match/match.cpp src/common/image.cpp src/cli/cli.cpp src/common/parse.cpp src/common/timing.cpp tests/cuda/emulate_link.cpp \
//        -o /tmp/me && /tmp/me
#include <cstdio>
#include <vector>

#include "match/mask_kernels.cuh"
#include "mask_emulate_cases.hpp"

using namespace parvis;
using namespace parvis::match;
using parvis::emulate::next;
using parvis::emulate::random_image;

namespace {

// One case: the number of positions whose score differs.
size_t check(int W, int H, int w, int h, int mask_kind, int levels, uint32_t seed) {
  const Image src = random_image(W, H, &seed, levels);
  const Image tpl = random_image(w, h, &seed, levels);
  Image mask = random_image(w, h, &seed, 2);  // holes
  if (mask_kind == 1) {  // one pixel
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) mask.row(y)[x] = (x == w / 2 && y == h / 2) ? 1 : 0;
  } else if (mask_kind == 2) {  // full
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) mask.row(y)[x] = 7;
  }
  bool any = false;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) any = any || mask.row(y)[x];
  if (!any) mask.row(0)[0] = 255;
  std::vector<uint8_t> px(size_t(W) * H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) px[size_t(y) * W + x] = src.row(y)[x];
  const std::vector<uint16_t> tm = cuda_mask::pack(tpl, mask);
  const TemplateSums ts = mask::template_sums(tpl, mask);
  size_t bad = 0;
  for (Metric metric : {Metric::SSD, Metric::SAD, Metric::NCC, Metric::CCorrNormed}) {
    const int kind = cuda_mask::kind_of(metric);
    for (int y = 0; y + h <= H; ++y)
      for (int x = 0; x + w <= W; ++x) {
        uint64_t got = cuda_mask::window(px.data(), W, tm.data(), w, h, x, y, kind, ts.n, ts.st, ts.stt);
        if (kind >= 2) {
          double r;
          memcpy(&r, &got, sizeof r);
          got = ncc::key_of(r);
        }
        const uint64_t want = mask::rank_at(src, tpl, mask, metric, x, y);
        if (got != want && bad++ < 5)
          std::printf("differs: %dx%d in %dx%d, mask %d, %s at (%d,%d): %llu vs %llu\n", w, h, W, H,
                      mask_kind, metric_name(metric), x, y, (unsigned long long)got,
                      (unsigned long long)want);
      }
  }
  return bad;
}

}  // namespace

int main() { return parvis::emulate::sweep(3, 17u, check); }
