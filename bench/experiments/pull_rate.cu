// Experiment (issue 14, the one-pass pull's tail): how fast can the GPU pull a mapped pinned
// block by itself, with every piece's flag already set, against a DMA of the same bytes? If the
// pull is slower than the host's copy (30-40 GB/s on the H100 host), the pieces wait for the GPU
// and the last ones make the tail. Median of 25 runs each, CUDA events.
//   nvcc -O2 -std=c++17 -arch=sm_90 -Isrc -Icuda bench/experiments/pull_rate.cu \
//        cuda/upload/kernels.cu -o /tmp/pr && /tmp/pr
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common.cuh"
#include "experiment.cuh"
#include "upload/kernels.cuh"

namespace parvis::cuda {
namespace {

using experiments::median_ms;

Status run() {
  return experiments::for_each_size([](cudaStream_t s, size_t bytes,
                                       experiments::MappedPair& buf) -> Status {
    PinnedBuffer<unsigned> flags;
    const size_t max_pieces = bytes / 4096 + 1;
    PARVIS_TRY(flags.alloc_mapped(max_pieces));
    unsigned* fd = nullptr;
    PARVIS_TRY(flags.device_pointer(&fd));
    std::memset(buf.host.get(), 7, bytes);
    for (size_t i = 0; i < max_pieces; ++i) flags.get()[i] = 1;  // every piece ready
    for (size_t piece : {size_t(8) << 10, size_t(32) << 10, size_t(128) << 10})
      for (unsigned blocks : {32u, 64u, 128u, 256u}) {
        const size_t count = (bytes + piece - 1) / piece;
        float ms = 0;
        PARVIS_TRY(median_ms(s, [&] {
          return upload::launch_pull(buf.host_dev, buf.dev.get(), bytes, piece, fd, 1, count, s,
                                     nullptr, blocks);
        }, &ms));
        std::printf("  pull, %3zu KiB pieces, %3u blocks: %.1f us (%.1f GB/s)\n", piece >> 10,
                    std::min<unsigned>(blocks, unsigned(count)), ms * 1e3, bytes / (ms * 1e6));
      }
    return Status::Ok();
  });
}

}  // namespace
}  // namespace parvis::cuda

int main() { return parvis::cuda::experiments::exit_status("pull_rate", parvis::cuda::run()); }
