// Experiment (issue 14, the one-pass pull's link rate): the pull by itself reads a mapped pinned
// block at ~35 GB/s (1.38 MB, pull_rate.cu) where a DMA of the same bytes reaches ~38 and, at
// 8.3 MB, 53. Is the rate the form of the GPU's reads? Each variant copies the block's pieces
// (every flag taken as set) to device memory, piece b, b + grid, ... per block; median of 25
// runs, CUDA events, each run checked against the source:
//   cv        16 B .cv loads, 4 in flight a thread, strided by the block (the kernel now)
//   cv-warp   the same 4 loads of a thread's warp contiguous (2 KiB a warp, not 512 B apart)
//   cv-256    .cv with the L2::256B prefetch hint
//   flag-acq  cv after each piece's flag read by ld.acquire.sys (the kernel's way; every flag
//             set), flag-fence: a relaxed read then fence.acq_rel.sys, flag-vol: a volatile read
//             alone (unordered: its cost only)
//   bulk-C    sm_90's bulk copy (TMA): the piece into shared memory in chunks of C KiB on one
//             mbarrier, then one bulk store to the device buffer
//   nvcc -O2 -std=c++17 -arch=sm_90 -Isrc -Icuda bench/experiments/pull_reads.cu -o /tmp/prd
// H100 host (docs/decisions/012): every form 34.1-37.6 µs at 1.38 MB and
// 169-173 µs at 8.3 MB, against a DMA's 29.2-30.0 and 154-156 in the same run: the form does not
// change the link's rate. A flag read before each piece adds 1.5-5.6 µs at 1.38 MB, the same
// whether acquire or volatile (the read's round trip); the fence form costs 11-20 µs more.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common.cuh"
#include "experiment.cuh"

namespace parvis::cuda {
namespace {

enum class Form { kCv, kCvWarp, kCv256, kBulk };

__device__ __forceinline__ uint4 load_cv(const uint4* p) { return __ldcv(p); }
__device__ __forceinline__ uint4 load_cv256(const uint4* p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  return __ldcv(p);  // the hint needs sm_80; bulk needs sm_90 (built for sm_90, above)
#else
  uint4 v;
  asm volatile("ld.global.cv.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
#endif
}

template <Form F>
__device__ void copy_piece(const uint4* s, uint4* d, size_t n16) {
  constexpr int kUnroll = 4;
  const size_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (size_t base = 0; base < n16; base += size_t(blockDim.x) * kUnroll) {
    uint4 v[kUnroll];
    size_t at[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      at[u] = F == Form::kCvWarp ? base + (warp * kUnroll + u) * 32 + lane
                                 : base + threadIdx.x + size_t(u) * blockDim.x;
      if (at[u] < n16) v[u] = F == Form::kCv256 ? load_cv256(s + at[u]) : load_cv(s + at[u]);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (at[u] < n16) d[at[u]] = v[u];
  }
}

template <Form F>
__global__ void pull_loads(const uint8_t* src, uint8_t* dst, size_t total, size_t piece) {
  for (size_t b0 = size_t(blockIdx.x) * piece; b0 < total; b0 += size_t(gridDim.x) * piece)
    copy_piece<F>(reinterpret_cast<const uint4*>(src + b0), reinterpret_cast<uint4*>(dst + b0),
                  min(piece, total - b0) / 16);
}

// The same after each piece's flag (every flag set): the kernel's ld.acquire.sys by thread 0, a
// relaxed load then fence.acq_rel.sys, or a plain volatile load (not ordered: a cost only).
enum class Flag { kAcquire, kRelaxedFence, kVolatile };
template <Flag M>
__global__ void pull_flagged(const uint8_t* src, uint8_t* dst, size_t total, size_t piece,
                             const unsigned* flags) {
  __shared__ int ready;
  unsigned i = blockIdx.x;
  for (size_t b0 = size_t(i) * piece; b0 < total; b0 += size_t(gridDim.x) * piece, i += gridDim.x) {
    if (threadIdx.x == 0) {
      unsigned v;
      if (M == Flag::kAcquire) {
        asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(flags + i) : "memory");
      } else {
        v = *static_cast<const volatile unsigned*>(flags + i);
        if (M == Flag::kRelaxedFence) __threadfence_system();
      }
      ready = v == 1;
    }
    __syncthreads();
    if (!ready) __trap();
    copy_piece<Form::kCv>(reinterpret_cast<const uint4*>(src + b0),
                          reinterpret_cast<uint4*>(dst + b0), min(piece, total - b0) / 16);
    __syncthreads();
  }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PULL_BULK 1
#endif

// One thread drives the bulk copies: chunks of the piece into shared memory, one mbarrier
// counting their bytes, then one bulk store of the piece out of shared memory.
__global__ void pull_bulk(const uint8_t* src, uint8_t* dst, size_t total, size_t piece,
                          unsigned chunk) {
#ifdef PULL_BULK
  extern __shared__ __align__(128) uint8_t buf[];
  __shared__ __align__(8) unsigned long long bar;
  if (threadIdx.x != 0) return;
  const unsigned bar_a = unsigned(__cvta_generic_to_shared(&bar));
  const unsigned buf_a = unsigned(__cvta_generic_to_shared(buf));
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_a) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  unsigned parity = 0;
  for (size_t b0 = size_t(blockIdx.x) * piece; b0 < total; b0 += size_t(gridDim.x) * piece) {
    const unsigned n = unsigned(min(piece, total - b0));
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");  // buf free again
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_a), "r"(n)
                 : "memory");
    for (unsigned c = 0; c < n; c += chunk)
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
          " [%0], [%1], %2, [%3];" ::"r"(buf_a + c),
          "l"(src + b0 + c), "r"(min(chunk, n - c)), "r"(bar_a)
          : "memory");
    unsigned done = 0;
    do {
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;"
          " selp.u32 %0, 1, 0, p; }"
          : "=r"(done)
          : "r"(bar_a), "r"(parity)
          : "memory");
    } while (!done);
    parity ^= 1;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst + b0),
                 "r"(buf_a), "r"(n)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

