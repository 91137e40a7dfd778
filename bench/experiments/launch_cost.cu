// Experiment (issue 14, the one call's upload): the pull's launch took 6-13 µs of the caller's
// time on the H100 host (upload.trace), and the kernel ran ~3 µs after it returned. Is a
// graph's launch cheaper than a kernel's? The host time of each API call (steady_clock), the
// first in the process and the median of the next 30, on a non-blocking stream, each launch
// waited for before the next; with the other cores idle and with 12 threads spinning (as the
// copier's pool does while it waits for a copy).
// With --load, also under the copier's kind of work, to tell why a launch inside a copy costs
// more than on an idle host: 11 threads streaming a 1.36 MB source (in their caches) into a
// pinned block with non-temporal stores, as the workers do; the same into ordinary memory; and
// the same threads only reading the source. Each of these also times a launch and its
// cudaStreamSynchronize together (the kernel's start and end seen from the host).
//   nvcc -O2 -std=c++17 -arch=sm_90 -Isrc -Icuda bench/experiments/launch_cost.cu -o /tmp/lc
//   /tmp/lc [--load]
// H100 host (docs/decisions/012): a kernel's first launch 35-48 µs (the
// process's first), 8-18 on a new stream, then 4.0-5.2; the graph 2-5 first, then 1.2-2.2; with
// its arguments set each time 1.7-3.2. Inside a copy, with the workers writing the block, the
// graph's launch took 26-35 µs and the kernel's 6-13: neither is cheap there.
// --load, H200 host (docs/decisions/012), two runs: the launch 3.2 / 5.6 µs
// idle, 5.6 / 9.7 with 11 threads streaming into pinned memory and 5.1 / 9.5 into ordinary
// memory, 3.5 / 5.1 with them only reading; launch + sync 8.0 / 10.5 idle, 13.5 / 16.2 and
// 12.3 / 15.8 streaming: the streamed stores' write traffic, not the memory's kind, slows it.
#include <cuda_runtime.h>

#include <emmintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "common.cuh"

