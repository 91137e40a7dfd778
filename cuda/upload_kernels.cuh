// The staged copier's kernels (staged_upload.cu), each launcher checking its launch:
//   launch_gray    RGB rows (rgb_pitch apart) -> their grey (gray_of), W pixels a row
//   launch_repack  rows of `width` bytes, spitch apart -> dpitch apart (the linear copy)
//   launch_pull    the one-pass pull (TransferConfig::pull): piece i, bytes [i x piece_bytes,
//                  +piece_bytes) of src (mapped pinned memory) -> the same bytes of dst, once
//                  flags[i] == seq (set by the host after the piece's stores are fenced);
//                  times (the trace's): when each flag was seen and its copy done, 2 a piece;
//                  blocks: the grid's most (bench/experiments/pull_rate.cu tries others)
//   load_kernels   loads them now (lazy loading: else at their first launch); errors are left to
//                  the launch
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/status.hpp"

namespace parvis::cuda::upload {

Status launch_gray(const uint8_t* rgb, size_t rgb_pitch, uint8_t* dst, size_t dpitch, int W,
                   int rows, cudaStream_t s);
Status launch_repack(const uint8_t* src, size_t spitch, uint8_t* dst, size_t dpitch, size_t width,
                     size_t rows, cudaStream_t s);
Status launch_pull(const uint8_t* src, uint8_t* dst, size_t total, size_t piece_bytes,
                   const unsigned* flags, unsigned seq, size_t count, cudaStream_t s,
                   unsigned long long* times = nullptr, unsigned blocks = 64);
void load_kernels(bool gray, bool pull);

}  // namespace parvis::cuda::upload
