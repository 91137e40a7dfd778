// The annotated output (sink.hpp).
#include "video/sink.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include "common/output.hpp"
#include "video/process.hpp"
#include "video/y4m.hpp"

namespace parvis::video {

int outline_thickness(int width, int height) { return (width >= 1000 || height >= 1000) ? 3 : 2; }

namespace {

constexpr Rgb kRed{255, 0, 0};

// The annotated output's descriptor, handed out by the run's Outputs (its temporary, or a
// device written in place); the set closes and commits it.
class StreamFile {
 public:
  Status open(Outputs* outputs, const std::string& path) {
    path_ = path;
    return outputs->stream(path, &fd_);
  }
  Status write(const void* data, size_t n) { return write_fd(fd_, data, n, path_); }

 private:
  int fd_ = -1;
  std::string path_;
};

// The frame's RGB with the red outline, in a buffer made once.
class Annotator {
 public:
  Status init(const FrameFormat& fmt) {
    thickness_ = outline_thickness(fmt.width, fmt.height);
    return image_alloc(fmt.width, fmt.height, 3, &rgb_);
  }
  const Image& annotate(const FrameSlot& slot, const std::vector<Rect>& matches) {
    for (int y = 0; y < rgb_.height; ++y)
      std::memcpy(rgb_.row(y), slot.rgb.row(y), size_t(rgb_.width) * 3);
    for (const Rect& m : matches) draw_rect(&rgb_, m, kRed, thickness_);
    return rgb_;
  }

 private:
  Image rgb_;
  int thickness_ = 2;
};

class Y4mSink : public AnnotatedSink {
 public:
  Status open(Outputs* outputs, const std::string& path, const FrameFormat& in) {
    in_ = in;
    out_ = in;
    // A YUV stream with chroma keeps its layout; the others become 4:4:4 full-range BT.601.
    paint_planes_ = !sink_needs_rgb(path, in);
    if (!paint_planes_) {
      out_.layout = Layout::Yuv;
      out_.chroma_sx = out_.chroma_sy = 1;
      out_.mono = out_.alpha = false;
      out_.matrix = YuvMatrix::Bt601;
      out_.range = YuvRange::Full;
      PARVIS_TRY(annotator_.init(in));
    }
    PARVIS_TRY(image_alloc(out_.width, out_.height, 1, &y_));
    if (!out_.mono) {
      PARVIS_TRY(image_alloc(out_.chroma_width(), out_.chroma_height(), 1, &u_));
      PARVIS_TRY(image_alloc(out_.chroma_width(), out_.chroma_height(), 1, &v_));
    }
    PARVIS_TRY(file_.open(outputs, path));
    const std::string header = y4m_header(out_);
    return file_.write(header.data(), header.size());
  }

  Status write(const FrameSlot& slot, const std::vector<Rect>& matches) override {
    if (paint_planes_) {
      const size_t luma = in_.luma_bytes(), chroma = in_.chroma_bytes();
      std::memcpy(y_.data(), slot.bytes, luma);
      std::memcpy(u_.data(), slot.bytes + luma, chroma);
      std::memcpy(v_.data(), slot.bytes + luma + chroma, chroma);
      uint8_t red[3];
      rgb_to_yuv(rgb_to_yuv_coefficients(in_.matrix, in_.range), kRed.r, kRed.g, kRed.b, &red[0],
                 &red[1], &red[2]);
      const int t = outline_thickness(in_.width, in_.height), sx = in_.chroma_sx, sy = in_.chroma_sy;
      for (const Rect& match : matches) {
        draw_rect(&y_, match, Rgb{red[0], red[0], red[0]}, t);  // grey of (v, v, v) is v
        // The chroma samples under the outline (the same rectangle in chroma coordinates).
        const Rect c{match.x / sx, match.y / sy, (match.x + match.w - 1) / sx - match.x / sx + 1,
                     (match.y + match.h - 1) / sy - match.y / sy + 1};
        const int ct = (t + sx - 1) / sx;
        draw_rect(&u_, c, Rgb{red[1], red[1], red[1]}, ct);
        draw_rect(&v_, c, Rgb{red[2], red[2], red[2]}, ct);
      }
    } else {
      const Image& rgb = annotator_.annotate(slot, matches);
      const RgbToYuv k = rgb_to_yuv_coefficients(out_.matrix, out_.range);
      for (size_t i = 0, n = out_.luma_bytes(); i < n; ++i) {
        const uint8_t* p = rgb.data() + 3 * i;
        rgb_to_yuv(k, p[0], p[1], p[2], &y_.pixels[i], &u_.pixels[i], &v_.pixels[i]);
      }
    }
    static const char kFrame[] = "FRAME\n";
    PARVIS_TRY(file_.write(kFrame, 6));
    PARVIS_TRY(file_.write(y_.data(), y_.pixels.size()));
    if (!out_.mono) {
      PARVIS_TRY(file_.write(u_.data(), u_.pixels.size()));
      PARVIS_TRY(file_.write(v_.data(), v_.pixels.size()));
    }
    if (out_.alpha)  // C444alpha: the alpha plane as it came
      PARVIS_TRY(file_.write(slot.bytes + in_.luma_bytes() + 2 * in_.chroma_bytes(), in_.luma_bytes()));
    return Status::Ok();
  }

