// Experiment (issue 14, the one call's upload): the pull's launch took 6-13 µs of the caller's
// time on the H100 host (PARVIS_UPLOAD_TRACE), and the kernel ran ~3 µs after it returned. Is a
// graph's launch cheaper than a kernel's? The host time of each API call (steady_clock), the
// first in the process and the median of the next 30, on a non-blocking stream, each launch
// waited for before the next; with the other cores idle and with 12 threads spinning (as the
// copier's pool does while it waits for a copy).
//   nvcc -O2 -std=c++17 -arch=sm_90 -Isrc -Icuda bench/experiments/launch_cost.cu -o /tmp/lc
// H100 host (bench/README.md, "Upload, ninth round"): a kernel's first launch 35-48 µs (the
// process's first), 8-18 on a new stream, then 4.0-5.2; the graph 2-5 first, then 1.2-2.2; with
// its arguments set each time 1.7-3.2. Inside a copy, with the workers writing the block, the
// graph's launch took 26-35 µs and the kernel's 6-13: neither is cheap there.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
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

Status run(bool spin) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  if (spin)
    for (int i = 0; i < 12; ++i)
      spinners.emplace_back([&] {
        while (!stop.load(std::memory_order_relaxed)) std::this_thread::yield();
      });
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
  stop = true;
  for (std::thread& t : spinners) t.join();
  return Status::Ok();
}

}  // namespace
}  // namespace parvis::cuda

int main() {
  for (bool spin : {false, true}) {
    std::printf("%s\n", spin ? "12 threads spinning:" : "other cores idle:");
    const parvis::Status st = parvis::cuda::run(spin);
    if (!st.ok()) {
      std::fprintf(stderr, "launch_cost: %s\n", st.message.c_str());
      return 1;
    }
  }
  return 0;
}
