// The staged copier's kernels (copier.cu, one_pass.cu), each launcher checking its launch:
//   launch_gray    RGB rows (rgb_pitch apart) -> their grey (gray_of), W pixels a row
//   launch_pull    the one-pass pull: piece i, bytes [i x piece_bytes, +piece_bytes) of src
//                  (mapped pinned memory) -> the same bytes of dst, once flags[i x flag_stride]
//                  == seq (set by the host after the piece's stores are fenced; the copier's
//                  flags are kPullFlagStride words apart); times (the trace's): kPullTimes a piece
//                  (PullTime); blocks: the grid's most (bench/experiments/pull_rate.cu tries
//                  others)
//   launch_touch   a read of every `step` bytes of n bytes of mapped host memory (the copier's
//                  prepare: the GPU's translations of the pull's block and flags made ahead)
//   load_kernels   loads them now (lazy loading: else at their first launch); errors are left to
//                  the launch
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/status.hpp"

namespace parvis::cuda::upload {

// The pull's flags 128 bytes apart, each on its own cache line: a worker's store to one flag
// does not take the line that the GPU is polling for another (docs/decisions/014).
constexpr unsigned kPullFlagStride = 32;
// The trace's pull times, kPullTimes a piece (ns on the GPU's clock): when its flag was seen, its
// copy done, its block began to poll for it.
enum PullTime : unsigned { kPullSeen, kPullCopied, kPullPolled, kPullTimes };

Status launch_gray(const uint8_t* rgb, size_t rgb_pitch, uint8_t* dst, size_t dpitch, int W,
                   int rows, cudaStream_t s);
Status launch_pull(const uint8_t* src, uint8_t* dst, size_t total, size_t piece_bytes,
                   const unsigned* flags, unsigned seq, size_t count, cudaStream_t s,
                   unsigned long long* times = nullptr, unsigned blocks = 64,
                   unsigned flag_stride = 1);
Status launch_touch(const uint8_t* p, size_t n, size_t step, cudaStream_t s);
void load_kernels(bool gray, bool pull);

}  // namespace parvis::cuda::upload
