// What the pull's experiments share (pull_rate.cu, pull_reads.cu): their two sizes, a mapped
// pinned block with its device twin, the median of 25 timed runs of a stream's work by CUDA
// events, a pinned DMA's time as the line they are compared with, the loop over the sizes, and
// main's exit status.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "common.cuh"

namespace parvis::cuda::experiments {

// 1326x1025 grey in rows padded to 1344 (the matcher's pitch), and 3840x2160.
constexpr size_t kSizes[] = {size_t(1344) * 1025, size_t(3840) * 2160};

// `bytes` of mapped pinned memory (host: its device address) and of device memory.
struct MappedPair {
  PinnedBuffer<uint8_t> host;
  DeviceBuffer<uint8_t> dev;
  uint8_t* host_dev = nullptr;
  Status alloc(size_t bytes) {
    PARVIS_TRY(host.alloc_mapped(bytes));
    PARVIS_TRY(dev.alloc(bytes));
    return host.device_pointer(&host_dev);
  }
};

// The median of 25 timed runs of enqueue (after one untimed), ms.
template <class F>
Status median_ms(cudaStream_t s, F&& enqueue, float* out) {
  EventTimer timer;
  std::vector<float> t;
  for (int r = 0; r < 26; ++r) {
    PARVIS_TRY(timer.start(s));
    PARVIS_TRY(enqueue());
    float ms = 0;
    PARVIS_TRY(timer.stop(&ms, s));
    if (r) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  *out = t[t.size() / 2];
  return Status::Ok();
}

// `bytes` from pinned host memory to the device by one DMA, printed.
inline Status print_dma(cudaStream_t s, uint8_t* dev, const uint8_t* host, size_t bytes) {
  float ms = 0;
  PARVIS_TRY(median_ms(s, [&]() -> Status {
    CUDA_CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));
    return Status::Ok();
  }, &ms));
  std::printf("%zu bytes: DMA %.1f us (%.1f GB/s)\n", bytes, ms * 1e3, bytes / (ms * 1e6));
  return Status::Ok();
}

// For each of kSizes on one non-blocking stream: a mapped pinned block and a device buffer of
// that size, the DMA's line printed, then body(stream, bytes, buffers).
template <class F>
Status for_each_size(F&& body) {
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Status st = Status::Ok();
  for (size_t bytes : kSizes) {
    MappedPair buf;
    st = buf.alloc(bytes);
    if (st.ok()) st = print_dma(s, buf.dev.get(), buf.host.get(), bytes);
    if (st.ok()) st = body(s, bytes, buf);
    if (!st.ok()) break;
  }
  CUDA_CHECK(cudaStreamDestroy(s));
  return st;
}

// main's end: the failure on stderr, named; the exit status.
inline int exit_status(const char* name, const Status& st) {
  if (!st.ok()) std::fprintf(stderr, "%s: %s\n", name, st.message.c_str());
  return st.ok() ? 0 : 1;
}

}  // namespace parvis::cuda::experiments
