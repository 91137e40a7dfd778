// The staged copier's kernels (kernels.cuh): RGB rows -> grey and the one-pass pull.
#include "upload/kernels.cuh"

#include <algorithm>
#include <cstdint>

#include "common.cuh"
#include "common/gray.hpp"

namespace parvis::cuda::upload {

// ---- the grey conversion on the GPU ----------------------------------------------------------------
__global__ void rgb_rows_to_gray(const uint8_t* rgb, size_t rgb_pitch, uint8_t* dst, size_t dpitch,
                                 int W, int rows) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= W) return;
  for (int y = blockIdx.y; y < rows; y += gridDim.y) {
    const uint8_t* p = rgb + size_t(y) * rgb_pitch + 3 * size_t(x);
    dst[size_t(y) * dpitch + x] = gray_of(p[0], p[1], p[2]);
  }
}

Status launch_gray(const uint8_t* rgb, size_t rgb_pitch, uint8_t* dst, size_t dpitch,
                          int W, int rows, cudaStream_t s) {
  if (W <= 0 || rows <= 0) return Status::Ok();
  const dim3 grid(div_up(size_t(W), 256), unsigned(std::min(rows, 65535)));
  rgb_rows_to_gray<<<grid, 256, 0, s>>>(rgb, rgb_pitch, dst, dpitch, W, rows);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

// ---- the one-pass pull -----------------------------------------------------------------------------
// The GPU copies each piece out of the mapped pinned block as soon as the host has marked it
// ready (flags[i] == seq, written after the piece's streamed stores are fenced), instead of a
// DMA per run of pieces: no driver call while the host copies, and no DMA after the last piece.
__device__ __forceinline__ unsigned load_acquire_system(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// n bytes src -> dst, the block's threads together; src and dst equally aligned (one offset
// into a pinned block and a device buffer). .cv loads: a line of the block cached on the GPU by
// an earlier upload is stale.
__device__ void pull_span(const uint8_t* src, uint8_t* dst, size_t n) {
  const size_t head = min(n, size_t((16 - (reinterpret_cast<uintptr_t>(src) & 15)) & 15));
  const size_t n16 = (n - head) / 16, tail0 = head + n16 * 16;
  for (size_t k = threadIdx.x; k < head; k += blockDim.x) dst[k] = __ldcv(src + k);
  for (size_t k = tail0 + threadIdx.x; k < n; k += blockDim.x) dst[k] = __ldcv(src + k);
  const uint4* s4 = reinterpret_cast<const uint4*>(src + head);
  uint4* d4 = reinterpret_cast<uint4*>(dst + head);
  constexpr int kUnroll = 4;  // loads in flight per thread: the link's latency is ~1 µs
  for (size_t k = threadIdx.x; k < n16; k += size_t(blockDim.x) * kUnroll) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (k + size_t(u) * blockDim.x < n16) v[u] = __ldcv(s4 + k + size_t(u) * blockDim.x);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (k + size_t(u) * blockDim.x < n16) d4[k + size_t(u) * blockDim.x] = v[u];
  }
}

// Piece i is bytes [i x piece_bytes, +piece_bytes) of both src and dst (whole rows, the same
// pitch on both sides), ready once flags[i x flag_stride] == seq; block b takes pieces b,
// b + gridDim.x, ... A flag not set within 60 s means the host is gone: trap rather than hang
// the stream.
// times (upload.trace, else null): kPullTimes a piece (PullTime).
__global__ void pull_pieces(const uint8_t* src, uint8_t* dst, size_t total, size_t piece_bytes,
                            const unsigned* flags, unsigned flag_stride, unsigned seq,
                            unsigned count, unsigned long long* times) {
  __shared__ int ready;
  for (unsigned i = blockIdx.x; i < count; i += gridDim.x) {
    if (threadIdx.x == 0) {
      const unsigned long long t0 = global_ns();
      if (times) times[kPullTimes * i + kPullPolled] = t0;
      int ok = 1;
      while (load_acquire_system(flags + size_t(i) * flag_stride) != seq) {
        if (global_ns() - t0 > 60000000000ull) {
          ok = 0;
          break;
        }
        __nanosleep(500);
      }
      ready = ok;
    }
    __syncthreads();
    if (!ready) __trap();
    if (times && threadIdx.x == 0) times[kPullTimes * i + kPullSeen] = global_ns();
    const size_t b0 = size_t(i) * piece_bytes;
    pull_span(src + b0, dst + b0, min(piece_bytes, total - b0));
    __syncthreads();  // `ready` is written again for the next piece
    if (times && threadIdx.x == 0) times[kPullTimes * i + kPullCopied] = global_ns();
  }
}

Status launch_pull(const uint8_t* src, uint8_t* dst, size_t total, size_t piece_bytes,
                   const unsigned* flags, unsigned seq, size_t count, cudaStream_t s,
                   unsigned long long* times, unsigned blocks, unsigned flag_stride) {
  if (count == 0) return Status::Ok();
  pull_pieces<<<unsigned(std::min<size_t>(count, blocks)), 256, 0, s>>>(
      src, dst, total, piece_bytes, flags, flag_stride, seq, unsigned(count), times);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

// One .cv read of every `step` bytes (the values are not used: the GPU's address translations
// of the mapped pages are what it leaves behind).
__global__ void touch_mapped(const uint8_t* p, size_t n, size_t step, unsigned* never) {
  unsigned acc = 0;
  for (size_t k = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) * step; k < n;
       k += size_t(gridDim.x) * blockDim.x * step)
    acc += __ldcv(p + k);
  if (never && acc == 0xffffffffu) *never = acc;  // keeps the loads
}

Status launch_touch(const uint8_t* p, size_t n, size_t step, cudaStream_t s) {
  if (n == 0 || step == 0) return Status::Ok();
  const size_t reads = div_up(n, step);
  touch_mapped<<<unsigned(std::min<size_t>(64, div_up(reads, 256))), 256, 0, s>>>(p, n, step, nullptr);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

void load_kernels(bool gray, bool pull) {
  cudaFuncAttributes attr;
  if (gray) (void)cudaFuncGetAttributes(&attr, rgb_rows_to_gray);
  if (pull) (void)cudaFuncGetAttributes(&attr, pull_pieces);
}

}  // namespace parvis::cuda::upload
