// The integral's checksum term, shared by the host (integral.cpp) and the device
// (cuda/integral/common.cuh): element i with value v adds splitmix64's finaliser of
// v ^ (i * golden ratio) to a wrapping 64-bit sum. Position-dependent, order-free.
#pragma once
#include <cstdint>

#include "common/splitmix.hpp"

#if defined(__CUDACC__)
#define PARVIS_HD __host__ __device__
#else
#define PARVIS_HD
#endif

namespace parvis::integral {

PARVIS_HD inline uint64_t checksum_term(uint64_t i, uint64_t v) {
  return splitmix64_mix(v ^ (i * kSplitmixGamma));
}

// splitmix64's step k (k = 1, 2, ...) of `seed`: the number that gives --random pixels
// 8(k-1) ... 8(k-1)+7 (byte j of it is pixel 8(k-1)+j, row-major).
PARVIS_HD inline uint64_t noise_word(uint64_t seed, uint64_t k) {
  return splitmix64_mix(seed + k * kSplitmixGamma);
}

}  // namespace parvis::integral
