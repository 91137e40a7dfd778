// Frame sources (source.hpp): Y4M, raw frames, ffmpeg.
#include "video/source.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "common/parse.hpp"
#include "common/timing.hpp"
#include "common/image.hpp"
#include "video/process.hpp"

namespace parvis::video {

namespace {

// An input descriptor: a file we opened (closed at the end) or stdin (left open).
class Input {
 public:
  Input() = default;
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;
  ~Input() {
    if (fd_ > 2) ::close(fd_);
  }
  Status open(const std::string& path) {
    if (path == "-") {
      fd_ = 0;
      return Status::Ok();
    }
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return Status::bad_input("cannot open " + path + ": " + std::strerror(errno));
    struct stat st;
    if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) regular_size_ = int64_t(st.st_size);
    if (::fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) return Status::bad_input(path + " is a directory");
    return Status::Ok();
  }
  int fd() const { return fd_; }
  int64_t regular_size() const { return regular_size_; }  // -1: not a regular file

 private:
  int fd_ = -1;
  int64_t regular_size_ = -1;
};

// Reads exactly n bytes of frame `index`: a clean end before the first byte is the end of the
// stream, anything between is a truncated frame.
Status read_payload(ByteReader& in, int64_t index, uint8_t* dst, size_t n, bool started, bool* end) {
  size_t got = 0;
  PARVIS_TRY(in.read(dst, n, &got));
  if (got == 0 && !started) {
    *end = true;
    return Status::Ok();
  }
  if (got < n)
    return Status::bad_input(in.name() + ": frame " + std::to_string(index) + " is truncated (" +
                             std::to_string(got) + " of " + std::to_string(n) + " bytes)");
  return Status::Ok();
}

// A stream's first frame, read before any frame-sized buffer exists: the buffer grows as the
// bytes arrive, so a header that declares a huge frame costs memory only for the bytes a
// stream really sends. The frame is then handed to the first read_frame.
class FirstFrame {
 public:
  // Reads the n bytes of frame 0; a stream that ends before them is bad input, as read_payload.
  Status read(ByteReader& in, size_t n, bool* end) {
    size_t have = 0;
    while (have < n) {
      const size_t want = std::min(n, std::max(2 * have, size_t(1) << 20));
      bytes_.resize(want);
      size_t got = 0;
      PARVIS_TRY(in.read(bytes_.data() + have, want - have, &got));
      have += got;
      if (have < want) break;
    }
    bytes_.resize(have);
    if (have == 0 && end) {
      *end = true;
      return Status::Ok();
    }
    if (have < n)
      return Status::bad_input(in.name() + ": frame 0 is truncated (" + std::to_string(have) + " of " +
                               std::to_string(n) + " bytes)");
    pending_ = true;
    return Status::Ok();
  }
  // Copies the frame into dst once; false when there is none (any more).
  bool take(uint8_t* dst) {
    if (!pending_) return false;
    std::memcpy(dst, bytes_.data(), bytes_.size());
    pending_ = false;
    std::vector<uint8_t>().swap(bytes_);
    return true;
  }

