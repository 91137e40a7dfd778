// The video pipeline (seed 000's production line): frames streamed from a Y4M file, raw frames
// or ffmpeg; every frame matched against a template prepared once and, optionally, the matched
// capsule called full or empty by its pixels in an HSV range. docs/DESIGN.md, "Video", has the
// contract: a frame's result equals `./main match` on that frame written out as an image.
//
// The parts, each replaceable on its own:
//   FrameSource  reads one frame's bytes, in the stream's own layout (source.hpp)
//   FrameReader  a thread that keeps a few frames ahead in reusable slots (reader.hpp)
//   Pipeline     turns a frame's bytes into a result: convert, match, count (this file);
//                the host pipeline (pipeline.cpp) converts on the reader thread; cuda-opt's
//                device pipeline (cuda/video/device_pipeline.cu) uploads the frame's planes
//                and converts, matches and counts on the GPU.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "color/color.hpp"
#include "common/image.hpp"
#include "common/status.hpp"
#include "match/match.hpp"
#include "video/yuv.hpp"

namespace parvis::video {

// How a frame's bytes are laid out.
enum class Layout : uint8_t {
  Yuv,    // planar 8-bit Y'CbCr: Y (W x H), then Cb and Cr (chroma_width x chroma_height) unless
          // mono, then an alpha plane (W x H) when `alpha` (skipped)
  Rgb24,  // packed R, G, B
  Bgr24,  // packed B, G, R
  Gray,   // one byte per pixel, taken as R = G = B
};

struct FrameFormat {
  int width = 0, height = 0;
  Layout layout = Layout::Yuv;
  // Yuv only.
  int chroma_sx = 2, chroma_sy = 2;  // subsampling across (1, 2 or 4) and down (1 or 2)
  bool mono = false;                 // luma only
  bool alpha = false;                // an alpha plane follows (Y4M C444alpha)
  YuvMatrix matrix = YuvMatrix::Bt601;
  YuvRange range = YuvRange::Limited;
  // The stream's frame rate, num/den (0/0 when unknown), for the annotated output.
  int fps_num = 0, fps_den = 0;

