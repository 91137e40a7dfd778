// Shared CUDA helpers: every API call and launch checked with file:line, RAII device and
// pinned buffers, an event timer. Primitives (warp/block scans, reductions) are added here
// as thread -> warp -> block layers, CUB style, when more than one kernel needs them.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/timing.hpp"
#include "common/status.hpp"

namespace parvis::cuda {

// Turns a CUDA error into a runtime Status naming the call site.
inline Status cuda_status(cudaError_t e, const char* what, const char* file, int line) {
  if (e == cudaSuccess) return Status::Ok();
  return Status::runtime(std::string("CUDA error at ") + file + ":" + std::to_string(line) + ": " +
                         what + ": " + cudaGetErrorString(e));
}

}  // namespace parvis::cuda

// Checks a CUDA API call; on failure returns a runtime Status from the enclosing function.
#define CUDA_CHECK(call)                                                                   \
  do {                                                                                     \
    cudaError_t cuda_check_e_ = (call);                                                    \
    if (cuda_check_e_ != cudaSuccess)                                                      \
      return ::parvis::cuda::cuda_status(cuda_check_e_, #call, __FILE__, __LINE__);        \
  } while (0)

// Checks the launch just made (configuration errors) without synchronising.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

// Host -> device copies go on the stream of the kernels that read them (cudaMemcpyAsync), or are
// waited for. cudaMemcpy / cudaMemcpyToSymbol from pageable memory return once the bytes are
// staged, before the DMA lands, on the legacy stream — and our streams are non-blocking, so a
// kernel on one may read the destination first. Seen as wrong cuda-opt batch items while other
// processes loaded the GPU (the template's upload was slow enough to lose the race).

namespace parvis::cuda {

// A device allocation owned by its scope (plain cudaMalloc, never managed memory).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    swap(o);
    return *this;
  }
  ~DeviceBuffer() { cudaFree(ptr_); }

  // (Re)allocates `count` elements; checks the request against free device memory first
  // so that an oversized request fails with a clear message instead of a driver error.
  Status alloc(size_t count) {
    if (count == count_ && ptr_) return Status::Ok();
    cudaFree(ptr_);
    ptr_ = nullptr;
    count_ = 0;
    if (count == 0) return Status::Ok();
    if (count > SIZE_MAX / sizeof(T)) return Status::bad_input("device buffer size overflows");
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (count * sizeof(T) > free_b)
      return Status::runtime("needs " + std::to_string(count * sizeof(T) >> 20) +
                             " MiB of GPU memory, only " + std::to_string(free_b >> 20) +
                             " MiB free");
    CUDA_CHECK(cudaMalloc(&ptr_, count * sizeof(T)));
    count_ = count;
    return Status::Ok();
  }
  T* get() const { return ptr_; }
  size_t size() const { return count_; }

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
  }
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

// Page-locked host memory, for fast and asynchronous transfers.
template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { cudaFreeHost(ptr_); }
  Status alloc(size_t count) {
    if (count <= count_ && ptr_) return Status::Ok();
    cudaFreeHost(ptr_);
    ptr_ = nullptr;
    count_ = 0;
    if (count > SIZE_MAX / sizeof(T)) return Status::bad_input("host buffer size overflows");
    CUDA_CHECK(cudaMallocHost(&ptr_, count * sizeof(T)));
    count_ = count;
    return Status::Ok();
  }
  // The same, mapped into the device's address space (zero-copy): kernels may write it
  // through device_pointer(), and the host reads it after synchronising.
  Status alloc_mapped(size_t count) {
    cudaFreeHost(ptr_);
    ptr_ = nullptr;
    count_ = 0;
    if (count > SIZE_MAX / sizeof(T)) return Status::bad_input("host buffer size overflows");
    CUDA_CHECK(cudaHostAlloc(&ptr_, count * sizeof(T), cudaHostAllocMapped));
    count_ = count;
    return Status::Ok();
  }
  Status device_pointer(T** out) const {
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(out), ptr_, 0));
    return Status::Ok();
  }
  T* get() const { return ptr_; }
  size_t size() const { return count_; }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

// Times GPU work between start() and stop() with CUDA events (milliseconds).
class EventTimer {
 public:
  EventTimer() {
    cudaEventCreate(&a_);
    cudaEventCreate(&b_);
  }
  ~EventTimer() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  Status start(cudaStream_t s = 0) {
    CUDA_CHECK(cudaEventRecord(a_, s));
    return Status::Ok();
  }
  Status stop(float* ms, cudaStream_t s = 0) {
    CUDA_CHECK(cudaEventRecord(b_, s));
    CUDA_CHECK(cudaEventSynchronize(b_));
    CUDA_CHECK(cudaEventElapsedTime(ms, a_, b_));
    return Status::Ok();
  }

 private:
  cudaEvent_t a_{}, b_{};
};

// Times consecutive stages of a stream with one event at each boundary: mark(group, name)
// closes the stage that began at the previous mark. collect() waits and appends the stages to
// Timings::stages (a disabled timer marks nothing, so callers need no branches).
class StageTimer {
 public:
  explicit StageTimer(bool enabled, cudaStream_t s = 0) : enabled_(enabled), stream_(s) {}
  bool enabled() const { return enabled_; }
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;
  ~StageTimer() {
    for (const Mark& m : marks_) cudaEventDestroy(m.event);
  }
  Status mark(const char* group, const char* name) {
    if (!enabled_) return Status::Ok();
    Mark m{nullptr, group, name};
    CUDA_CHECK(cudaEventCreate(&m.event));
    marks_.push_back(m);
    CUDA_CHECK(cudaEventRecord(m.event, stream_));
    return Status::Ok();
  }
  Status collect(Timings* t) {
    if (marks_.empty()) return Status::Ok();
    CUDA_CHECK(cudaEventSynchronize(marks_.back().event));
    for (size_t i = 1; i < marks_.size(); ++i) {
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, marks_[i - 1].event, marks_[i].event));
      t->stages.push_back(Timings::Stage{marks_[i].group, marks_[i].name, double(ms)});
    }
    return Status::Ok();
  }

 private:
  struct Mark {
    cudaEvent_t event;
    const char* group;
    const char* name;
  };
  bool enabled_;
  cudaStream_t stream_;
  std::vector<Mark> marks_;
};

// Fails with a clear runtime error when no CUDA device is usable.
Status require_device();

inline unsigned div_up(size_t a, size_t b) { return unsigned((a + b - 1) / b); }

}  // namespace parvis::cuda