  Status finish() override { return Status::Ok(); }  // the run's Outputs commits the file

 private:
  FrameFormat in_, out_;
  bool paint_planes_ = false;
  Annotator annotator_;
  Image y_, u_, v_;
  StreamFile file_;
};

// Any other container and codec: rgb24 frames into ffmpeg, which writes the temporary file.
class FfmpegSink : public AnnotatedSink {
 public:
  Status open(Outputs* outputs, const std::string& path, const FrameFormat& in, const std::string& program) {
    const std::string exe = find_program(program);
    if (exe.empty()) return ffmpeg_missing(program, "--out " + path + " is not a .y4m file", "write .y4m");
    path_ = path;
    PARVIS_TRY(annotator_.init(in));
    std::string temp;  // a temporary with the target's extension: ffmpeg picks the container by it
    PARVIS_TRY(outputs->child_path(path, &temp));
    const bool fps = in.fps_num > 0 && in.fps_den > 0;
    std::vector<std::string> args = {
        program, "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo",
        "-pix_fmt", "rgb24", "-s", std::to_string(in.width) + "x" + std::to_string(in.height),
        "-framerate", fps ? std::to_string(in.fps_num) + "/" + std::to_string(in.fps_den) : "25",
        "-i", "-"};
    // 4:2:0 plays everywhere, but needs even sizes.
    if (in.width % 2 == 0 && in.height % 2 == 0) args.insert(args.end(), {"-pix_fmt", "yuv420p"});
    args.push_back(temp);
    PARVIS_TRY(child_.start(exe, args, Child::Pipe::WriteStdin));
    return Status::Ok();
  }

  Status write(const FrameSlot& slot, const std::vector<Rect>& matches) override {
    const Image& rgb = annotator_.annotate(slot, matches);
    const uint8_t* p = rgb.data();
    size_t n = rgb.pixels.size();
    while (n > 0) {
      const ssize_t w = ::write(child_.pipe_fd(), p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        if (errno == EPIPE) return child_.finish("--out " + path_);  // ffmpeg stopped: say why
        return Status::runtime("--out " + path_ + ": cannot write to ffmpeg: " + std::strerror(errno));
      }
      p += w;
      n -= size_t(w);
    }
    return Status::Ok();
  }

  Status finish() override {
    return child_.finish("--out " + path_);  // the run's Outputs commits the file
  }

 private:
  std::string path_;
  Annotator annotator_;
  Child child_;  // destroyed (ffmpeg stopped) before the run's Outputs removes the temporary
};

}  // namespace

bool sink_needs_rgb(const std::string& path, const FrameFormat& fmt) {
  return !(file_extension(path) == "y4m" && fmt.layout == Layout::Yuv && !fmt.mono);
}

Status open_sink(Outputs* outputs, const std::string& path, const FrameFormat& fmt, const std::string& ffmpeg,
                 std::unique_ptr<AnnotatedSink>* out) {
  if (file_extension(path) == "y4m") {
    auto s = std::make_unique<Y4mSink>();
    PARVIS_TRY(s->open(outputs, path, fmt));
    *out = std::move(s);
    return Status::Ok();
  }
  auto s = std::make_unique<FfmpegSink>();
  PARVIS_TRY(s->open(outputs, path, fmt, ffmpeg));
  *out = std::move(s);
  return Status::Ok();
}

}  // namespace parvis::video
