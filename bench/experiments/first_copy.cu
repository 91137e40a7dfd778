// Experiment (issue 14, the one call's upload of a small image): the staged copier's host workers
// copy at 3-5 GB/s each in a process's first upload and at ~10 in a prepared loop. Which of the
// first call's conditions costs that? A one-pass upload rebuilt from the copier's own parts (the
// pool, SlotWriter's streamed stores, the pull kernel), uploaded `iters` times in one process,
// each iteration printed: the wall time from the call to the stream's end, the host's copy span
// (first worker's start to last worker's end), and the workers' mean rate. Conditions (flags):
//   --evict MB   after writing the source, this thread writes MB of other memory (a call's
//                prepare in between: the source leaves this core's caches)
//   --tlb        before the first upload, each worker reads a byte of every page of the source
//                and the block (their translations cached on the workers' cores)
//   --share      before the first upload, each worker reads all of the source (its lines shared,
//                in the last-level cache)
//   --gap MS     then MS ms more before the first upload, this thread writing 8 MiB of other
//                memory over and over (a call's setup after prepare), the workers spinning
//   --nogpu      the host's copy alone, no pull
//   --pf BYTES   the copy prefetches the source BYTES ahead (_mm_prefetch, T0), else SlotWriter
//   --plain      the copy by memcpy (plain stores), else streamed
//   --threads N, --piece KIB, --iters N, --bytes N, --blocks N (the pull's grid)
//   nvcc -O2 -std=c++17 -arch=sm_90 -Isrc -Icuda bench/experiments/first_copy.cu \
//        cuda/upload/kernels.cu -o /tmp/fc && /tmp/fc --evict 64
// H100 host, 1.36 MB, 12 threads, medians of 6-7 processes (docs/decisions/011): the first
// upload's workers copy at 3.6-4.6 GB/s each whatever the source's state
// (just written, --evict, --tlb, --pf, --plain), at 9.6-10.2 after --share, and later uploads
// at ~10.5; with --share and --gap 5 at 5.8, --gap 20 at 3.9. Hence the copier's read-ahead.
#include <cuda_runtime.h>
#include <emmintrin.h>
#include <xmmintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common.cuh"
#include "upload/slot_writer.hpp"
#include "upload/kernels.cuh"
#include "upload/pool.hpp"

namespace parvis::cuda {
namespace {

using Clock = std::chrono::steady_clock;
double us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

struct Options {
  size_t bytes = size_t(1326) * 1025;
  size_t piece = size_t(32) << 10;
  int threads = 12, iters = 8;
  unsigned blocks = 64;
  size_t evict_mb = 0;
  size_t pf = 0, gap_ms = 0;
  bool tlb = false, share = false, gpu = true, plain = false;
};

// n bytes src -> dst by streamed stores, prefetching the source pf bytes ahead (dst 16-aligned).
void prefetched_copy(uint8_t* dst, const uint8_t* src, size_t n, size_t pf) {
  size_t k = 0;
  for (; k + 64 <= n; k += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(src + k + pf), _MM_HINT_T0);
    for (size_t j = 0; j < 64; j += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k + j),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k + j)));
  }
  std::memcpy(dst + k, src + k, n - k);
  _mm_sfence();
}

struct Span {
  Clock::time_point a{}, b{};
  size_t bytes = 0;
};

volatile uint8_t sink;  // keeps the warming reads

