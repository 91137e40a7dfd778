// HSV colour filter, CUDA optimized (seed 000's "Ottimizzazione della conversione" and past it):
//  - only the rectangle travels, staged through a pinned buffer and copied asynchronously;
//  - one kernel: no uchar3 copy of the rectangle, each thread reads its pixels' bytes directly;
//  - a grid-stride loop on a fixed 1D grid (a few blocks per SM), so consecutive threads read
//    consecutive pixels whatever the rectangle's size;
//  - each thread counts in a register, each block reduces once (warp shuffles, then one word
//    per warp in shared memory) and issues ONE atomicAdd, instead of one per matching pixel;
//  - device buffers, pinned buffer, stream and events are kept between calls (the video path
//    calls this once per frame).
// The HSV conversion mirrors color::rgb_to_hsv exactly (cuda/color/hsv.cuh).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "color/hsv.cuh"
#include "common.cuh"
#include "scan.cuh"

namespace parvis::color {

using cuda::DeviceBuffer;
using cuda::PinnedBuffer;

namespace {

constexpr int kThreads = 256;

// Counts the pixels of a w x h rectangle (rows `pitch` bytes apart, packed RGB) in range.
__global__ __launch_bounds__(kThreads) void count_in_range(const uint8_t* rgb, size_t pitch, int w,
                                                           int h, cuda::hsv::DevRange range,
                                                           unsigned long long* count) {
  __shared__ cuda::BlockScratch<unsigned int> scratch;
  // n < 2^31: images hold at most 2^31 bytes (kMaxImageBytes), so 32-bit indices suffice.
  const unsigned int n = unsigned(w) * unsigned(h);
  unsigned int mine = 0;
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const unsigned int y = i / unsigned(w), x = i - y * unsigned(w);
    const uint8_t* p = rgb + size_t(y) * pitch + size_t(x) * 3;
    mine += cuda::hsv::in_range(cuda::hsv::rgb_to_hsv(p[0], p[1], p[2]), range) ? 1u : 0u;
  }
  const unsigned int block_total = cuda::block_sum(mine, scratch);
  if (threadIdx.x == 0 && block_total) atomicAdd(count, (unsigned long long)block_total);
}

// What is kept between calls.
struct State {
  std::mutex lock;
  bool ready = false;
  cudaStream_t stream = nullptr;
  cudaEvent_t ev[4] = {};
  int grid = 0;
  DeviceBuffer<uint8_t> d_rgb;
  DeviceBuffer<unsigned long long> d_count;
  PinnedBuffer<uint8_t> h_rgb;
  PinnedBuffer<unsigned long long> h_count;

  Status init() {
    if (ready) return Status::Ok();
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (cudaEvent_t& e : ev) CUDA_CHECK(cudaEventCreate(&e));
    int dev = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    grid = sms * 4;  // enough resident warps to hide latency; the loop covers the rest
    PARVIS_TRY(d_count.alloc(1));
    PARVIS_TRY(h_count.alloc(1));
    PARVIS_TRY(cuda::hsv::upload_tables());
    // The CUDA runtime registers its own teardown with atexit at its first call, which came
    // above; handlers run last-in first-out, so this one frees the state while CUDA still works.
    std::atexit(release_state);
    ready = true;
    return Status::Ok();
  }
  ~State() {
    for (cudaEvent_t e : ev)
      if (e) cudaEventDestroy(e);
    if (stream) cudaStreamDestroy(stream);
  }
  static void release_state();
};

State* g_state = nullptr;

State& state() {
  if (!g_state) g_state = new State;
  return *g_state;
}

void State::release_state() {
  delete g_state;  // buffers free themselves; errors at exit are of no use to anyone
  g_state = nullptr;
}

}  // namespace

Status count_in_rect(const Image& rgb, Rect rect, const HsvRange& range, CountResult* out) {
  PARVIS_TRY(cuda::require_device());
  PARVIS_TRY(check_count_input(rgb, rect));
  State& st = state();
  std::lock_guard<std::mutex> guard(st.lock);
  PARVIS_TRY(st.init());

  const size_t row_bytes = size_t(rect.w) * 3, n_bytes = row_bytes * rect.h;
  PARVIS_TRY(st.d_rgb.alloc(n_bytes));
  PARVIS_TRY(st.h_rgb.alloc(n_bytes));
  for (int y = 0; y < rect.h; ++y)  // stage the rectangle in pinned memory (host copy)
    std::memcpy(st.h_rgb.get() + size_t(y) * row_bytes, rgb.at(rect.x, rect.y + y), row_bytes);

  cudaStream_t s = st.stream;
  CUDA_CHECK(cudaEventRecord(st.ev[0], s));
  CUDA_CHECK(cudaMemcpyAsync(st.d_rgb.get(), st.h_rgb.get(), n_bytes, cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaEventRecord(st.ev[1], s));
  CUDA_CHECK(cudaMemsetAsync(st.d_count.get(), 0, sizeof(unsigned long long), s));
  const size_t n = size_t(rect.w) * rect.h;
  const int grid = int(std::min<size_t>(size_t(st.grid), (n + kThreads - 1) / kThreads));
  count_in_range<<<grid, kThreads, 0, s>>>(st.d_rgb.get(), row_bytes, rect.w, rect.h,
                                           cuda::hsv::to_dev(range), st.d_count.get());
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaEventRecord(st.ev[2], s));
  CUDA_CHECK(cudaMemcpyAsync(st.h_count.get(), st.d_count.get(), sizeof(unsigned long long),
                             cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaEventRecord(st.ev[3], s));
  CUDA_CHECK(cudaEventSynchronize(st.ev[3]));

  float up = 0, comp = 0, down = 0;
  CUDA_CHECK(cudaEventElapsedTime(&up, st.ev[0], st.ev[1]));
  CUDA_CHECK(cudaEventElapsedTime(&comp, st.ev[1], st.ev[2]));
  CUDA_CHECK(cudaEventElapsedTime(&down, st.ev[2], st.ev[3]));
  CountResult res;
  res.matching = *st.h_count.get();
  res.total = n;
  res.timings.upload_ms = up;
  res.timings.compute_ms = comp;
  res.timings.download_ms = down;
  *out = res;
  return Status::Ok();
}

}  // namespace parvis::color
