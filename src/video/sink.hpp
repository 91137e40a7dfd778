// --out: the frames with a red rectangle on each match, as a Y4M file (written by us) or any
// other video file through ffmpeg (by the extension). Written into a temporary of the run's
// Outputs (common/output.hpp), which commits it with the run's other outputs: a run that fails
// leaves no file behind.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "common/image.hpp"
#include "common/output.hpp"
#include "common/status.hpp"
#include "video/video.hpp"

namespace parvis::video {

class AnnotatedSink {
 public:
  virtual ~AnnotatedSink() = default;  // unfinished: ffmpeg is stopped
  // One frame, in order, with its matched rectangles. Uses slot.bytes (Y4M of a YUV stream:
  // the rectangles are painted into the planes, every other byte kept) or slot.rgb.
  virtual Status write(const FrameSlot& slot, const std::vector<Rect>& matches) = 0;
  // Completes the file (ffmpeg: waits for it); Outputs::commit then renames it into place.
  virtual Status finish() = 0;
};

// `.y4m`: a YUV stream keeps its own layout (chroma, range); RGB, grey and mono streams are
// written as 4:4:4 full-range BT.601. Other extensions: ffmpeg (rgb24 frames on its stdin).
// `path` must have been declared in `outputs`.
Status open_sink(Outputs* outputs, const std::string& path, const FrameFormat& fmt, const std::string& ffmpeg,
                 std::unique_ptr<AnnotatedSink>* out);

// Whether open_sink's sink for `path` reads FrameSlot::rgb (else only the frame's bytes: a
// YUV stream with chroma written as Y4M is painted in its own planes).
bool sink_needs_rgb(const std::string& path, const FrameFormat& fmt);

// The rectangle's outline width: 2 px, 3 on frames of 1000 px or more (as match's --out).
int outline_thickness(int width, int height);

}  // namespace parvis::video