Status run(const Options& o) {
  std::vector<uint8_t> src(o.bytes);  // the decoded image, written by this thread
  uint32_t x = 12345;
  for (uint8_t& v : src) v = uint8_t((x = x * 1664525u + 1013904223u) >> 24);
  PinnedBuffer<uint8_t> block;
  PARVIS_TRY(block.alloc(o.bytes));
  PinnedBuffer<unsigned> flags;
  const size_t count = (o.bytes + o.piece - 1) / o.piece;
  PARVIS_TRY(flags.alloc_mapped(count));
  std::memset(flags.get(), 0, count * sizeof(unsigned));
  unsigned* flags_dev = nullptr;
  PARVIS_TRY(flags.device_pointer(&flags_dev));
  uint8_t* block_dev = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&block_dev), block.get(), 0));
  DeviceBuffer<uint8_t> dst;
  PARVIS_TRY(dst.alloc(o.bytes));
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  upload::load_kernels(false, true);
  upload::Pool pool;
  pool.set_spin(2000000);  // the workers stay awake throughout
  pool.start(o.threads - 1, [] { (void)cudaSetDevice(0); });
  std::vector<Span> spans(o.threads);
  auto on_all = [&](const std::function<void(int)>& f) { pool.run(o.threads, f); };
  on_all([](int) {});  // every worker started
  if (o.evict_mb) {
    std::vector<uint8_t> other(o.evict_mb << 20);
    for (size_t i = 0; i < other.size(); i += 64) other[i] = uint8_t(i);
    sink = other[other.size() / 2];
  }
  if (o.tlb || o.share) {
    on_all([&](int) {
      uint8_t acc = 0;
      const size_t step = o.share ? 64 : 4096;
      for (size_t i = 0; i < o.bytes; i += step) acc ^= src[i];
      if (o.tlb)
        for (size_t i = 0; i < o.bytes; i += 4096) acc ^= block.get()[i];
      sink = acc;
    });
  }
  if (o.gap_ms) {
    std::vector<uint8_t> other(size_t(8) << 20);
    const Clock::time_point g0 = Clock::now();
    for (uint8_t k = 0; us(g0, Clock::now()) < 1e3 * double(o.gap_ms); ++k)
      for (size_t i = 0; i < other.size(); i += 64) other[i] = k;
    sink = other[other.size() / 2];
  }
  std::printf("iter  wall_us  host_us  host_GB/s  worker_GB/s  first_start_us\n");
  for (int it = 1; it <= o.iters; ++it) {
    std::atomic<size_t> next{0};
    const unsigned seq = unsigned(it);
    const Clock::time_point t0 = Clock::now();
    if (o.gpu)
      PARVIS_TRY(upload::launch_pull(block_dev, dst.get(), o.bytes, o.piece, flags_dev, seq, count, s,
                                     nullptr, o.blocks));
    std::fill(spans.begin(), spans.end(), Span{});
    on_all([&](int wi) {
      Span& sp = spans[wi];
      sp = Span{Clock::now(), Clock::now(), 0};
      for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < count;) {
        const size_t b0 = i * o.piece, n = std::min(o.piece, o.bytes - b0);
        if (o.plain) {
          std::memcpy(block.get() + b0, src.data() + b0, n);
        } else if (o.pf) {
          prefetched_copy(block.get() + b0, src.data() + b0, n, o.pf);
        } else {
          upload::SlotWriter w(block.get() + b0, true);
          w.put(src.data() + b0, n);
          w.finish();
        }
        __atomic_store_n(flags.get() + i, seq, __ATOMIC_RELEASE);
        sp.bytes += n;
      }
      sp.b = Clock::now();
    });
    CUDA_CHECK(cudaStreamSynchronize(s));
    const Clock::time_point t1 = Clock::now();
    Clock::time_point first = spans[0].a, last = spans[0].b;  // the caller always works
    double rate = 0;
    int working = 0;
    for (const Span& sp : spans) {
      if (sp.a == Clock::time_point{}) continue;  // closed before this thread came
      first = std::min(first, sp.a), last = std::max(last, sp.b);
      if (sp.bytes) rate += sp.bytes / (us(sp.a, sp.b) * 1e3), ++working;
    }
    std::printf("%4d %8.1f %8.1f %10.1f %12.1f %15.1f\n", it, us(t0, t1), us(first, last),
                o.bytes / (us(first, last) * 1e3), working ? rate / working : 0.0, us(t0, first));
  }
  if (o.gpu) {  // the pull's copy is the source
    std::vector<uint8_t> back(o.bytes);
    CUDA_CHECK(cudaMemcpy(back.data(), dst.get(), o.bytes, cudaMemcpyDeviceToHost));
    if (back != src) return Status::runtime("the pulled bytes differ from the source");
  }
  CUDA_CHECK(cudaStreamDestroy(s));
  return Status::Ok();
}

}  // namespace
}  // namespace parvis::cuda

int main(int argc, char** argv) {
  parvis::cuda::Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto num = [&] { return i + 1 < argc ? std::strtoull(argv[++i], nullptr, 10) : 0ull; };
    if (a == "--evict") o.evict_mb = num();
    else if (a == "--tlb") o.tlb = true;
    else if (a == "--share") o.share = true;
    else if (a == "--nogpu") o.gpu = false;
    else if (a == "--plain") o.plain = true;
    else if (a == "--pf") o.pf = num();
    else if (a == "--gap") o.gap_ms = num();
    else if (a == "--threads") o.threads = std::max(1, int(num()));
    else if (a == "--piece") o.piece = std::max<size_t>(1, num()) << 10;
    else if (a == "--iters") o.iters = std::max(1, int(num()));
    else if (a == "--bytes") o.bytes = std::max<size_t>(1, num());
    else if (a == "--blocks") o.blocks = unsigned(std::max(1ull, num()));
    else {
      std::fprintf(stderr, "first_copy: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  const parvis::Status st = parvis::cuda::run(o);
  if (!st.ok()) {
    std::fprintf(stderr, "first_copy: %s\n", st.message.c_str());
    return 1;
  }
  return 0;
}
