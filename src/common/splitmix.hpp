// splitmix64 (Steele, Lea and Flood, 2014): the project's one deterministic noise. Its mixer
// hashes a word well and its sequence is the same on every machine and on the GPU, so the
// generated images, the benches' inputs and the integral's --random pixels and checksum can be
// made again bit for bit anywhere.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define PARVIS_SPLITMIX_HD __host__ __device__
#else
#define PARVIS_SPLITMIX_HD
#endif

namespace parvis {

// The sequence's increment, 2^64 / the golden ratio (odd).
constexpr uint64_t kSplitmixGamma = 0x9e3779b97f4a7c15ull;

// splitmix64's output function: a good 64-bit mixer, used both as a generator's step and as a
// hash.
PARVIS_SPLITMIX_HD inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The generator: its k-th number (k = 1, 2, ...) is splitmix64_mix(seed + k gamma).
struct SplitMix64 {
  uint64_t state;
  uint64_t next() { return splitmix64_mix(state += kSplitmixGamma); }
};

}  // namespace parvis
