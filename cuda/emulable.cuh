// What a kernel body needs to run on the host as well (the emulation tests under tests/cuda/
// compile the same __host__ __device__ functions for the CPU): loops unrolled only on the device
// (so register arrays are indexed by constants there), a read-only load that is __ldg on
// the device and a plain load on the host, and loads batched eight at a time.
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

// fold(load(i)) for i in [begin, end) in order, the loads eight at a time: eight in flight at
// once, where one chain of loads would wait a memory latency each.
template <typename Load, typename Fold>
__host__ __device__ __forceinline__ void fold_by_eight(int begin, int end, Load load, Fold fold) {
  int i = begin;
  for (; i + 8 <= end; i += 8) {
    decltype(load(i)) v[8];
    PARVIS_UNROLL
    for (int u = 0; u < 8; ++u) v[u] = load(i + u);
    PARVIS_UNROLL
    for (int u = 0; u < 8; ++u) fold(v[u]);
  }
  for (; i < end; ++i) fold(load(i));
}

}  // namespace parvis
