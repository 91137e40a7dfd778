// Seed 002's ladder (blur-v1 … blur-v5): what the steps share, so that each step's file holds
// only what that step changes (diff v2.cu v3.cu to see one optimization).
//
//   - the work split of the seed: `range_of` gives thread (or block) i of n its share of
//     `total` units, the first total % n one unit longer;
//   - the per-pixel arithmetic of V1 and V2: the Gaussian recomputed per pixel in double with
//     exp (V1) or float with __expf (V2) (V3 uses the shared integer taps, gpu::tap_pixel;
//     V4 and V5 their octant tables in constant memory, octant.cuh);
//   - the host side: the grid (the seed's `<number of blocks>` and threads per block, both
//     run-time values here, so the seed's threads-per-block sweep needs no recompile), upload,
//     the kernel timed with CUDA events, download.
//
// Every kernel has __launch_bounds__(1024): the compiler keeps it within 64 registers so that
// every block size up to 1024 launches (the seed had to pass -maxrregcount=48 to its V2 for
// that), at the price of the registers a small block could have had.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "blur/batch.cuh"

namespace parvis::blur::ladder {

// Share i of n of `total` units: [*start, *end).
__device__ inline void range_of(uint64_t i, uint64_t n, uint64_t total, uint64_t* start, uint64_t* end) {
  const uint64_t base = total / n, extra = total % n;
  if (i < extra) {
    *start = i * (base + 1);
    *end = *start + base + 1;
  } else {
    *start = i * base + extra;
    *end = *start + base;
  }
}

// V1, V2: the weights of pixel (x, y) recomputed from its map value, exp(-(dx^2 + dy^2) /
// (2 sigma^2)) for every in-bounds tap, sigma = sigma_max * v / 255; out = round(sum w px /
// sum w). Real = double with exp (V1), float with __expf (V2). Not the shared integer taps:
// the output may differ from seq's by +-1 (DESIGN.md "Blur map"). The map is read here again,
// as the seed's computeFilter did.
template <typename Real, bool kFastExp>
__device__ inline uint8_t gaussian_pixel(const uint8_t* img, const uint8_t* map, int x, int y,
                                         int width, int height, Real sigma_max, int radius) {
  const Real sigma = sigma_max * Real(map[size_t(y) * width + x]) / Real(255);
  const Real scale = Real(-1) / (Real(2) * sigma * sigma);
  Real weighted = 0, weight = 0;
  gpu::for_each_in_window(x, y, width, height, radius, [&](int dx, int dy, size_t at) {
    const Real e = Real(dx * dx + dy * dy) * scale;
    const Real w = kFastExp ? Real(__expf(float(e))) : Real(exp(double(e)));
    weighted += w * Real(img[at]);
    weight += w;
  });
  return uint8_t(min(Real(255), floor(weighted / weight + Real(0.5))));
}

// The grid of one launch: threads per block from the hint or the step's default (1 … 1024,
// within what the compiled kernel allows), blocks from the hint or enough threads for
// `units` at `per_thread` units each. Writes what it chose back into the hint.
inline Status resolve_grid(const void* kernel, Launch* hint, int default_threads, uint64_t units,
                           uint64_t per_thread, unsigned* blocks, unsigned* threads) {
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  const int t = hint && hint->threads_per_block ? hint->threads_per_block : default_threads;
  if (t < 1 || t > attr.maxThreadsPerBlock)
    return Status::usage("threads per block must be in 1 … " + std::to_string(attr.maxThreadsPerBlock) +
                         " for " + kVersionName + ", not " + std::to_string(t));
  uint64_t b = hint && hint->blocks ? uint64_t(hint->blocks) : 0;
  if (b == 0) b = std::max<uint64_t>(1, (units + uint64_t(t) * per_thread - 1) / (uint64_t(t) * per_thread));
  if (b > 0x7fffffffu) return Status::bad_input("the grid would need more than 2^31 - 1 blocks");
  *blocks = unsigned(b);
  *threads = unsigned(t);
  if (hint) hint->blocks = int(b), hint->threads_per_block = t;
  return Status::Ok();
}

// One ladder step's apply(): the grid, then gpu::run (upload, `launch(batch, blocks,
// threads)` timed, download).
template <class LaunchFn>
Status run(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
           std::vector<Image>* out, Timings* timings, Launch* hint, const void* kernel,
           int default_threads, uint64_t units, uint64_t per_thread, LaunchFn launch) {
  PARVIS_TRY(check_apply_inputs(layers, map, taps));
  PARVIS_TRY(cuda::require_device());
  unsigned blocks = 0, threads = 0;
  PARVIS_TRY(resolve_grid(kernel, hint, default_threads, units, per_thread, &blocks, &threads));
  return gpu::run(layers, map, taps, out, timings,
                  [&](const gpu::DeviceBatch& b) { return launch(b, blocks, threads); });
}

}  // namespace parvis::blur::ladder
