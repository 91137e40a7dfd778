// Blur map, blur-v4 (seed 002, V3 -> V4): the tap sets in constant memory (octant.cuh: one
// 16-bit tap per octant cell, 64 KB hold them up to sigma_max 14/3; above that the same table
// is read from global memory, and Launch::note says so).
//
// Constant memory broadcasts: when the threads of a warp ask for the same tap (neighbouring
// pixels of a smooth map have the same value) one read serves all 32. The seed counted on it
// ("the blur map never changes abruptly"); a noise map is the hard case, where a warp's 32
// different addresses are served one after another.
//
// Launch: as V3 (default 32 threads per block, 16 pixels per thread, contiguous per thread).
#include "blur/octant.cuh"

namespace parvis::blur {

namespace {

template <bool kConstant>
__global__ __launch_bounds__(1024) void bidimensional_convolution_v4(
    const uint8_t* imgs, const uint8_t* map, uint8_t* results, int width, int height, int layers,
    const uint16_t* filters, int radius, int k) {
  const uint64_t idx = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t threads = uint64_t(gridDim.x) * blockDim.x;
  const uint64_t plane = uint64_t(width) * uint64_t(height);
  uint64_t start, end;
  ladder::range_of(idx, threads, plane * uint64_t(layers), &start, &end);
  for (uint64_t j = start; j < end; ++j) {
    const uint64_t layer = j / plane, rem = j % plane;
    const int blur_value = map[rem];
    const uint8_t* img = imgs + layer * plane;
    if (blur_value == 0) {
      results[j] = img[rem];
      continue;
    }
    const int y = int(rem / uint64_t(width)), x = int(rem % uint64_t(width));
    results[j] = octant::pixel<kConstant>(img, filters, blur_value, x, y, width, height, radius, k);
  }
}

}  // namespace

Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings, Launch* launch) {
  return octant::apply(layers, map, taps, out, timings, launch, bidimensional_convolution_v4<true>,
                       bidimensional_convolution_v4<false>, 32);
}

}  // namespace parvis::blur