 private:
  std::vector<uint8_t> bytes_;
  bool pending_ = false;
};

class Y4mSource : public FrameSource {
 public:
  Y4mSource(std::unique_ptr<Input> input, const std::string& name)
      : input_(std::move(input)), in_(input_->fd(), name) {
    name_ = name;
  }
  Status open(RangeChoice range, YuvMatrix matrix) {
    size_t got = 0;
    bool complete = false;
    PARVIS_TRY(in_.line(kY4mMaxHeader, &line_, &got, &complete));
    if (got == 0) return Status::bad_input(name_ + " is empty (no Y4M header)");
    Status s = parse_y4m_header(line_, range, matrix, &fmt_);
    if (!s.ok()) return Status::bad_input(name_ + ": " + s.message);
    if (!complete) return Status::bad_input(name_ + ": the Y4M header line does not end");
    const int64_t size = input_->regular_size();
    if (size >= 0) {
      // "FRAME\n" + pixels per frame (frame parameters are rare). A file too short for one frame
      // is refused here, before any frame-sized buffer is made.
      const int64_t rest = size - int64_t(got), frame = int64_t(6 + fmt_.frame_bytes());
      if (rest == 0) return Status::bad_input(name_ + " holds no frame");
      if (rest < frame)
        return Status::bad_input(name_ + ": frame 0 is truncated (the file holds " + std::to_string(rest) +
                                 " bytes after its header, a " + std::to_string(fmt_.width) + "x" +
                                 std::to_string(fmt_.height) + " frame needs " + std::to_string(frame) + ")");
      frame_count_ = rest / frame;
    } else {
      bool end = false;
      PARVIS_TRY(frame_line(&end));
      if (end) return Status::bad_input(name_ + " holds no frame");
      PARVIS_TRY(first_.read(in_, fmt_.frame_bytes(), nullptr));
    }
    return Status::Ok();
  }
  Status read_frame(uint8_t* dst, bool* end) override {
    *end = false;
    if (first_.take(dst)) {
      ++index_;
      return Status::Ok();
    }
    PARVIS_TRY(frame_line(end));
    if (*end) return Status::Ok();
    PARVIS_TRY(read_payload(in_, index_, dst, fmt_.frame_bytes(), true, end));
    ++index_;
    return Status::Ok();
  }

 private:
  // The FRAME line of frame index_; *end at a clean end of the stream.
  Status frame_line(bool* end) {
    size_t got = 0;
    bool complete = false;
    PARVIS_TRY(in_.line(kY4mMaxFrameLine, &line_, &got, &complete));
    if (got == 0) {
      *end = true;
      return Status::Ok();
    }
    // Nothing is allocated per frame unless it is refused.
    auto frame = [&] { return name_ + ": frame " + std::to_string(index_); };
    if (!complete && got < kY4mMaxFrameLine)  // the stream ended inside the line
      return Status::bad_input(frame() + " is truncated (in its FRAME line)");
    if (line_.compare(0, 5, "FRAME") != 0 || (line_.size() > 5 && line_[5] != ' '))
      return Status::bad_input(frame() + " does not start with a FRAME line");
    if (!complete)
      return Status::bad_input(frame() + ": its FRAME line is longer than " + std::to_string(kY4mMaxFrameLine) +
                               " bytes");
    return Status::Ok();
  }

  std::unique_ptr<Input> input_;
  ByteReader in_;
  std::string line_;
  int64_t index_ = 0;
  FirstFrame first_;
};

class RawSource : public FrameSource {
 public:
  RawSource(std::unique_ptr<Input> input, const std::string& name, const FrameFormat& fmt)
      : input_(std::move(input)), in_(input_->fd(), name) {
    name_ = name;
    fmt_ = fmt;
    if (input_->regular_size() >= 0) frame_count_ = input_->regular_size() / int64_t(fmt_.frame_bytes());
  }
  // As Y4mSource::open: a file too short for one frame, or a stream's first frame, before any
  // frame-sized buffer is made.
  Status open() {
    const int64_t size = input_->regular_size(), frame = int64_t(fmt_.frame_bytes());
    if (size == 0) return Status::bad_input(name_ + " holds no frame");
    if (size > 0 && size < frame)
      return Status::bad_input(name_ + ": frame 0 is truncated (the file holds " + std::to_string(size) +
                               " bytes, a " + std::to_string(fmt_.width) + "x" + std::to_string(fmt_.height) +
                               " frame needs " + std::to_string(frame) + ")");
    if (size < 0) {
      bool end = false;
      PARVIS_TRY(first_.read(in_, fmt_.frame_bytes(), &end));
      if (end) return Status::bad_input(name_ + " holds no frame");
    }
    return Status::Ok();
  }
  Status read_frame(uint8_t* dst, bool* end) override {
    *end = false;
    if (first_.take(dst)) {
      ++index_;
      return Status::Ok();
    }
    PARVIS_TRY(read_payload(in_, index_, dst, fmt_.frame_bytes(), false, end));
    if (!*end) ++index_;
    return Status::Ok();
  }

