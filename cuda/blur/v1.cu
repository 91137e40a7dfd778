// Blur map, blur-v1 (seed 002, V1): one thread per range of rows, the Gaussian recomputed for
// every pixel in double precision.
//
// The rows of all layers are numbered one after another (L x H rows); thread i of the grid
// takes its share of them (ladder::range_of) and walks them pixel by pixel. A pixel with map
// value 0 is copied; any other recomputes exp(-(dx^2 + dy^2) / (2 sigma^2)) for each tap of
// its window (ladder::gaussian_pixel<double>) and divides the weighted sum by the weights.
// The seed first wrote the weights of a pixel into a local array and then applied them; here
// they are applied as they are made (same arithmetic: an array of up to 97 x 97 doubles per
// thread would reserve ~20 GB of local memory on a large GPU full of threads).
//
// Launch: `<number of blocks>` x threads per block (default 32: the seed's best for V1); by
// default one row per thread. Output within +-1 of seq (its own weights, not the shared taps).
#include "blur/ladder.cuh"

namespace parvis::blur {

namespace {

__global__ __launch_bounds__(1024) void bidimensional_convolution_v1(
    const uint8_t* imgs, const uint8_t* map, uint8_t* results, int width, int height, int layers,
    double sigma_max, int radius) {
  const uint64_t idx = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t threads = uint64_t(gridDim.x) * blockDim.x;
  uint64_t start, end;
  ladder::range_of(idx, threads, uint64_t(layers) * uint64_t(height), &start, &end);
  const size_t plane = size_t(width) * size_t(height);
  for (uint64_t row = start; row < end; ++row) {
    const uint64_t layer = row / uint64_t(height);
    const int y = int(row % uint64_t(height));
    const uint8_t* img = imgs + layer * plane;
    for (int x = 0; x < width; ++x) {
      const size_t at = size_t(y) * width + x;
      results[layer * plane + at] =
          map[at] == 0 ? img[at]
                       : ladder::gaussian_pixel<double, false>(img, map, x, y, width, height, sigma_max, radius);
    }
  }
}

}  // namespace

Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings, Launch* launch) {
  const uint64_t rows = uint64_t(layers.size()) * uint64_t(map.height);
  return ladder::run(layers, map, taps, out, timings, launch,
                     reinterpret_cast<const void*>(bidimensional_convolution_v1), 32, rows, 1,
                     [&](const gpu::DeviceBatch& b, unsigned blocks, unsigned threads) {
                       bidimensional_convolution_v1<<<blocks, threads>>>(
                           b.in.get(), b.map.get(), b.out.get(), b.width, b.height, b.layers,
                           taps.sigma_max, taps.radius);
                       CUDA_CHECK_LAUNCH();
                       return Status::Ok();
                     });
}

}  // namespace parvis::blur
