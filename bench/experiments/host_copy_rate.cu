// Experiment (issue 14, the staged upload's ceiling): how fast can this host copy a pageable
// image into host memory at all, and does the kind of destination matter? 8 MiB from a warm
// malloc'd source into plain malloc'd memory, cudaHostAlloc'd (default and write-combined) and
// cudaHostRegister'ed memory, on 1/4/8/16 threads, with memcpy and with SSE2 non-temporal stores
// (as SlotWriter writes the staged copier's pinned block); then the H2D rate from each pinned kind.
// Prints the median of 7 runs of each.
//   nvcc -O2 -std=c++17 -arch=native bench/experiments/host_copy_rate.cu -o /tmp/hcr && /tmp/hcr
#include <cuda_runtime.h>
#include <emmintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CHECK(call)                                                                         \
  do {                                                                                      \
    const cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));      \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

static double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static void streamed_copy(uint8_t* d, const uint8_t* s, size_t n) {  // n: a multiple of 64
  for (size_t i = 0; i < n; i += 64)
    for (size_t k = 0; k < 64; k += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + k),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + k)));
  _mm_sfence();
}

// GB/s of `threads` threads each copying its slice, started together (median of 7).
static double copy_rate(uint8_t* dst, const uint8_t* src, size_t n, int threads, bool streamed) {
  const size_t per = (n / size_t(threads)) & ~size_t(63);
  auto slice = [&](int t) {
    const size_t o = size_t(t) * per;
    if (streamed) streamed_copy(dst + o, src + o, per);
    else std::memcpy(dst + o, src + o, per);
  };
  std::vector<double> rates;
  for (int rep = 0; rep < 7; ++rep) {
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t)
      pool.emplace_back([&, t] {
        while (!go.load()) {}
        slice(t);
      });
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // all spinning
    const double t0 = seconds();
    go = true;
    slice(0);
    for (std::thread& th : pool) th.join();
    rates.push_back(double(per) * threads / (seconds() - t0) / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

int main() {
  const size_t n = size_t(8) << 20;
  auto page_aligned = [&] {
    auto* p = static_cast<uint8_t*>(std::aligned_alloc(4096, n));
    if (!p) std::exit(1);
    std::memset(p, 1, n);  // faulted in
    return p;
  };
  uint8_t* src = page_aligned();
  for (size_t i = 0; i < n; ++i) src[i] = uint8_t(i * 7);
  uint8_t* plain = page_aligned();
  uint8_t* registered = page_aligned();
  uint8_t *pinned = nullptr, *write_combined = nullptr, *dev = nullptr;
  CHECK(cudaHostAlloc(&pinned, n, cudaHostAllocDefault));
  CHECK(cudaHostAlloc(&write_combined, n, cudaHostAllocWriteCombined));
  CHECK(cudaHostRegister(registered, n, cudaHostRegisterDefault));
  CHECK(cudaMalloc(&dev, n));
  const struct {
    const char* name;
    uint8_t* p;
    bool pinned;
  } kinds[] = {{"malloc", plain, false},
               {"hostalloc", pinned, true},
               {"hostalloc-wc", write_combined, true},
               {"registered", registered, true}};
  for (const auto& k : kinds)
    for (int threads : {1, 4, 8, 16})
      std::printf("dst %-13s threads %2d: memcpy %5.1f GB/s, streamed %5.1f GB/s\n", k.name, threads,
                  copy_rate(k.p, src, n, threads, false), copy_rate(k.p, src, n, threads, true));
  for (const auto& k : kinds) {
    if (!k.pinned) continue;
    CHECK(cudaMemcpy(dev, k.p, n, cudaMemcpyHostToDevice));  // first use out of the timing
    const double t0 = seconds();
    for (int r = 0; r < 10; ++r) CHECK(cudaMemcpy(dev, k.p, n, cudaMemcpyHostToDevice));
    std::printf("h2d from %-13s %.1f GB/s\n", k.name, 10.0 * n / (seconds() - t0) / 1e9);
  }
  CHECK(cudaHostUnregister(registered));
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaFreeHost(write_combined));
  CHECK(cudaFree(dev));
  std::free(src);
  std::free(plain);
  std::free(registered);
  return 0;
}
