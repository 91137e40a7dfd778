// The tap sets of blur-v4 and blur-v5 (seed 002's V4: "the filters in constant memory").
//
// Constant memory is 64 KB, and the 255 full sets do not fit in it beyond 7 x 7 windows
// (255 x side^2 x 4 bytes). But a tap depends only on dx^2 + dy^2, so each set is stored once
// per octant cell a >= b >= 0 (a = max(|dx|, |dy|), b = min), (R + 1)(R + 2) / 2 cells, as
// 16-bit integers: every tap but the centre is < 2^k <= 2^16 (blur.hpp), and the centre, 2^k
// in every set, is not stored (cell 0 holds 0 and the kernel adds 2^k). 255 sets of cells fit
// in the 32768 16-bit words of constant memory up to R = 14 (120 cells): sigma_max <= 14/3,
// which covers the bench's 4 and 2 and the seed's small windows. For a larger sigma_max they
// do not fit: the same octant table then lives in global memory and is read through the
// cache like V3's (Launch::note says which).
//
// Constant memory serves one address per warp per cycle and serialises different ones: it
// pays when the 32 threads of a warp read the same set (neighbouring pixels with the same
// map value: a smooth map), and costs up to 32 x on a map without neighbourly correlation
// (noise), where the cache-line reads of global memory do better.
#pragma once
#include <vector>

#include "blur/ladder.cuh"

namespace parvis::blur::octant {

constexpr int kConstantWords = 32768;  // 64 KB of 16-bit taps
__constant__ uint16_t c_taps[kConstantWords];

__host__ __device__ inline int cells(int radius) { return (radius + 1) * (radius + 2) / 2; }

// The taps of the pixel (x, y) with map value v (> 0), from constant memory or from `global`.
template <bool kConstant>
__device__ inline uint8_t pixel(const uint8_t* img, const uint16_t* global, int v, int x, int y,
                                int width, int height, int radius, int k) {
  const int base = (v - 1) * cells(radius);
  uint32_t weighted = 0, weight = 0;
  gpu::for_each_in_window(x, y, width, height, radius, [&](int dx, int dy, size_t at) {
    const int a = max(abs(dx), abs(dy)), b = min(abs(dx), abs(dy));
    const int cell = a * (a + 1) / 2 + b;
    const uint32_t tap = cell == 0 ? 1u << k : kConstant ? c_taps[base + cell] : global[base + cell];
    weighted += tap * img[at];
    weight += tap;
  });
  return divide_round(weighted, weight);
}

// The octant table of every set, into constant memory when it fits (returns true), else into
// `global`. Says which in `note`.
inline Status upload(const TapSets& taps, cuda::DeviceBuffer<uint16_t>* global, bool* constant,
                     std::string* note) {
  const int r = taps.radius, n = cells(r);
  std::vector<uint16_t> table(size_t(255) * size_t(n), 0);
  for (int v = 1; v <= 255; ++v)
    for (int a = 1; a <= r; ++a)
      for (int b = 0; b <= a; ++b)
        table[size_t(v - 1) * n + size_t(a * (a + 1) / 2 + b)] =
            uint16_t(taps.set(v)[(r + b) * taps.side + r + a]);  // < 2^k <= 2^16 off the centre
  *constant = table.size() <= size_t(kConstantWords);
  if (*constant) {
    CUDA_CHECK(cudaMemcpyToSymbol(c_taps, table.data(), table.size() * sizeof(uint16_t)));
    *note = "taps in constant memory (" + std::to_string(table.size() * 2 / 1024) + " KB of 64)";
  } else {
    PARVIS_TRY(global->alloc(table.size()));
    CUDA_CHECK(cudaMemcpy(global->get(), table.data(), table.size() * sizeof(uint16_t),
                          cudaMemcpyHostToDevice));
    *note = "taps in global memory: the octant tables of sigma_max " + std::to_string(taps.sigma_max) +
            " (R = " + std::to_string(r) + ") need " + std::to_string(table.size() * 2 / 1024) +
            " KB, constant memory holds 64 (R <= 14)";
  }
  return Status::Ok();
}

// apply() of V4 and V5: the octant table up (constant memory where it fits), the kernel that
// reads it from there or from global memory, through ladder::run. Kernel(imgs, map, results,
// width, height, layers, global table, radius, k).
template <class Kernel>
Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings, Launch* launch, Kernel* from_constant,
             Kernel* from_global, int default_threads) {
  PARVIS_TRY(check_apply_inputs(layers, map, taps));
  PARVIS_TRY(cuda::require_device());
  cuda::DeviceBuffer<uint16_t> filters;
  bool constant = false;
  std::string note;
  PARVIS_TRY(upload(taps, &filters, &constant, &note));
  if (launch) launch->note = note;
  Kernel* kernel = constant ? from_constant : from_global;
  const uint64_t pixels = uint64_t(layers.size()) * uint64_t(map.width) * uint64_t(map.height);
  return ladder::run(layers, map, taps, out, timings, launch, reinterpret_cast<const void*>(kernel),
                     default_threads, pixels, 16,
                     [&](const gpu::DeviceBatch& b, unsigned blocks, unsigned threads) {
                       kernel<<<blocks, threads>>>(b.in.get(), b.map.get(), b.out.get(), b.width,
                                                   b.height, b.layers, filters.get(), taps.radius,
                                                   taps.k);
                       CUDA_CHECK_LAUNCH();
                       return Status::Ok();
                     });
}

}  // namespace parvis::blur::octant
