// Blur map, blur-v3 (seed 002, V2 -> V3): the 255 filters computed once on the host (the
// shared integer tap sets, make_tap_sets) and read from global memory, and the map value
// read once per pixel.
//
// From this step on the arithmetic is the contract's (gpu::tap_pixel = seq's loop): the
// output is bit-identical to seq. No exp per tap any more, and the integer sums replace the
// float ones; what is left per tap is a load of the tap, a load of the pixel and a
// multiply-add.
//
// Launch: as V2 (default 32 threads per block, 16 pixels per thread, contiguous per thread).
#include "blur/ladder.cuh"

namespace parvis::blur {

namespace {

__global__ __launch_bounds__(1024) void bidimensional_convolution_v3(
    const uint8_t* imgs, const uint8_t* map, uint8_t* results, int width, int height, int layers,
    const int32_t* filters, int radius) {
  const uint64_t idx = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t threads = uint64_t(gridDim.x) * blockDim.x;
  const uint64_t plane = uint64_t(width) * uint64_t(height);
  const size_t set_size = size_t(2 * radius + 1) * size_t(2 * radius + 1);
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
    results[j] = gpu::tap_pixel(img, filters + size_t(blur_value - 1) * set_size, x, y, width,
                                   height, radius);
  }
}

}  // namespace

Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings, Launch* launch) {
  PARVIS_TRY(check_apply_inputs(layers, map, taps));
  PARVIS_TRY(cuda::require_device());
  cuda::DeviceBuffer<int32_t> filters;
  PARVIS_TRY(gpu::upload_taps(taps, &filters));
  const uint64_t pixels = uint64_t(layers.size()) * uint64_t(map.width) * uint64_t(map.height);
  return ladder::run(layers, map, taps, out, timings, launch,
                     reinterpret_cast<const void*>(bidimensional_convolution_v3), 32, pixels, 16,
                     [&](const gpu::DeviceBatch& b, unsigned blocks, unsigned threads) {
                       bidimensional_convolution_v3<<<blocks, threads>>>(
                           b.in.get(), b.map.get(), b.out.get(), b.width, b.height, b.layers,
                           filters.get(), taps.radius);
                       CUDA_CHECK_LAUNCH();
                       return Status::Ok();
                     });
}

}  // namespace parvis::blur