  int chroma_width() const { return (width + chroma_sx - 1) / chroma_sx; }
  int chroma_height() const { return (height + chroma_sy - 1) / chroma_sy; }
  size_t luma_bytes() const { return size_t(width) * size_t(height); }
  size_t chroma_bytes() const {  // one chroma plane
    return mono ? 0 : size_t(chroma_width()) * size_t(chroma_height());
  }
  // Bytes of one frame's pixels (Y4M: after its FRAME line).
  size_t frame_bytes() const;
  // "1920x1080 yuv420 limited bt601", for messages and --help output.
  std::string describe() const;
};

// A frame's bytes -> its grey (gray_of of its RGB) and, when `rgb` is not null, its RGB (3
// channels), both already allocated at the frame's size: the one host conversion every
// version's results are defined by (docs/DESIGN.md, "Video"). Chroma is upsampled by
// repetition: a Cb/Cr sample serves every pixel of its sx x sy block.
void frame_to_rgb_gray(const FrameFormat& fmt, const uint8_t* bytes, Image* rgb, Image* gray);
// The same RGB for the pixels of `r` only (the matched rectangle, for the colour check).
void rect_to_rgb(const FrameFormat& fmt, const uint8_t* bytes, Rect r, Image* rgb);

// One frame in the reader's ring: its bytes, and what the pipeline made of them on the host.
struct FrameSlot {
  int64_t index = -1;    // the frame's number in the stream, from 0
  uint8_t* bytes = nullptr;  // FrameFormat::frame_bytes(), owned by the pipeline (init_slot)
  Image rgb, gray;           // host conversions (Pipeline::prepare), reused frame after frame
  bool have_rgb = false;     // rgb holds this whole frame (gray always does, once prepared)
  double prepare_ms = 0;     // time of prepare() on the reader thread
};

// One reported match of a frame and, with the colour check, its verdict.
struct FrameMatch {
  match::Position at;
  uint64_t matching = 0, total = 0;  // pixels of the matched rectangle in the HSV range, all
  bool full = false;
};

struct FrameResult {
  int64_t index = -1;
  // What match::matcher_run reports (Result::best): the best position, the K best, or with a
  // selection (--all, --min-distance) its choice, which may be empty. Reused frame after frame.
  std::vector<FrameMatch> matches;
  bool have_color = false;
  double ms = 0;  // the frame's own work: conversion + match + colour (not time spent queued)
  // A device pipeline's split, by CUDA events (< 0 on the host pipeline): the upload of the
  // frame's planes, and the device work from the conversion to the colour count's result.
  double link_ms = -1, device_ms = -1;
};

struct PipelineConfig {
  match::Params match;  // top_k and selection: what each frame reports (FrameResult::matches)
  color::ColorCheck color;  // the colour check (--color ...)
  bool need_host_rgb = false;  // an output wants whole frames in RGB on the host (run_video sets it)
  int jobs = 1;                // frames matched at once on the host, one matcher each (--jobs)
  // CUDA versions: convert on the host (the host pipeline) instead of on the GPU. The CLI sets
  // it from PARVIS_TUNING's video.host_convert; the bench times both.
  bool host_convert = false;
};

// Turns frames into results. Frames are submitted in stream order; collect() returns them in
// the same order. A pipeline may keep up to depth() frames in flight (a device pipeline
// uploads frame n + 1 while frame n computes); a slot is the pipeline's until its frame is
// collected.
class Pipeline {
 public:
  virtual ~Pipeline() = default;
  // Once, before any frame: the stream's format (the template must fit in a frame) and how
  // many slots the reader will cycle through.
  virtual Status start(const FrameFormat& fmt, int slots) = 0;
  // Once per slot, after start(): its byte buffer (pinned host memory on a device pipeline)
  // and the host images prepare() fills, all allocated here and reused for every frame.
  virtual Status init_slot(int i, FrameSlot* slot) = 0;
  // On the reader thread, right after the frame was read: host work that may run ahead of
  // the compute (the host pipeline converts to RGB and grey here).
  virtual Status prepare(FrameSlot* slot) = 0;
  virtual Status submit(FrameSlot* slot) = 0;
  virtual Status collect(FrameResult* out) = 0;
  virtual int depth() const = 0;
  // The template's size (the matched rectangle's).
  virtual int template_width() const = 0;
  virtual int template_height() const = 0;
};

// The frame's matches from a run's Result (positions only; colour counts are the pipeline's):
// every reported position, in order. An empty list without a selection is an error.
Status frame_matches(const match::Params& params, const match::Result& res, FrameResult* out);
// The verdict of a match whose counts are set: full when at least full_ratio is in range.
inline void set_verdict(const color::ColorCheck& check, FrameMatch* m) {
  m->full = double(m->matching) / double(m->total) >= check.full_ratio;
}

// Host memory for the reader's slots — each frame's bytes, its grey image and (with `rgb`) its
// RGB image — made once, for pipelines that work on host frames.
class HostSlots {
 public:
  void start(const FrameFormat& fmt, int slots) {
    fmt_ = fmt;
    bytes_.assign(size_t(slots), {});
  }
  Status init_slot(int i, FrameSlot* slot, bool rgb) {
    bytes_[size_t(i)].assign(fmt_.frame_bytes(), 0);
    slot->bytes = bytes_[size_t(i)].data();
    if (rgb) PARVIS_TRY(image_alloc(fmt_.width, fmt_.height, 3, &slot->rgb));
    return image_alloc(fmt_.width, fmt_.height, 1, &slot->gray);
  }
  const FrameFormat& format() const { return fmt_; }

 private:
  FrameFormat fmt_;
  std::vector<std::vector<uint8_t>> bytes_;
};

// The pipeline of this version for this configuration, defined per version: cuda-opt's device
// pipeline (cuda/video/opt.cu: planes uploaded, converted, matched and counted on the GPU),
// the host pipeline elsewhere (src/video/none.cpp: match::matcher_run on a host grey frame,
// color::count_in_rect on its RGB).
Status make_pipeline(const Image& gray_template, const PipelineConfig& config,
                     std::unique_ptr<Pipeline>* out);
// The host pipeline itself (frames converted on the host), whatever the version.
Status make_host_pipeline(const Image& gray_template, const PipelineConfig& config,
                          std::unique_ptr<Pipeline>* out);

}  // namespace parvis::video
