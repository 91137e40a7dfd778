// Experiment (issue 14, the one-pass pull's tail): how fast can the GPU pull a mapped pinned
// block by itself, with every piece's flag already set, against a DMA of the same bytes? If the
// pull is slower than the host's copy (30-40 GB/s on the H100 host), the pieces wait for the GPU
// and the last ones make the tail. Median of 25 runs each, CUDA events.
//   nvcc -O2 -std=c++17 -arch=sm_90 -Isrc -Icuda bench/experiments/pull_rate.cu \
//        cuda/upload_kernels.cu -o /tmp/pr && /tmp/pr
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common.cuh"
#include "upload_kernels.cuh"

namespace parvis::cuda {
namespace {

// The median of 25 timed runs of enqueue (after one untimed).
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

Status run() {
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (size_t bytes : {size_t(1344) * 1025, size_t(3840) * 2160}) {
    PinnedBuffer<uint8_t> h;
    PinnedBuffer<unsigned> flags;
    DeviceBuffer<uint8_t> d;
    PARVIS_TRY(h.alloc_mapped(bytes));
    PARVIS_TRY(d.alloc(bytes));
    const size_t max_pieces = bytes / 4096 + 1;
    PARVIS_TRY(flags.alloc_mapped(max_pieces));
    uint8_t* hd = nullptr;
    unsigned* fd = nullptr;
    PARVIS_TRY(h.device_pointer(&hd));
    PARVIS_TRY(flags.device_pointer(&fd));
    std::memset(h.get(), 7, bytes);
    for (size_t i = 0; i < max_pieces; ++i) flags.get()[i] = 1;  // every piece ready
    float dma = 0;
    PARVIS_TRY(median_ms(s, [&]() -> Status {
      CUDA_CHECK(cudaMemcpyAsync(d.get(), h.get(), bytes, cudaMemcpyHostToDevice, s));
      return Status::Ok();
    }, &dma));
    std::printf("%zu bytes: DMA %.1f us (%.1f GB/s)\n", bytes, dma * 1e3, bytes / (dma * 1e6));
    for (size_t piece : {size_t(8) << 10, size_t(32) << 10, size_t(128) << 10})
      for (unsigned blocks : {32u, 64u, 128u, 256u}) {
        const size_t count = (bytes + piece - 1) / piece;
        float ms = 0;
        PARVIS_TRY(median_ms(s, [&] {
          return upload::launch_pull(hd, d.get(), bytes, piece, fd, 1, count, s, nullptr, blocks);
        }, &ms));
        std::printf("  pull, %3zu KiB pieces, %3u blocks: %.1f us (%.1f GB/s)\n", piece >> 10,
                    std::min<unsigned>(blocks, unsigned(count)), ms * 1e3, bytes / (ms * 1e6));
      }
  }
  CUDA_CHECK(cudaStreamDestroy(s));
  return Status::Ok();
}

}  // namespace
}  // namespace parvis::cuda

int main() {
  const parvis::Status st = parvis::cuda::run();
  if (!st.ok()) std::fprintf(stderr, "pull_rate: %s\n", st.message.c_str());
  return st.ok() ? 0 : 1;
}
