// Runs cuda-opt's blur kernel body (cuda/blur/opt_kernel.cuh, blur_quad) on the host, thread by
// thread as the grid of cuda/blur/opt.cu would, on the padded layout opt.cu uploads, and
// compares every output with the contract's reference_pixel. Needs nvcc but no GPU: it checks
// the index arithmetic (alignment variants, chunks, margins, layer groups, odd sizes) where
// no GPU is at hand. Exit 0 when every case matches bit for bit. Build and run with
//   nvcc -std=c++17 -O2 -Iinclude -Isrc -Ibmp -Icuda tests/cuda/blur_emulate.cu src/blur/blur.cpp \
//        src/common/image.cpp src/cli/cli.cpp src/common/parse.cpp src/common/timing.cpp -o /tmp/blur_emulate && /tmp/blur_emulate
#include <cstdio>
#include <cstring>
#include <vector>

#include "blur/opt_kernel.cuh"

namespace parvis {
const char* const kVersionName = "emulate";
}
using namespace parvis;
using namespace parvis::blur;

namespace {

uint32_t next(uint32_t* s) { return *s = *s * 1664525u + 1013904223u; }

template <int LT>
void run_grid(const opt::Args& a) {
  const int d = a.g.r4 - a.g.radius;
  for (int y = 0; y < a.g.height; ++y)
    for (int x0 = 0; x0 < a.g.width; x0 += opt::kQuad)
      for (int l0 = 0; l0 < a.g.layers; l0 += LT) switch (d) {
          case 0: opt::blur_quad<LT, 0>(a, x0, y, l0); break;
          case 1: opt::blur_quad<LT, 1>(a, x0, y, l0); break;
          case 2: opt::blur_quad<LT, 2>(a, x0, y, l0); break;
          default: opt::blur_quad<LT, 3>(a, x0, y, l0); break;
        }
}

// One case: returns the number of outputs that differ from the reference.
size_t check(int w, int h, int layers, double sigma_max, int map_kind, uint32_t seed) {
  TapSets taps;
  make_tap_sets(sigma_max, &taps);
  std::vector<Image> in(static_cast<size_t>(layers));
  for (Image& img : in) {
    image_alloc(w, h, 1, &img);
    for (uint8_t& p : img.pixels) p = uint8_t(next(&seed) >> 24);
  }
  Image map;
  if (map_kind == 0) radial_map(w, h, &map);
  else {
    image_alloc(w, h, 1, &map);
    for (uint8_t& p : map.pixels) p = map_kind == 1 ? 255 : (next(&seed) >> 29) == 0 ? 0 : uint8_t(next(&seed) >> 24);
  }
  const opt::Geometry g = opt::Geometry::make(w, h, layers, taps);
  const std::vector<uint32_t> pairs = opt::make_pair_table(taps, g);
  WeightTable weights;
  make_weight_table(taps, &weights);
  // The padded layers as opt.cu uploads them, plus a guard of 64 bytes that must stay unread
  // (filled with 0xA5: a read of it would change some sum).
  std::vector<uint8_t> padded(g.layer_size * size_t(layers) + 64, 0);
  std::memset(padded.data() + g.layer_size * size_t(layers), 0xA5, 64);
  for (int l = 0; l < layers; ++l)
    for (int y = 0; y < h; ++y)
      std::memcpy(padded.data() + size_t(l) * g.layer_size + size_t(y + g.radius) * g.stride + size_t(g.r4),
                  in[size_t(l)].row(y), size_t(w));
  std::vector<uint8_t> out(size_t(w) * size_t(h) * size_t(layers), 0);
  const opt::Args a{g, padded.data(), map.data(), pairs.data(), weights.prefix.data(), out.data()};
  const int lt = layers >= 6 ? 8 : layers >= 3 ? 4 : layers;
  if (lt == 8) run_grid<8>(a);
  else if (lt == 4) run_grid<4>(a);
  else if (lt == 2) run_grid<2>(a);
  else run_grid<1>(a);
  size_t bad = 0;
  for (int l = 0; l < layers; ++l)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        bad += out[(size_t(l) * h + y) * w + x] != reference_pixel(in[size_t(l)], map, taps, x, y);
  std::printf("%s %dx%d x%d sigma_max %g map %s (R %d, k %d, %d chunks): %zu differ\n", bad ? "FAIL" : "ok  ",
              w, h, layers, sigma_max, map_kind == 0 ? "radial" : map_kind == 1 ? "255" : "noise", g.radius,
              g.k, g.chunks, bad);
  return bad;
}

}  // namespace

int main() {
  size_t bad = 0;
  uint32_t seed = 1;
  // sigma_max with R = 1 … 48 (every D = r4 - R), k = 16 … 9; sizes below, at and above the
  // 32 x 16 tile, odd, one pixel wide or high; 1 … 9 layers (LT = 1, 2, 4, 8 and partial groups).
  const double sigmas[] = {0.3, 0.5, 0.7, 1, 1.5, 2, 2.4, 4, 5, 16};
  const int sizes[][2] = {{1, 1}, {2, 3}, {5, 4}, {33, 17}, {61, 43}, {1, 37}, {70, 1}};
  const int layer_counts[] = {1, 2, 3, 5, 9};
  int i = 0;
  for (double s : sigmas)
    for (const auto& wh : sizes) {
      const int layers = layer_counts[i % 5];
      bad += check(wh[0], wh[1], layers, s, i % 3, seed + uint32_t(i));
      ++i;
    }
  std::printf("%s\n", bad ? "emulation differs from the reference" : "every output matches the reference");
  return bad ? 1 : 0;
}
