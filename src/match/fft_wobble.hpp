// match.fft_bound_scale, the FFT methods' test hook (src/match/fft_tuning.hpp, cuda/match/
// tuning.hpp): the rounding bound multiplied, and each value moved by a fixed pseudo-random
// amount within the added width, so that the values really are as far off as the bound the run
// assumes; only an exact re-scoring of every position the answer could hold then gives the right
// answer. Header only, __host__ __device__ under nvcc.
#pragma once
#include <cstdint>

#ifdef __CUDACC__
#define PARVIS_WOBBLE_HD __host__ __device__ __forceinline__
#else
#define PARVIS_WOBBLE_HD inline
#endif

namespace parvis::match {

// A fixed value in [-1, 1] per position.
PARVIS_WOBBLE_HD double wobble(int x, int y) {
  uint32_t v = uint32_t(x) * 73856093u ^ uint32_t(y) * 19349663u;
  v *= 0x9E3779B1u;
  v ^= v >> 15;
  return double(int32_t(v)) / 2147483648.0;
}

}  // namespace parvis::match
