// CUDA versions compute on the current device; without one they fail with exit 3.
#include "common.cuh"
#include "common/gray.hpp"
#include "common/device.hpp"

namespace parvis {

namespace cuda {
Status require_device() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0)
    return Status::runtime(std::string("no usable CUDA device (") +
                           (e != cudaSuccess ? cudaGetErrorString(e) : "none found") + ")");
  return Status::Ok();
}
__global__ void gray_all_colours_kernel(uint8_t* out) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (1u << 24)) out[i] = gray_of(i >> 16, (i >> 8) & 255, i & 255);
}
}  // namespace cuda

Status gray_all_colours(std::vector<uint8_t>* out) {
  PARVIS_TRY(cuda::require_device());
  const size_t n = size_t(1) << 24;
  cuda::DeviceBuffer<uint8_t> d;
  PARVIS_TRY(d.alloc(n));
  cuda::gray_all_colours_kernel<<<unsigned(n / 256), 256>>>(d.get());
  CUDA_CHECK_LAUNCH();
  out->resize(n);
  CUDA_CHECK(cudaMemcpy(out->data(), d.get(), n, cudaMemcpyDeviceToHost));
  return Status::Ok();
}

Status device_describe(std::string* name) {
  PARVIS_TRY(cuda::require_device());
  int dev = 0;
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  *name = std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) +
          ", " + std::to_string(p.totalGlobalMem >> 20) + " MiB)";
  return Status::Ok();
}

}  // namespace parvis
