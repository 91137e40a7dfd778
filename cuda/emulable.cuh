// What a kernel body needs to run on the host as well (the emulation tests under tests/cuda/
// compile the same __host__ __device__ functions for the CPU): loops unrolled only on the device
// (so register arrays are indexed by constants there), and a read-only load that is __ldg on
// the device and a plain load on the host.
#pragma once

#ifndef PARVIS_UNROLL
#ifdef __CUDA_ARCH__
#define PARVIS_UNROLL _Pragma("unroll")
#else
#define PARVIS_UNROLL
#endif
#endif

namespace parvis {

template <typename T>
__host__ __device__ __forceinline__ T ldg(const T* p) {
#ifdef __CUDA_ARCH__
  return __ldg(p);
#else
  return *p;
#endif
}

}  // namespace parvis