 private:
  std::unique_ptr<Input> input_;
  ByteReader in_;
  int64_t index_ = 0;
  FirstFrame first_;
};

// ffmpeg decodes anything it knows into a stream of binary PPM frames ("P6 W H 255" + RGB):
// raw RGB that carries its own size, so no second tool (ffprobe) is needed to learn it.
class FfmpegSource : public FrameSource {
 public:
  explicit FfmpegSource(const std::string& name) { name_ = name; }
  Status open(const std::string& program, const std::string& path) {
    const std::string exe = find_program(program);
    if (exe.empty())
      return ffmpeg_missing(program, path + " is not a Y4M file",
                            "convert it first: ffmpeg -i IN -pix_fmt yuv420p IN.y4m");
    PARVIS_TRY(child_.start(exe,
                            {program, "-nostdin", "-hide_banner", "-loglevel", "error", "-i", path,
                             "-map", "0:v:0", "-f", "image2pipe", "-c:v", "ppm", "-pix_fmt",
                             "rgb24", "-"},
                            Child::Pipe::ReadStdout));
    in_ = std::make_unique<ByteReader>(child_.pipe_fd(), name_ + " (through ffmpeg)");
    int w = 0, h = 0;
    bool end = false;
    PARVIS_TRY(frame_header(&w, &h, &end));
    if (end) {
      PARVIS_TRY(child_.finish(name_));
      return Status::bad_input(name_ + ": ffmpeg found no video frame in it");
    }
    fmt_.width = w, fmt_.height = h;
    fmt_.layout = Layout::Rgb24;
    have_header_ = true;
    return Status::Ok();
  }
  Status read_frame(uint8_t* dst, bool* end) override {
    *end = false;
    if (!have_header_) {
      int w = 0, h = 0;
      PARVIS_TRY(frame_header(&w, &h, end));
      if (*end) return Status::Ok();
      if (w != fmt_.width || h != fmt_.height)
        return Status::bad_input(name_ + ": frame " + std::to_string(index_) + " is " +
                                 std::to_string(w) + "x" + std::to_string(h) + ", the stream " +
                                 std::to_string(fmt_.width) + "x" + std::to_string(fmt_.height));
    }
    have_header_ = false;
    PARVIS_TRY(read_payload(*in_, index_, dst, fmt_.frame_bytes(), true, end));
    ++index_;
    return Status::Ok();
  }
  Status finish(bool early) override {
    if (early) {
      child_.kill();
      return Status::Ok();
    }
    return child_.finish(name_);
  }

 private:
  // "P6" whitespace W whitespace H whitespace 255 one-whitespace.
  Status frame_header(int* w, int* h, bool* end) {
    const uint8_t* p = nullptr;
    size_t avail = 0;
    PARVIS_TRY(in_->peek(2, &p, &avail));
    if (avail == 0) {
      *end = true;
      return Status::Ok();
    }
    *end = false;
    auto bad = [&] { return Status::bad_input(name_ + ": ffmpeg's frame " + std::to_string(index_) + " is not a binary PPM"); };
    if (avail < 2 || p[0] != 'P' || p[1] != '6') return bad();
    uint8_t magic[2];
    size_t got = 0;
    PARVIS_TRY(in_->read(magic, 2, &got));  // "P6", peeked above
    uint8_t c = 0;
    int64_t values[3] = {0, 0, 0};
    for (int64_t& v : values) {
      PARVIS_TRY(in_->read(&c, 1, &got));
      while (got == 1 && (c == ' ' || c == '\n' || c == '\r' || c == '\t')) PARVIS_TRY(in_->read(&c, 1, &got));
      int digits = 0;
      while (got == 1 && c >= '0' && c <= '9' && digits < 10) {
        v = v * 10 + (c - '0');
        ++digits;
        PARVIS_TRY(in_->read(&c, 1, &got));
      }
      if (digits == 0 || got != 1) return bad();
    }
    if (values[2] != 255 || values[0] < 1 || values[1] < 1) return bad();
    PARVIS_TRY(check_input_size(values[0], values[1], 3));
    *w = int(values[0]), *h = int(values[1]);
    return Status::Ok();
  }

