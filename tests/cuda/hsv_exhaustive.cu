// Checks the device RGB -> HSV (cuda/color/hsv.cuh) against the host reference
// color::rgb_to_hsv (src/color/color.cpp) on all 2^24 colours. Exit 0 when they all agree.
// Not built by the Makefile (it needs a GPU to mean anything); build and run with
//   nvcc -std=c++17 -O2 -Iinclude -Isrc -Icuda tests/cuda/hsv_exhaustive.cu src/color/color.cpp -o hsv_test
#include <cstdio>
#include <vector>

#include "color/hsv.cuh"

using namespace parvis;

__global__ void all_colours(uint32_t* out) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (1u << 24)) return;
  const cuda::hsv::DevHsv p = cuda::hsv::rgb_to_hsv(int(i >> 16), int((i >> 8) & 255), int(i & 255));
  out[i] = uint32_t(p.h) | uint32_t(p.s) << 8 | uint32_t(p.v) << 16;
}

static Status run(size_t* mismatches) {
  PARVIS_TRY(cuda::require_device());
  PARVIS_TRY(cuda::hsv::upload_tables());
  const size_t n = size_t(1) << 24;
  cuda::DeviceBuffer<uint32_t> d;
  PARVIS_TRY(d.alloc(n));
  all_colours<<<unsigned(n / 256), 256>>>(d.get());
  CUDA_CHECK_LAUNCH();
  std::vector<uint32_t> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d.get(), n * 4, cudaMemcpyDeviceToHost));
  *mismatches = 0;
  for (size_t i = 0; i < n; ++i) {
    const color::Hsv ref = color::rgb_to_hsv(uint8_t(i >> 16), uint8_t(i >> 8), uint8_t(i));
    const uint32_t want = uint32_t(ref.h) | uint32_t(ref.s) << 8 | uint32_t(ref.v) << 16;
    if (h[i] != want && (*mismatches)++ < 5)
      std::printf("mismatch rgb(%zu,%zu,%zu): device %u,%u,%u host %u,%u,%u\n", i >> 16,
                  (i >> 8) & 255, i & 255, h[i] & 255, (h[i] >> 8) & 255, h[i] >> 16, ref.h, ref.s,
                  ref.v);
  }
  return Status::Ok();
}

// cuda/device.cu's require_device is not linked here: a local definition.
namespace parvis::cuda {
Status require_device() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return Status::runtime("no usable CUDA device");
  return Status::Ok();
}
}  // namespace parvis::cuda

int main() {
  size_t bad = 0;
  const Status s = run(&bad);
  if (!s.ok()) {
    std::printf("hsv exhaustive: %s\n", s.message.c_str());
    return 3;
  }
  std::printf("hsv exhaustive: %u colours, %zu mismatches\n", 1u << 24, bad);
  return bad == 0 ? 0 : 1;
}