using experiments::median_ms;

Status run() {
  return experiments::for_each_size([](cudaStream_t s, size_t bytes,
                                       experiments::MappedPair& buf) -> Status {
    const uint8_t* const src = buf.host_dev;
    uint8_t* const dst = buf.dev.get();
    PinnedBuffer<unsigned> flag_buf;  // every piece's flag set
    PARVIS_TRY(flag_buf.alloc_mapped(bytes / 4096 + 1));
    for (size_t i = 0; i < flag_buf.size(); ++i) flag_buf.get()[i] = 1;
    unsigned* flags = nullptr;
    PARVIS_TRY(flag_buf.device_pointer(&flags));
    std::vector<uint8_t> back(bytes);
    unsigned salt = 0;
    // A fresh pattern before each check, so that a stale line would show.
    auto fill = [&] {
      ++salt;
      uint8_t* const h = buf.host.get();
      for (size_t i = 0; i < bytes; ++i) h[i] = uint8_t(i * 131 + salt * 7 + (i >> 12));
    };
    auto check = [&](const char* what) -> Status {
      CUDA_CHECK(cudaMemcpy(back.data(), dst, bytes, cudaMemcpyDeviceToHost));
      if (std::memcmp(back.data(), buf.host.get(), bytes) != 0)
        std::printf("  %s: WRONG BYTES\n", what);
      return Status::Ok();
    };
    for (size_t piece : {size_t(16) << 10, size_t(32) << 10}) {
      unsigned last_grid = 0;
      for (unsigned blocks : {64u, 132u, 264u}) {
        const unsigned grid = std::min<unsigned>(blocks, unsigned((bytes + piece - 1) / piece));
        if (grid == last_grid) continue;  // fewer pieces than blocks: the row before's grid
        last_grid = grid;
        struct Variant {
          std::string name;
          std::function<void()> launch;
        };
        std::vector<Variant> vs;
        vs.push_back({"cv", [=] {
                        pull_loads<Form::kCv><<<grid, 256, 0, s>>>(src, dst, bytes, piece);
                      }});
        vs.push_back({"cv-warp", [=] {
                        pull_loads<Form::kCvWarp><<<grid, 256, 0, s>>>(src, dst, bytes, piece);
                      }});
        vs.push_back({"cv-256", [=] {
                        pull_loads<Form::kCv256><<<grid, 256, 0, s>>>(src, dst, bytes, piece);
                      }});
        const unsigned* const f = flags;
        vs.push_back({"flag-acq", [=] {
                        pull_flagged<Flag::kAcquire><<<grid, 256, 0, s>>>(src, dst, bytes,
                                                                        piece, f);
                      }});
        vs.push_back({"flag-fence", [=] {
                        pull_flagged<Flag::kRelaxedFence><<<grid, 256, 0, s>>>(src, dst, bytes,
                                                                             piece, f);
                      }});
        vs.push_back({"flag-vol", [=] {
                        pull_flagged<Flag::kVolatile><<<grid, 256, 0, s>>>(src, dst, bytes,
                                                                         piece, f);
                      }});
        std::vector<unsigned> chunks{4096u, 16384u};
        if (piece > 16384) chunks.push_back(unsigned(piece));
        for (unsigned chunk : chunks)
          vs.push_back({"bulk-" + std::to_string(chunk >> 10), [=] {
                          pull_bulk<<<grid, 32, piece, s>>>(src, dst, bytes, piece, chunk);
                        }});
        for (const Variant& v : vs) {
          fill();
          CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, s));
          v.launch();
          CUDA_CHECK_LAUNCH();
          CUDA_CHECK(cudaStreamSynchronize(s));
          PARVIS_TRY(check(v.name.c_str()));
          float ms = 0;
          PARVIS_TRY(median_ms(s, [&]() -> Status {
            v.launch();
            CUDA_CHECK_LAUNCH();
            return Status::Ok();
          }, &ms));
          std::printf("  %2zu KiB pieces, %3u blocks, %-8s %6.1f us (%.1f GB/s)\n", piece >> 10,
                      grid, v.name.c_str(), ms * 1e3, bytes / (ms * 1e6));
        }
      }
    }
    return Status::Ok();
  });
}

}  // namespace
}  // namespace parvis::cuda

int main() { return parvis::cuda::experiments::exit_status("pull_reads", parvis::cuda::run()); }
