// Blur map, cuda-naive: the plain CUDA port. One thread per output pixel and layer (blocks of
// 32 x 8 pixels, the grid's z over the layers), the shared integer tap sets in global memory,
// each thread walking its window with seq's loop (gpu::tap_pixel). Bit-identical to seq.
// Grids wider than the hardware allows in y (65535) or z are walked in strides.
#include <algorithm>

#include "blur/batch.cuh"

namespace parvis::blur {

namespace {

constexpr int kBlockX = 32, kBlockY = 8;

__global__ void blur_naive(const uint8_t* imgs, const uint8_t* map, uint8_t* out, int width,
                           int height, int layers, const int32_t* taps, int radius) {
  const int x = int(blockIdx.x) * kBlockX + int(threadIdx.x);
  if (x >= width) return;
  const size_t plane = size_t(width) * size_t(height), set_size = size_t(2 * radius + 1) * size_t(2 * radius + 1);
  for (int y = int(blockIdx.y) * kBlockY + int(threadIdx.y); y < height; y += int(gridDim.y) * kBlockY) {
    const size_t at = size_t(y) * width + x;
    const int v = map[at];
    for (int l = blockIdx.z; l < layers; l += gridDim.z) {
      const uint8_t* img = imgs + size_t(l) * plane;
      out[size_t(l) * plane + at] =
          v == 0 ? img[at] : gpu::tap_pixel(img, taps + size_t(v - 1) * set_size, x, y, width, height, radius);
    }
  }
}

}  // namespace

Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings, Launch*) {
  PARVIS_TRY(check_apply_inputs(layers, map, taps));
  PARVIS_TRY(cuda::require_device());
  cuda::DeviceBuffer<int32_t> d_taps;
  PARVIS_TRY(gpu::upload_taps(taps, &d_taps));
  return gpu::run(layers, map, taps, out, timings, [&](const gpu::DeviceBatch& b) {
    const dim3 grid(cuda::div_up(size_t(b.width), kBlockX),
                    unsigned(std::min<size_t>(cuda::div_up(size_t(b.height), kBlockY), 65535)),
                    unsigned(std::min(b.layers, 65535)));
    blur_naive<<<grid, dim3(kBlockX, kBlockY)>>>(b.in.get(), b.map.get(), b.out.get(), b.width,
                                                 b.height, b.layers, d_taps.get(), taps.radius);
    CUDA_CHECK_LAUNCH();
    return Status::Ok();
  });
}

}  // namespace parvis::blur
