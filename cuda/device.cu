// CUDA versions compute on the current device; without one they fail with exit 3.
#include "common.cuh"
#include "common/subcommands.hpp"

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
}  // namespace cuda

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
