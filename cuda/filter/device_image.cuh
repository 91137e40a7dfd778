// What both CUDA filter versions share: the image pair on the GPU (input and output, rows `pitch`
// bytes apart), the staged copier to and from the host (cuda/upload/upload.hpp), a stream and the events that time each step, the
// divisor of the exact finish, and the checks of the prepared filter's arguments.
#pragma once
#include <cstring>
#include <string>
#include <vector>

#include "common.cuh"
#include "filter/filter.hpp"
#include "filter/kernel_math.hpp"
#include "upload/upload.hpp"

namespace parvis::filter::cuda_filter {

using cuda::DeviceBuffer;
using cuda::PinnedBuffer;

// round_clamp(sum, d) (filter.hpp) without a division and without branches, where the host found
// a magic number exact for every value that can reach it (make_divider; every d < 2^23):
//   t = min(max(sum + half, lo), cap),  q = umulhi(t, magic) >> shift.
// For d >= 2: half = d/2, lo = 0, cap = 255 d (the quotient reaches 255 there anyway). For d = 1
// every value is shifted up by one, half = lo = 1, cap = 256, magic = 2^32 - 1: umulhi(t, 2^32 - 1)
// = t - 1 for 1 <= t <= 256. Otherwise (`exact` false) a plain division.
struct DeviceDivider {
  int32_t half = 0, lo = 0, cap = 0;
  uint32_t magic = 0;
  int shift = 0;
  bool exact = false;
  int32_t divisor = 1;
};

inline DeviceDivider make_device_divider(int32_t d) {
  DeviceDivider v;
  v.divisor = d;
  v.half = d / 2;
  Divider div;
  if (d == 1) {
    v.half = v.lo = 1;
    v.cap = 256;
    v.magic = 0xFFFFFFFFu;
    v.exact = true;
  } else if (int64_t(d) * 255 < (int64_t(1) << 31) && make_divider(d, int64_t(d) * 255, 32, &div)) {
    v.cap = d * 255;
    v.magic = div.magic;
    v.shift = div.shift;
    v.exact = true;
  }
  return v;
}

// The magic-number finish (DeviceDivider::exact).
__device__ __forceinline__ uint32_t finish_exact(int32_t sum, const DeviceDivider& v) {
  return __umulhi(uint32_t(min(max(sum + v.half, v.lo), v.cap)), v.magic) >> v.shift;
}

__device__ __forceinline__ uint32_t finish(int32_t sum, const DeviceDivider& v) {
  if (v.exact) return finish_exact(sum, v);
  return uint32_t(min(max(sum + v.half, 0) / v.divisor, 255));
}

// The image pair on the GPU and the copies to and from it.
class DeviceImages {
 public:
  DeviceImages() = default;
  DeviceImages(const DeviceImages&) = delete;
  DeviceImages& operator=(const DeviceImages&) = delete;
  ~DeviceImages() {
    if (ev_[0]) cudaEventDestroy(ev_[0]);
    if (ev_[1]) cudaEventDestroy(ev_[1]);
    if (stream_) cudaStreamDestroy(stream_);
  }

