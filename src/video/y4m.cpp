// Y4M header parsing and buffered reading (y4m.hpp).
#include "video/y4m.hpp"

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "common/parse.hpp"
#include "common/timing.hpp"
#include "common/image.hpp"

namespace parvis::video {

// ---------------------------------------------------------------------------- ByteReader

Status ByteReader::fill(size_t want) {
  if (pos_ > 0 && end_ - pos_ < want) {  // keep what is left at the front
    std::memmove(buf_, buf_ + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  while (end_ - pos_ < want && end_ < sizeof buf_) {
    const ssize_t r = ::read(fd_, buf_ + end_, sizeof buf_ - end_);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::bad_input("cannot read " + name_ + ": " + std::strerror(errno));
    }
    if (r == 0) break;
    end_ += size_t(r);
  }
  return Status::Ok();
}

Status ByteReader::read(uint8_t* dst, size_t n, size_t* got) {
  size_t have = end_ - pos_ < n ? end_ - pos_ : n;
  std::memcpy(dst, buf_ + pos_, have);
  pos_ += have;
  while (have < n) {  // the rest straight from the descriptor
    const ssize_t r = ::read(fd_, dst + have, n - have);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::bad_input("cannot read " + name_ + ": " + std::strerror(errno));
    }
    if (r == 0) break;
    have += size_t(r);
  }
  consumed_ += have;
  *got = have;
  return Status::Ok();
}

Status ByteReader::line(size_t max, std::string* out, size_t* got, bool* complete) {
  out->clear();
  *got = 0;
  *complete = false;
  while (out->size() < max) {
    if (pos_ == end_) {
      PARVIS_TRY(fill(1));
      if (pos_ == end_) return Status::Ok();  // the end of the stream
    }
    const uint8_t c = buf_[pos_++];
    ++*got;
    ++consumed_;
    if (c == '\n') {
      *complete = true;
      return Status::Ok();
    }
    out->push_back(char(c));
  }
  return Status::Ok();
}

Status ByteReader::peek(size_t n, const uint8_t** data, size_t* avail) {
  if (n > sizeof buf_) n = sizeof buf_;
  if (end_ - pos_ < n) PARVIS_TRY(fill(n));
  *data = buf_ + pos_;
  *avail = end_ - pos_ < n ? end_ - pos_ : n;
  return Status::Ok();
}

// ---------------------------------------------------------------------------- the header

namespace {

Status parse_ratio(const std::string& tag, const std::string& text, int* num, int* den) {
  const size_t colon = text.find(':');
  int64_t n = 0, d = 0;
  if (colon == std::string::npos || !parse_int(text.substr(0, colon), 0, INT32_MAX, &n).ok() ||
      !parse_int(text.substr(colon + 1), 0, INT32_MAX, &d).ok())
    return Status::bad_input("Y4M header: bad " + tag + " tag '" + tag + text + "'");
  *num = int(n), *den = int(d);
  return Status::Ok();
}

// The C tag: subsampling, mono, alpha. Only 8-bit colour spaces.
Status parse_colourspace(const std::string& c, FrameFormat* f) {
  f->mono = f->alpha = false;
  if (c == "420jpeg" || c == "420paldv" || c == "420mpeg2" || c == "420") f->chroma_sx = 2, f->chroma_sy = 2;
  else if (c == "422") f->chroma_sx = 2, f->chroma_sy = 1;
  else if (c == "411") f->chroma_sx = 4, f->chroma_sy = 1;
  else if (c == "444") f->chroma_sx = 1, f->chroma_sy = 1;
  else if (c == "444alpha") f->chroma_sx = 1, f->chroma_sy = 1, f->alpha = true;
  else if (c == "mono") f->chroma_sx = 1, f->chroma_sy = 1, f->mono = true;
  else
    return Status::bad_input("Y4M colour space C" + c +
                             " is not supported (8-bit 420, 422, 411, 444, 444alpha, mono); "
                             "convert it: ffmpeg -i IN -pix_fmt yuv420p OUT.y4m");
  return Status::Ok();
}

}  // namespace

Status parse_y4m_header(const std::string& line, RangeChoice range, YuvMatrix matrix,
                        FrameFormat* out) {
  static const char kMagic[] = "YUV4MPEG2";
  if (line.compare(0, 9, kMagic) != 0 || (line.size() > 9 && line[9] != ' '))
    return Status::bad_input("not a Y4M stream (it does not start with 'YUV4MPEG2 ')");
  FrameFormat f;
  f.layout = Layout::Yuv;
  f.matrix = matrix;
  bool full = false, have_w = false, have_h = false;
  PARVIS_TRY(parse_colourspace("420jpeg", &f));
  size_t i = 9;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j == i) break;
    const char tag = line[i];
    const std::string value = line.substr(i + 1, j - i - 1);
    i = j;
    int64_t v = 0;
    switch (tag) {
      case 'W':
      case 'H':
        if (!parse_int(value, 1, INT32_MAX, &v).ok())
          return Status::bad_input(std::string("Y4M header: bad ") + (tag == 'W' ? "width" : "height") +
                                   " '" + value + "'");
        (tag == 'W' ? f.width : f.height) = int(v);
        (tag == 'W' ? have_w : have_h) = true;
        break;
      case 'F': PARVIS_TRY(parse_ratio("F", value, &f.fps_num, &f.fps_den)); break;
      case 'C': PARVIS_TRY(parse_colourspace(value, &f)); break;
      case 'X':
        if (value == "COLORRANGE=FULL") full = true;
        else if (value == "COLORRANGE=LIMITED") full = false;
        break;
      default: break;  // I (interlacing), A (aspect ratio), others: no effect on the pixels
    }
  }
  if (!have_w || !have_h) return Status::bad_input("Y4M header without W and H");
  PARVIS_TRY(check_input_size(f.width, f.height, 3));
  if (range != RangeChoice::Auto) full = range == RangeChoice::Full;
  f.range = full ? YuvRange::Full : YuvRange::Limited;
  *out = f;
  return Status::Ok();
}

std::string y4m_header(const FrameFormat& f) {
  std::string c;
  if (f.mono) c = "mono";
  else if (f.chroma_sx == 2 && f.chroma_sy == 2) c = "420jpeg";
  else if (f.chroma_sx == 2) c = "422";
  else if (f.chroma_sx == 4) c = "411";
  else c = f.alpha ? "444alpha" : "444";
  const bool fps = f.fps_num > 0 && f.fps_den > 0;
  return "YUV4MPEG2 W" + std::to_string(f.width) + " H" + std::to_string(f.height) + " F" +
         (fps ? std::to_string(f.fps_num) + ":" + std::to_string(f.fps_den) : std::string("25:1")) +
         " Ip A1:1 C" + c + " XCOLORRANGE=" + (f.range == YuvRange::Full ? "FULL" : "LIMITED") + "\n";
}

}  // namespace parvis::video
