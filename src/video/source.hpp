// Where frames come from: a Y4M file or stdin, raw frames (--raw WxH --pix-fmt ...), or any
// other video file through ffmpeg (spawned to write PPM frames, i.e. raw RGB with a size).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.hpp"
#include "video/video.hpp"
#include "video/y4m.hpp"

namespace parvis::video {

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  // Known once the source is open (the first frame's header has been read for ffmpeg).
  const FrameFormat& format() const { return fmt_; }
  // Reads the next frame's bytes (format().frame_bytes()) into dst. At a clean end of the
  // stream *end = true and nothing is read; a frame cut short is bad input (exit 2) naming it.
  virtual Status read_frame(uint8_t* dst, bool* end) = 0;
  // After the last frame was read (or when stopping early): whatever must be checked or
  // cleaned up (ffmpeg's exit status). `early` = we stop before the end of the stream.
  virtual Status finish(bool early) {
    (void)early;
    return Status::Ok();
  }
  // How many frames the stream holds, when that can be known up front (a regular file); -1
  // otherwise. For the progress line only.
  int64_t frame_count() const { return frame_count_; }
  const std::string& name() const { return name_; }

 protected:
  FrameFormat fmt_;
  int64_t frame_count_ = -1;
  std::string name_;
};

struct SourceOptions {
  std::string path;      // "-" = stdin
  std::string raw_size;  // "WxH": raw frames (then pix_fmt says their layout)
  std::string pix_fmt = "rgb24";
  RangeChoice range = RangeChoice::Auto;
  YuvMatrix matrix = YuvMatrix::Bt601;
  std::string ffmpeg = "ffmpeg";
};

// Parses --pix-fmt: rgb24, bgr24, gray, yuv420p, yuv422p, yuv444p (usage error otherwise).
Status parse_pix_fmt(const std::string& text, FrameFormat* fmt);

// Opens the source: --raw when raw_size is set; else a Y4M stream when the bytes start with
// "YUV4MPEG2"; else (files only) ffmpeg. Errors are bad input (exit 2): an empty stream, a bad
// header, a non-Y4M stdin, ffmpeg missing.
Status open_source(const SourceOptions& opts, std::unique_ptr<FrameSource>* out);

}  // namespace parvis::video