  // Rows of width * channels bytes, `pitch_align` (a power of two) apart on the GPU.
  Status init(int width, int height, int channels, size_t pitch_align) {
    PARVIS_TRY(check_image_size(width, height, channels));
    width_ = width;
    height_ = height;
    channels_ = channels;
    row_bytes_ = size_t(width) * size_t(channels);
    pitch_ = (row_bytes_ + pitch_align - 1) & ~(pitch_align - 1);
    PARVIS_TRY(in_.alloc(pitch_ * size_t(height)));
    PARVIS_TRY(out_.alloc(pitch_ * size_t(height)));
    PARVIS_TRY(copier_.init(cuda::upload_tuning()));
    PARVIS_TRY(copier_.prepare(row_bytes_, size_t(height), pitch_));  // pinned slots, once per filter
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&ev_[0]));
    CUDA_CHECK(cudaEventCreate(&ev_[1]));
    return Status::Ok();
  }

  Status check_shape(const Image& img) const {
    if (img.width != width_ || img.height != height_ || img.channels != channels_)
      return Status::bad_input("filter: image is " + std::to_string(img.width) + "x" +
                               std::to_string(img.height) + "x" + std::to_string(img.channels) +
                               ", the filter was prepared for " + std::to_string(width_) + "x" +
                               std::to_string(height_) + "x" + std::to_string(channels_));
    return Status::Ok();
  }

  // Host rows -> GPU by the StagedCopier (cuda/upload/upload.hpp). upload_ms: the
  // wall time until the copy is done.
  Status upload(const Image& img, Timings* t) {
    PARVIS_TRY(check_shape(img));
    const double h0 = now_ms();
    cuda::TransferInfo info;
    PARVIS_TRY(copier_.to_device(in_.get(), pitch_, img.row(0), img.stride, row_bytes_,
                                 size_t(height_), stream_, &info));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    uploaded_ = true;
    if (t) {
      t->upload_ms = now_ms() - h0;
      t->upload_bytes = double(info.bytes);
      t->upload_how = info.describe();
    }
    return Status::Ok();
  }

  // Runs `enqueue(stream)` between two events. compute_ms: the kernels alone.
  template <typename Enqueue>
  Status compute(Enqueue enqueue, Timings* t) {
    if (!uploaded_) return Status::runtime("filter_compute before filter_upload");
    CUDA_CHECK(cudaEventRecord(ev_[0], stream_));
    PARVIS_TRY(enqueue(stream_));
    CUDA_CHECK(cudaEventRecord(ev_[1], stream_));
    float ms = 0;
    CUDA_CHECK(cudaEventSynchronize(ev_[1]));
    CUDA_CHECK(cudaEventElapsedTime(&ms, ev_[0], ev_[1]));
    computed_ = true;
    if (t) t->compute_ms = double(ms);
    return Status::Ok();
  }

  // GPU -> a new host image, by the StagedCopier in reverse. download_ms: the wall time.
  Status download(Image* out, Timings* t) {
    if (!computed_) return Status::runtime("filter_download before filter_compute");
    Image img;
    PARVIS_TRY(image_alloc(width_, height_, channels_, &img));
    const double h0 = now_ms();
    PARVIS_TRY(copier_.to_host(img.row(0), img.stride, out_.get(), pitch_, row_bytes_,
                               size_t(height_), stream_));
    if (t) t->download_ms = now_ms() - h0;
    *out = std::move(img);
    return Status::Ok();
  }

  const uint8_t* in() const { return in_.get(); }
  uint8_t* out() const { return out_.get(); }
  int width() const { return width_; }
  int height() const { return height_; }
  int channels() const { return channels_; }
  size_t pitch() const { return pitch_; }
  size_t row_bytes() const { return row_bytes_; }
  cudaStream_t stream() const { return stream_; }

 private:
  int width_ = 0, height_ = 0, channels_ = 0;
  size_t row_bytes_ = 0, pitch_ = 0;
  DeviceBuffer<uint8_t> in_, out_;
  cuda::StagedCopier copier_;  // host <-> GPU (pinned slots, a few host threads)
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ev_[2] = {nullptr, nullptr};
  bool uploaded_ = false, computed_ = false;
};

// Taps in a __constant__ symbol are shared by every prepared filter of the process: each filter
// gets an id (never reused) and reloads the symbol, on its stream and before its timed span, when
// the symbol holds another filter's taps (`*owner`: whose taps are there).
inline uint64_t next_filter_id() {
  static uint64_t next = 1;
  return next++;
}
inline Status ensure_constant_taps(const void* symbol, uint64_t* owner, uint64_t id,
                                   const std::vector<int32_t>& taps, cudaStream_t stream) {
  if (*owner == id) return Status::Ok();
  CUDA_CHECK(cudaMemcpyToSymbolAsync(symbol, taps.data(), taps.size() * sizeof(int32_t), 0,
                                     cudaMemcpyHostToDevice, stream));
  *owner = id;
  return Status::Ok();
}

// FilterTuning::block_threads checked: a multiple of 32 up to 1024.
inline Status check_block_threads(int n) {
  if (n < 32 || n > 1024 || n % 32 != 0)
    return Status::usage("threads per block must be a multiple of 32 in 32..1024, not " + std::to_string(n));
  return Status::Ok();
}

}  // namespace parvis::filter::cuda_filter
