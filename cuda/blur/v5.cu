// Blur map, blur-v5 (seed 002, V4 -> V5): block-strided assignment. Each block takes a
// contiguous range of pixels (ladder::range_of over the blocks) and its threads take them in
// turn: thread t the pixels start + t, start + t + blockDim, ... So at any moment the 32
// threads of a warp work on 32 neighbouring pixels: their pixel and map reads are contiguous
// (coalesced), and their windows overlap, so the rows they read come from the same cache
// lines. Everything else is V4's (taps in constant memory where they fit, octant.cuh).
//
// Launch: default 256 threads per block (the seed's choice for V5), 16 pixels per thread.
#include "blur/octant.cuh"

namespace parvis::blur {

namespace {

template <bool kConstant>
__global__ __launch_bounds__(1024) void bidimensional_convolution_v5(
    const uint8_t* imgs, const uint8_t* map, uint8_t* results, int width, int height, int layers,
    const uint16_t* filters, int radius, int k) {
  const uint64_t plane = uint64_t(width) * uint64_t(height);
  uint64_t start, end;
  ladder::range_of(blockIdx.x, gridDim.x, plane * uint64_t(layers), &start, &end);
  for (uint64_t j = start + threadIdx.x; j < end; j += blockDim.x) {
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
  return octant::apply(layers, map, taps, out, timings, launch, bidimensional_convolution_v5<true>,
                       bidimensional_convolution_v5<false>, 256);
}

}  // namespace parvis::blur