  Child child_;
  std::unique_ptr<ByteReader> in_;
  bool have_header_ = false;
  int64_t index_ = 0;
};

}  // namespace

Status parse_pix_fmt(const std::string& t, FrameFormat* f) {
  f->layout = Layout::Yuv;
  f->mono = f->alpha = false;
  if (t == "rgb24") f->layout = Layout::Rgb24;
  else if (t == "bgr24") f->layout = Layout::Bgr24;
  else if (t == "gray") f->layout = Layout::Gray;
  else if (t == "yuv420p") f->chroma_sx = 2, f->chroma_sy = 2;
  else if (t == "yuv422p") f->chroma_sx = 2, f->chroma_sy = 1;
  else if (t == "yuv444p") f->chroma_sx = 1, f->chroma_sy = 1;
  else
    return Status::usage("--pix-fmt must be rgb24, bgr24, gray, yuv420p, yuv422p or yuv444p, not '" + t + "'");
  return Status::Ok();
}

Status open_source(const SourceOptions& o, std::unique_ptr<FrameSource>* out) {
  const std::string name = o.path == "-" ? "stdin" : o.path;
  if (!o.raw_size.empty()) {
    FrameFormat f;
    PARVIS_TRY(parse_size(o.raw_size, &f.width, &f.height));
    PARVIS_TRY(parse_pix_fmt(o.pix_fmt, &f));
    PARVIS_TRY(check_input_size(f.width, f.height, 3));
    f.matrix = o.matrix;
    f.range = o.range == RangeChoice::Full ? YuvRange::Full : YuvRange::Limited;
    auto input = std::make_unique<Input>();
    PARVIS_TRY(input->open(o.path));
    auto raw = std::make_unique<RawSource>(std::move(input), name, f);
    PARVIS_TRY(raw->open());
    *out = std::move(raw);
    return Status::Ok();
  }
  auto input = std::make_unique<Input>();
  PARVIS_TRY(input->open(o.path));
  // Sniff the first bytes without consuming them: Y4M, or (a file) ffmpeg's business.
  uint8_t magic[9];
  ssize_t have = 0;
  if (input->regular_size() >= 0) {
    have = ::pread(input->fd(), magic, sizeof magic, 0);
    if (have < 0) return Status::bad_input("cannot read " + name + ": " + std::strerror(errno));
    if (have == 0) return Status::bad_input(name + " is empty");
    // Anything that starts like a Y4M header is ours to judge (a bad one is bad input here).
    if (have < 8 || std::memcmp(magic, "YUV4MPEG", 8) != 0) {
      if (o.range != RangeChoice::Auto || o.matrix != YuvMatrix::Bt601)
        return Status::usage("--range and --matrix apply to Y4M and raw YUV input; ffmpeg converts " + name + " to RGB itself");
      auto ff = std::make_unique<FfmpegSource>(name);
      PARVIS_TRY(ff->open(o.ffmpeg, o.path));
      *out = std::move(ff);
      return Status::Ok();
    }
  }
  // A Y4M file, or a stream (stdin, a pipe, a device): it must be Y4M.
  auto y4m = std::make_unique<Y4mSource>(std::move(input), name);
  Status s = y4m->open(o.range, o.matrix);
  if (!s.ok() && o.path == "-" && s.message.find("not a Y4M stream") != std::string::npos)
    return Status::bad_input("stdin is not a Y4M stream (raw frames: --raw WxH --pix-fmt ...)");
  PARVIS_TRY(s);
  *out = std::move(y4m);
  return Status::Ok();
}

}  // namespace parvis::video
