// Blur map, blur-v2 (seed 002, V1 -> V2): a range of pixels per thread instead of whole rows,
// and float arithmetic with __expf instead of double and exp.
//
// The pixels of all layers are numbered one after another (L x H x W); thread i takes its
// share of them (ladder::range_of), so the work is split evenly however many layers or rows
// there are, and a row no longer waits on one thread. The seed moved to float because Nsight
// showed the FP64 units saturated; __expf is the fast hardware approximation (a few ulp),
// which changes no output by more than the +-1 V1 already allows.
//
// Launch: `<number of blocks>` x threads per block (default 32, the seed's best); by default
// 16 pixels per thread. Each thread's pixels are contiguous, so the 32 threads of a warp read
// addresses 16 pixels apart (V5 changes that).
#include "blur/ladder.cuh"

namespace parvis::blur {

namespace {

__global__ __launch_bounds__(1024) void bidimensional_convolution_v2(
    const uint8_t* imgs, const uint8_t* map, uint8_t* results, int width, int height, int layers,
    float sigma_max, int radius) {
  const uint64_t idx = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t threads = uint64_t(gridDim.x) * blockDim.x;
  const uint64_t plane = uint64_t(width) * uint64_t(height);
  uint64_t start, end;
  ladder::range_of(idx, threads, plane * uint64_t(layers), &start, &end);
  for (uint64_t j = start; j < end; ++j) {
    const uint64_t layer = j / plane, rem = j % plane;
    const int y = int(rem / uint64_t(width)), x = int(rem % uint64_t(width));
    const uint8_t* img = imgs + layer * plane;
    results[j] = map[rem] == 0
                     ? img[rem]
                     : ladder::gaussian_pixel<float, true>(img, map, x, y, width, height, sigma_max, radius);
  }
}

}  // namespace

Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings, Launch* launch) {
  const uint64_t pixels = uint64_t(layers.size()) * uint64_t(map.width) * uint64_t(map.height);
  return ladder::run(layers, map, taps, out, timings, launch,
                     reinterpret_cast<const void*>(bidimensional_convolution_v2), 32, pixels, 16,
                     [&](const gpu::DeviceBatch& b, unsigned blocks, unsigned threads) {
                       bidimensional_convolution_v2<<<blocks, threads>>>(
                           b.in.get(), b.map.get(), b.out.get(), b.width, b.height, b.layers,
                           float(taps.sigma_max), taps.radius);
                       CUDA_CHECK_LAUNCH();
                       return Status::Ok();
                     });
}

}  // namespace parvis::blur
