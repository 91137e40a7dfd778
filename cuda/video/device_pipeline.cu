// The device video pipeline (device_pipeline.cuh). Per frame, with frames n and n + 1 in flight:
//
//   copy stream:     wait until frame n - 1's planes buffer is free, upload frame n + 1's planes
//                    (pinned slot -> planes buffer (n + 1) % 2)
//   matcher stream:  wait for frame n's upload; frame_grey (planes -> the matcher's source);
//                    the matcher's graph; count_rect on each matched rectangle; the counts back
//
// so frame n + 1's upload runs under frame n's compute. Everything is allocated in start() and
// init_slot(): the reader's slots (pinned), two planes buffers, the count, streams and events.
// Every CUDA call and launch is checked (file:line).
#include "video/device_pipeline.cuh"

#include <algorithm>
#include <string>
#include <vector>

#include "color/hsv.cuh"
#include "common.cuh"
#include "match/match_common.hpp"
#include "scan.cuh"
#include "video/frame_pixel.cuh"

namespace parvis::video {

namespace {

using cuda::DeviceBuffer;
using cuda::PinnedBuffer;

constexpr int kQuadsX = 32, kRowsY = 8;  // frame_grey's block: 32 quads (128 pixels) x 8 rows
constexpr int kCountThreads = 256;

// Planes -> the matcher's grey source, 4 pixels per thread (grey_quad).
__global__ void frame_grey(DevFrame f, const uint8_t* __restrict__ bytes, uint8_t* __restrict__ out,
                           size_t pitch) {
  const int x0 = 4 * int(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = int(blockIdx.y * blockDim.y + threadIdx.y);
  if (x0 < f.width && y < f.height) grey_quad(f, bytes, out, pitch, x0, y);
}

// The pixels of the rectangle whose RGB (frame_rgb_at) lies in the HSV range, added to *count.
__global__ void count_rect(DevFrame f, const uint8_t* __restrict__ bytes, Rect r,
                           cuda::hsv::DevRange range, unsigned long long* count) {
  __shared__ cuda::BlockScratch<unsigned> scratch;
  const unsigned n = unsigned(r.w) * unsigned(r.h);
  unsigned mine = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint8_t cr, cg, cb;
    frame_rgb_at(f, bytes, r.x + int(i % unsigned(r.w)), r.y + int(i / unsigned(r.w)), &cr, &cg, &cb);
    mine += cuda::hsv::in_range(cuda::hsv::rgb_to_hsv(cr, cg, cb), range) ? 1u : 0u;
  }
  const unsigned total = cuda::block_sum(mine, scratch);
  if (threadIdx.x == 0 && total) atomicAdd(count, (unsigned long long)total);
}

class DevicePipeline : public Pipeline {
 public:
  DevicePipeline(const PipelineConfig& config, DeviceMatchOps ops, int tw, int th)
      : config_(config), ops_(ops), tw_(tw), th_(th) {}

  ~DevicePipeline() override {
    // Nothing may still read the slots or buffers freed after this.
    if (copy_) cudaStreamSynchronize(copy_);
    if (compute_) cudaStreamSynchronize(compute_);
    for (Frame& f : frames_)
      for (cudaEvent_t e : {f.up_start, f.uploaded, f.consumed})
        if (e) cudaEventDestroy(e);
    for (cudaEvent_t e : {c_start_, c_end_})
      if (e) cudaEventDestroy(e);
    if (copy_) cudaStreamDestroy(copy_);
  }

  Status create(const Image& gray_template) {
    return match::matcher_create(gray_template, config_.match, &matcher_);
  }