namespace parvis::cuda {
namespace {

__global__ void tiny(const unsigned* flags, unsigned seq, unsigned count) {
  if (count && threadIdx.x == 0 && flags[blockIdx.x] == seq + 1) __trap();  // never: count 0
}

using Clock = std::chrono::steady_clock;
double us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

template <class F>
Status series(const char* name, cudaStream_t s, F&& launch) {
  std::vector<double> t;
  for (int i = 0; i < 31; ++i) {
    const auto a = Clock::now();
    PARVIS_TRY(launch());
    const auto b = Clock::now();
    t.push_back(us(a, b));
    CUDA_CHECK(cudaStreamSynchronize(s));
  }
  const double first = t[0];
  t.erase(t.begin());
  std::sort(t.begin(), t.end());
  std::printf("  %-28s first %6.1f us, then median %5.1f (min %4.1f, max %5.1f)\n", name, first,
              t[t.size() / 2], t.front(), t.back());
  return Status::Ok();
}

// What the other threads do while the launches are timed.
enum class Load { Idle, Spin, StreamPinned, StreamPlain, Read };
const char* load_name(Load l) {
  switch (l) {
    case Load::Idle: return "other cores idle";
    case Load::Spin: return "12 threads spinning";
    case Load::StreamPinned: return "11 threads streaming 1.36 MB into pinned memory (NT stores)";
    case Load::StreamPlain: return "11 threads streaming 1.36 MB into ordinary memory (NT stores)";
    case Load::Read: return "11 threads reading 1.36 MB (in their caches)";
  }
  return "";
}

constexpr size_t kSource = size_t(1344) * 1025;  // the matcher's 1326x1025 rows, padded
constexpr int kWorkers = 11;

// Worker w's slice of `n` bytes, 16-byte aligned, again and again until `stop`: copied into
// `dst` with streamed stores (dst non-null), or summed.
void load_loop(const uint8_t* src, uint8_t* dst, size_t n, int w, const std::atomic<bool>& stop) {
  const size_t blocks = n / 16, b0 = blocks * size_t(w) / kWorkers, b1 = blocks * size_t(w + 1) / kWorkers;
  const __m128i* s = reinterpret_cast<const __m128i*>(src);
  __m128i* d = reinterpret_cast<__m128i*>(dst);
  __m128i acc = _mm_setzero_si128();
  while (!stop.load(std::memory_order_relaxed)) {
    for (size_t i = b0; i < b1; ++i) {
      const __m128i v = _mm_load_si128(s + i);
      if (d) _mm_stream_si128(d + i, v);
      else acc = _mm_add_epi8(acc, v);
    }
    _mm_sfence();
  }
  volatile int sink = _mm_cvtsi128_si32(acc);
  (void)sink;
}

// The other threads, stopped and joined when it goes (on every return of run(), before the
// memory they use is freed).
struct Background {
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  ~Background() {
    stop = true;
    for (std::thread& t : threads) t.join();
  }
};

Status run(Load load) {
  PinnedBuffer<uint8_t> pinned;
  std::vector<uint8_t> source(kSource + 64, 7), plain(kSource + 64, 0);
  const auto aligned = [](uint8_t* p) { return p + ((16 - reinterpret_cast<uintptr_t>(p) % 16) % 16); };
  if (load == Load::StreamPinned) PARVIS_TRY(pinned.alloc(kSource));
  uint8_t* const dst = load == Load::StreamPinned  ? pinned.get()
                       : load == Load::StreamPlain ? aligned(plain.data())
                                                   : nullptr;
  Background bg;
  if (load == Load::Spin)
    for (int i = 0; i < 12; ++i)
      bg.threads.emplace_back([&] {
        while (!bg.stop.load(std::memory_order_relaxed)) std::this_thread::yield();
      });
  if (load == Load::StreamPinned || load == Load::StreamPlain || load == Load::Read)
    for (int w = 0; w < kWorkers; ++w)
      bg.threads.emplace_back([&, w] { load_loop(aligned(source.data()), dst, kSource, w, bg.stop); });
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaFuncAttributes attr;
  CUDA_CHECK(cudaFuncGetAttributes(&attr, tiny));  // loaded, as the copier's warm-up does
  unsigned seq = 1;
  PARVIS_TRY(series("kernel <<<43, 256>>>", s, [&]() -> Status {
    tiny<<<43, 256, 0, s>>>(nullptr, seq++, 0);
    CUDA_CHECK_LAUNCH();
    return Status::Ok();
  }));
  PARVIS_TRY(series("kernel, launch + sync", s, [&]() -> Status {
    tiny<<<43, 256, 0, s>>>(nullptr, seq++, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(s));
    return Status::Ok();
  }));
  cudaGraph_t g = nullptr;
  cudaGraphExec_t ge = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  tiny<<<43, 256, 0, s>>>(nullptr, seq, 0);
  CUDA_CHECK(cudaStreamEndCapture(s, &g));
  CUDA_CHECK(cudaGraphInstantiate(&ge, g, 0));
  CUDA_CHECK(cudaGraphUpload(ge, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  PARVIS_TRY(series("graph of it", s, [&]() -> Status {
    CUDA_CHECK(cudaGraphLaunch(ge, s));
    return Status::Ok();
  }));
  // The same graph, its node's parameters set again before each launch (the pull's number
  // changes with every copy).
  cudaGraphNode_t node = nullptr;
  size_t n_nodes = 1;
  CUDA_CHECK(cudaGraphGetNodes(g, &node, &n_nodes));
  cudaKernelNodeParams kp{};
  CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &kp));
  const unsigned* no_flags = nullptr;
  unsigned count0 = 0;
  void* args[] = {&no_flags, &seq, &count0};
  kp.kernelParams = args;
  kp.extra = nullptr;
  PARVIS_TRY(series("graph, params set, launch", s, [&]() -> Status {
    ++seq;
    CUDA_CHECK(cudaGraphExecKernelNodeSetParams(ge, node, &kp));
    CUDA_CHECK(cudaGraphLaunch(ge, s));
    return Status::Ok();
  }));
  cudaEvent_t e = nullptr;
  CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  PARVIS_TRY(series("event record", s, [&]() -> Status {
    CUDA_CHECK(cudaEventRecord(e, s));
    return Status::Ok();
  }));
  CUDA_CHECK(cudaEventDestroy(e));
  CUDA_CHECK(cudaGraphExecDestroy(ge));
  CUDA_CHECK(cudaGraphDestroy(g));
  CUDA_CHECK(cudaStreamDestroy(s));
  return Status::Ok();
}

}  // namespace
}  // namespace parvis::cuda

int main(int argc, char** argv) {
  using parvis::cuda::Load;
  std::vector<Load> loads{Load::Idle, Load::Spin};
  if (argc > 1 && std::strcmp(argv[1], "--load") == 0)
    loads.insert(loads.end(), {Load::StreamPinned, Load::StreamPlain, Load::Read, Load::Idle});
  for (Load load : loads) {
    std::printf("%s:\n", parvis::cuda::load_name(load));
    const parvis::Status st = parvis::cuda::run(load);
    if (!st.ok()) {
      std::fprintf(stderr, "launch_cost: %s\n", st.message.c_str());
      return 1;
    }
  }
  return 0;
}
