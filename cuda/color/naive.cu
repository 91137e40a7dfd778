// HSV colour filter, CUDA naive: seed 000's first port. The rectangle is copied to the GPU,
// convertBGRtoUchar3 turns its packed bytes into uchar3 pixels (one thread per pixel, 16x16
// blocks), and countBluePixel converts each pixel to HSV and, when it lies in the range, adds
// one to a global counter with atomicAdd (one atomic per matching pixel, as the seed did).
// Our images are RGB, not OpenCV's BGR: the kernel keeps the seed's name, the channel order
// is ours. The HSV conversion mirrors color::rgb_to_hsv exactly (cuda/color/hsv.cuh).
#include "color/hsv.cuh"
#include "common.cuh"

namespace parvis::color {

using cuda::DeviceBuffer;
using cuda::div_up;
using cuda::EventTimer;

// One thread per pixel of the w x h rectangle: 3 packed bytes -> one uchar3.
__global__ void convertBGRtoUchar3(const uint8_t* rgb, int w, int h, uchar3* out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  const uint8_t* p = rgb + (size_t(y) * w + x) * 3;
  out[size_t(y) * w + x] = make_uchar3(p[0], p[1], p[2]);  // x = R, y = G, z = B
}

// One thread per pixel: HSV, range test, one atomicAdd per pixel in range.
__global__ void countBluePixel(const uchar3* px, int w, int h, cuda::hsv::DevRange range,
                               unsigned long long* count) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  const uchar3 p = px[size_t(y) * w + x];
  if (cuda::hsv::in_range(cuda::hsv::rgb_to_hsv(p.x, p.y, p.z), range)) atomicAdd(count, 1ull);
}

Status count_in_rect(const Image& rgb, Rect rect, const HsvRange& range, CountResult* out) {
  PARVIS_TRY(cuda::require_device());
  PARVIS_TRY(check_count_input(rgb, rect));
  PARVIS_TRY(cuda::hsv::upload_tables());
  const size_t n = size_t(rect.w) * rect.h;
  EventTimer timer;
  float ms = 0;
  CountResult res;

  DeviceBuffer<uint8_t> d_rgb;
  DeviceBuffer<uchar3> d_px;
  DeviceBuffer<unsigned long long> d_count;
  PARVIS_TRY(d_rgb.alloc(n * 3));
  PARVIS_TRY(d_px.alloc(n));
  PARVIS_TRY(d_count.alloc(1));

  PARVIS_TRY(timer.start());
  CUDA_CHECK(cudaMemcpy2D(d_rgb.get(), size_t(rect.w) * 3, rgb.at(rect.x, rect.y), rgb.stride,
                          size_t(rect.w) * 3, rect.h, cudaMemcpyHostToDevice));
  PARVIS_TRY(timer.stop(&ms));
  res.timings.upload_ms = ms;

  PARVIS_TRY(timer.start());
  CUDA_CHECK(cudaMemset(d_count.get(), 0, sizeof(unsigned long long)));
  const dim3 block(16, 16);
  const dim3 grid(div_up(rect.w, 16), div_up(rect.h, 16));
  convertBGRtoUchar3<<<grid, block>>>(d_rgb.get(), rect.w, rect.h, d_px.get());
  CUDA_CHECK_LAUNCH();
  countBluePixel<<<grid, block>>>(d_px.get(), rect.w, rect.h, cuda::hsv::to_dev(range),
                                  d_count.get());
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(timer.stop(&ms));
  res.timings.compute_ms = ms;

  unsigned long long count = 0;
  PARVIS_TRY(timer.start());
  CUDA_CHECK(cudaMemcpy(&count, d_count.get(), sizeof count, cudaMemcpyDeviceToHost));
  PARVIS_TRY(timer.stop(&ms));
  res.timings.download_ms = ms;

  res.matching = count;
  res.total = n;
  *out = res;
  return Status::Ok();
}

}  // namespace parvis::color