  Status start(const FrameFormat& fmt, int slots) override {
    if (fmt.width < tw_ || fmt.height < th_)
      return Status::bad_input("the frames (" + std::to_string(fmt.width) + "x" +
                               std::to_string(fmt.height) + ") are smaller than the template (" +
                               std::to_string(tw_) + "x" + std::to_string(th_) + ")");
    fmt_ = fmt;
    dev_ = dev_frame(fmt);
    // What the kernels read: Y, Cb, Cr (not a Y4M alpha plane), or the packed / grey pixels.
    upload_bytes_ = fmt.layout == Layout::Yuv ? fmt.luma_bytes() + 2 * fmt.chroma_bytes() : fmt.frame_bytes();
    pinned_ = std::vector<PinnedBuffer<uint8_t>>(size_t(slots));
    PARVIS_TRY(ops_.source(matcher_.get(), fmt.width, fmt.height, &d_src_, &pitch_, &compute_));
    if (pitch_ % 4 != 0 || pitch_ < (size_t(fmt.width) + 3) / 4 * 4)
      return Status::runtime("the matcher's source pitch does not fit the conversion kernel");
    CUDA_CHECK(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking));
    for (Frame& f : frames_) {
      PARVIS_TRY(f.planes.alloc(upload_bytes_));
      CUDA_CHECK(cudaEventCreate(&f.up_start));
      CUDA_CHECK(cudaEventCreate(&f.uploaded));
      CUDA_CHECK(cudaEventCreateWithFlags(&f.consumed, cudaEventDisableTiming));
    }
    CUDA_CHECK(cudaEventCreate(&c_start_));
    CUDA_CHECK(cudaEventCreate(&c_end_));
    if (config_.color.enabled) {
      PARVIS_TRY(cuda::hsv::upload_tables());
      PARVIS_TRY(reserve_counts(1));
    }
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&num_sms_, cudaDevAttrMultiProcessorCount, dev));
    return Status::Ok();
  }

  // The slot's bytes in pinned memory (the upload reads them straight); host images only where
  // an output wants whole RGB frames.
  Status init_slot(int i, FrameSlot* slot) override {
    PARVIS_TRY(pinned_[size_t(i)].alloc(fmt_.frame_bytes()));
    slot->bytes = pinned_[size_t(i)].get();
    if (!config_.need_host_rgb) return Status::Ok();
    PARVIS_TRY(image_alloc(fmt_.width, fmt_.height, 3, &slot->rgb));
    return image_alloc(fmt_.width, fmt_.height, 1, &slot->gray);
  }

  Status prepare(FrameSlot* slot) override {
    if (!config_.need_host_rgb) return Status::Ok();
    frame_to_rgb_gray(fmt_, slot->bytes, &slot->rgb, &slot->gray);
    slot->have_rgb = true;
    return Status::Ok();
  }

  Status submit(FrameSlot* slot) override {
    Frame& f = frames_[size_t(submitted_ % kDepth)];
    f.slot = slot;
    // The planes buffer is free once the frame that used it last has been converted and counted.
    CUDA_CHECK(cudaStreamWaitEvent(copy_, f.consumed, 0));
    CUDA_CHECK(cudaEventRecord(f.up_start, copy_));
    CUDA_CHECK(cudaMemcpyAsync(f.planes.get(), slot->bytes, upload_bytes_, cudaMemcpyHostToDevice, copy_));
    CUDA_CHECK(cudaEventRecord(f.uploaded, copy_));
    ++submitted_;
    return Status::Ok();
  }

  Status collect(FrameResult* out) override {
    Frame& f = frames_[size_t(collected_++ % kDepth)];
    FrameSlot* slot = f.slot;
    f.slot = nullptr;
    const double t0 = now_ms();
    FrameResult& r = *out;  // its matches' memory stays from frame to frame
    r.index = slot->index;
    CUDA_CHECK(cudaStreamWaitEvent(compute_, f.uploaded, 0));
    CUDA_CHECK(cudaEventRecord(c_start_, compute_));
    const dim3 block(kQuadsX, kRowsY);
    const dim3 grid(cuda::div_up(cuda::div_up(size_t(fmt_.width), 4), kQuadsX), cuda::div_up(size_t(fmt_.height), kRowsY));
    frame_grey<<<grid, block, 0, compute_>>>(dev_, f.planes.get(), d_src_, pitch_);
    CUDA_CHECK_LAUNCH();
    PARVIS_TRY(ops_.run(matcher_.get(), &result_));  // waits for its result
    PARVIS_TRY(frame_matches(config_.match, result_, &r));
    r.have_color = config_.color.enabled;
    const size_t k = r.matches.size();
    if (r.have_color && k > 0) {
      PARVIS_TRY(reserve_counts(k));
      const size_t n = size_t(tw_) * size_t(th_);
      const unsigned blocks = std::min<unsigned>(cuda::div_up(n, kCountThreads), unsigned(4 * num_sms_));
      CUDA_CHECK(cudaMemsetAsync(d_count_.get(), 0, k * sizeof(unsigned long long), compute_));
      for (size_t i = 0; i < k; ++i) {
        const Rect rect{r.matches[i].at.x, r.matches[i].at.y, tw_, th_};
        count_rect<<<blocks, kCountThreads, 0, compute_>>>(dev_, f.planes.get(), rect,
                                                           cuda::hsv::to_dev(config_.color.range), d_count_.get() + i);
        CUDA_CHECK_LAUNCH();
      }
      CUDA_CHECK(cudaMemcpyAsync(h_count_.get(), d_count_.get(), k * sizeof(unsigned long long),
                                 cudaMemcpyDeviceToHost, compute_));
    }
    CUDA_CHECK(cudaEventRecord(f.consumed, compute_));
    CUDA_CHECK(cudaEventRecord(c_end_, compute_));
    CUDA_CHECK(cudaEventSynchronize(c_end_));
    if (r.have_color)
      for (size_t i = 0; i < k; ++i) {
        FrameMatch& fm = r.matches[i];
        fm.matching = h_count_.get()[i];
        fm.total = uint64_t(tw_) * uint64_t(th_);
        set_verdict(config_.color, &fm);
      }
    float link = 0, device = 0;
    CUDA_CHECK(cudaEventElapsedTime(&link, f.up_start, f.uploaded));
    CUDA_CHECK(cudaEventElapsedTime(&device, c_start_, c_end_));
    r.link_ms = link;
    r.device_ms = device;
    r.ms = slot->prepare_ms + (now_ms() - t0);
    return Status::Ok();
  }

  int depth() const override { return kDepth; }
  int template_width() const override { return tw_; }
  int template_height() const override { return th_; }

 private:
  // Room for k colour counts, on the device and pinned on the host (grown, never shrunk: a
  // steady stream allocates nothing). Only between frames: nothing reads them then.
  Status reserve_counts(size_t k) {
    if (k <= counts_cap_) return Status::Ok();
    const size_t cap = std::max(k, 2 * counts_cap_);
    PARVIS_TRY(d_count_.alloc(cap));
    PARVIS_TRY(h_count_.alloc(cap));
    counts_cap_ = cap;
    return Status::Ok();
  }

  static constexpr int kDepth = 2;  // frames in flight: one computing, the next uploading
  struct Frame {
    DeviceBuffer<uint8_t> planes;
    cudaEvent_t up_start = nullptr, uploaded = nullptr;  // around the upload (copy stream)
    cudaEvent_t consumed = nullptr;  // the compute is done with `planes` (matcher stream)
    FrameSlot* slot = nullptr;       // submitted, not yet collected
  };

  PipelineConfig config_;
  DeviceMatchOps ops_;
  int tw_, th_;
  match::MatcherPtr matcher_;
  match::Result result_;
  FrameFormat fmt_;
  DevFrame dev_;
  size_t upload_bytes_ = 0;
  std::vector<PinnedBuffer<uint8_t>> pinned_;
  Frame frames_[kDepth];
  uint8_t* d_src_ = nullptr;  // the matcher's source buffer
  size_t pitch_ = 0;
  cudaStream_t compute_ = nullptr;  // the matcher's stream (its own: not destroyed here)
  cudaStream_t copy_ = nullptr;
  cudaEvent_t c_start_ = nullptr, c_end_ = nullptr;
  DeviceBuffer<unsigned long long> d_count_;
  PinnedBuffer<unsigned long long> h_count_;
  size_t counts_cap_ = 0;
  int num_sms_ = 1;
  int64_t submitted_ = 0, collected_ = 0;
};

}  // namespace

Status make_device_pipeline(const Image& gray_template, const PipelineConfig& config,
                            DeviceMatchOps ops, std::unique_ptr<Pipeline>* out) {
  PARVIS_TRY(match::check_template(gray_template));
  auto p = std::make_unique<DevicePipeline>(config, ops, gray_template.width, gray_template.height);
  PARVIS_TRY(p->create(gray_template));
  *out = std::move(p);
  return Status::Ok();
}

}  // namespace parvis::video
