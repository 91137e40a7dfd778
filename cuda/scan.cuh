// Warp and block primitives, layered CUB style: thread -> warp -> block. Header-only so
// that every kernel inlines them. Used by the integral images (scans) and the argmin
// reductions of template matching; any kernel that needs a scan or a min takes them here.
//
// Every block-level function must be called by all threads of the block (it synchronises),
// and `blockDim.x` must be a multiple of 32 (whole warps).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace parvis::cuda {

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

// ---- warp level ------------------------------------------------------------------------------
// Inclusive prefix sum over the 32 lanes (Hillis-Steele with __shfl_up_sync, the seed's
// warpPrefixSum): lane i gets v_0 + ... + v_i. Works for 32- and 64-bit integer and float types.
template <typename T>
__device__ __forceinline__ T warp_inclusive_sum(T v) {
  const int lane = threadIdx.x & (kWarp - 1);
#pragma unroll
  for (int offset = 1; offset < kWarp; offset <<= 1) {
    const T up = __shfl_up_sync(kFullMask, v, offset);
    if (lane >= offset) v += up;
  }
  return v;
}

// Sum over the 32 lanes, returned to every lane.
template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

// Minimum over the 32 lanes, returned to every lane.
template <typename T>
__device__ __forceinline__ T warp_min(T v) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
    const T o = __shfl_xor_sync(kFullMask, v, offset);
    v = o < v ? o : v;
  }
  return v;
}

// Reduce-scatter over the 32 lanes of N values a lane (N a power of two, at most 32): afterwards
// v[0] of lane l holds the sum over all lanes of their v[warp_scatter_row<N>(l)]. Each step halves
// the values a lane keeps and swaps the other half with the lane `off` away (N - 1 shuffles in
// all, against 5 N for N separate warp sums); lanes left holding the same row then add up.
template <int N>
__device__ __forceinline__ int warp_scatter_row(int lane) {
  int row = 0;
#pragma unroll
  for (int keep = N / 2, off = kWarp / 2; keep >= 1; keep >>= 1, off >>= 1)
    if (lane & off) row += keep;
  return row;
}
template <int N>
__device__ __forceinline__ uint32_t warp_reduce_scatter(uint32_t (&v)[N]) {
  static_assert(N >= 1 && N <= kWarp && (N & (N - 1)) == 0, "N: a power of two up to 32");
  const int lane = threadIdx.x & (kWarp - 1);
  int off = kWarp / 2;
#pragma unroll
  for (int keep = N / 2; keep >= 1; keep >>= 1, off >>= 1) {
    const bool upper = lane & off;
#pragma unroll
    for (int k = 0; k < keep; ++k) {
      const uint32_t send = upper ? v[k] : v[k + keep];
      const uint32_t mine = upper ? v[k + keep] : v[k];
      v[k] = mine + __shfl_xor_sync(kFullMask, send, off);
    }
  }
#pragma unroll
  for (; off >= 1; off >>= 1) v[0] += __shfl_xor_sync(kFullMask, v[0], off);
  return v[0];
}

// ---- block level -----------------------------------------------------------------------------
// Scratch for the block-level functions: one slot per warp (at most 32 warps).
template <typename T>
struct BlockScratch {
  T warp_vals[kWarp];
  T total;
};

// Exclusive prefix sum over the block (the seed's blockPrefixSum, made exclusive): thread t
// gets v_0 + ... + v_{t-1}; *block_total gets the sum of all. Steps: scan inside each warp;
// the last lane of each warp posts its warp total; warp 0 scans those totals; every thread
// adds the offset of its warp.
template <typename T>
__device__ __forceinline__ T block_exclusive_sum(T v, BlockScratch<T>& s, T* block_total) {
  const int lane = threadIdx.x & (kWarp - 1);
  const int warp = threadIdx.x / kWarp;
  const int nwarps = blockDim.x / kWarp;
  const T incl = warp_inclusive_sum(v);
  if (lane == kWarp - 1) s.warp_vals[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    T wv = lane < nwarps ? s.warp_vals[lane] : T(0);
    const T wincl = warp_inclusive_sum(wv);
    s.warp_vals[lane] = wincl - wv;  // exclusive offsets of the warps
    if (lane == kWarp - 1) s.total = wincl;
  }
  __syncthreads();
  const T out = s.warp_vals[warp] + incl - v;
  *block_total = s.total;
  __syncthreads();  // the scratch may be reused right after
  return out;
}

// Minimum over the block (any 1-3D shape with whole warps), returned to every thread.
template <typename T>
__device__ __forceinline__ T block_min(T v, BlockScratch<T>& s) {
  const int nthreads = blockDim.x * blockDim.y * blockDim.z;
  const int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int l = tid & (kWarp - 1), w = tid / kWarp, nwarps = nthreads / kWarp;
  v = warp_min(v);
  if (l == 0) s.warp_vals[w] = v;
  __syncthreads();
  if (w == 0) {
    T x = l < nwarps ? s.warp_vals[l] : s.warp_vals[0];
    x = warp_min(x);
    if (l == 0) s.total = x;
  }
  __syncthreads();
  const T out = s.total;
  __syncthreads();
  return out;
}

// Sum over the block (any 1-3D shape with whole warps), returned to every thread.
template <typename T>
__device__ __forceinline__ T block_sum(T v, BlockScratch<T>& s) {
  const int nthreads = blockDim.x * blockDim.y * blockDim.z;
  const int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int l = tid & (kWarp - 1), w = tid / kWarp, nwarps = nthreads / kWarp;
  v = warp_sum(v);
  if (l == 0) s.warp_vals[w] = v;
  __syncthreads();
  if (w == 0) {
    T x = l < nwarps ? s.warp_vals[l] : T(0);
    x = warp_sum(x);
    if (l == 0) s.total = x;
  }
  __syncthreads();
  const T out = s.total;
  __syncthreads();
  return out;
}

// ---- ordering keys -------------------------------------------------------------------------
// A double mapped to an unsigned 64-bit key with the same order (negative values included),
// so that atomicMin on the key finds the smallest double.
__host__ __device__ __forceinline__ uint64_t order_key(double d) {
#ifdef __CUDA_ARCH__
  const uint64_t b = uint64_t(__double_as_longlong(d));
#else
  uint64_t b;
  static_assert(sizeof(b) == sizeof(d), "double is 64 bits");
  __builtin_memcpy(&b, &d, sizeof b);
#endif
  return (b >> 63) ? ~b : (b | (uint64_t(1) << 63));
}
__host__ __device__ __forceinline__ double key_to_double(uint64_t k) {
  const uint64_t b = (k >> 63) ? (k & ~(uint64_t(1) << 63)) : ~k;
#ifdef __CUDA_ARCH__
  return __longlong_as_double(static_cast<long long>(b));
#else
  double d;
  __builtin_memcpy(&d, &b, sizeof d);
  return d;
#endif
}

}  // namespace parvis::cuda
