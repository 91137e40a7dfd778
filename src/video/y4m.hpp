// YUV4MPEG2 (Y4M) streams: the header line, the FRAME lines, and buffered reading from a file
// descriptor (a file, stdin or ffmpeg's pipe).
//
// A stream is "YUV4MPEG2 W<w> H<h> [F<n>:<d>] [I<c>] [A<n>:<d>] [C<colourspace>] [X<extra>]..."
// and then frames, each "FRAME[ params]\n" followed by its planes. Colour spaces read here:
// 420jpeg, 420paldv, 420mpeg2, 420 (4:2:0), 422, 411, 444, 444alpha (the alpha plane is
// skipped) and mono, 8 bits; no C tag means 420jpeg (the format's default). The range comes
// from ffmpeg's XCOLORRANGE=FULL|LIMITED tag, limited without it (BT.601 studio swing, the
// format's convention); the matrix is BT.601 unless the caller says otherwise. Chroma siting
// (jpeg / mpeg2 / paldv) does not change the conversion: chroma is upsampled by repetition.
#pragma once
#include <cstdint>
#include <string>

#include "common/status.hpp"
#include "video/video.hpp"

namespace parvis::video {

constexpr size_t kY4mMaxHeader = 4096;  // a longer first line is not a Y4M header
constexpr size_t kY4mMaxFrameLine = 1024;

// Buffered reads from a file descriptor that it does not own. Large reads go straight into
// the caller's memory once the buffer is drained (no copy of the frame's pixels).
class ByteReader {
 public:
  ByteReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  ByteReader(const ByteReader&) = delete;
  ByteReader& operator=(const ByteReader&) = delete;
  // Up to n bytes into dst; *got < n only at the end of the stream.
  Status read(uint8_t* dst, size_t n, size_t* got);
  // Up to '\n' (not kept) or `max` bytes, whichever comes first. *got = bytes read including
  // the '\n' (0 at the end of the stream); *complete = the '\n' was found.
  Status line(size_t max, std::string* out, size_t* got, bool* complete);
  // The next bytes without consuming them (fewer than n only at the end of the stream).
  Status peek(size_t n, const uint8_t** data, size_t* avail);
  const std::string& name() const { return name_; }
  uint64_t consumed() const { return consumed_; }

 private:
  Status fill(size_t want);  // until `want` bytes are buffered or the stream ends
  int fd_;
  std::string name_;
  uint8_t buf_[1 << 16];
  size_t pos_ = 0, end_ = 0;
  uint64_t consumed_ = 0;
};

// Parses the first line (without its '\n'). range_override / matrix apply as the caller chose
// (`--range auto` leaves the tag to decide). Bad input (exit 2) for anything else.
enum class RangeChoice : uint8_t { Auto, Full, Limited };
Status parse_y4m_header(const std::string& line, RangeChoice range, YuvMatrix matrix,
                        FrameFormat* out);

// A header line for `fmt` (Layout::Yuv), with "\n": W, H, F (25:1 when unknown), Ip, A1:1, C
// and XCOLORRANGE.
std::string y4m_header(const FrameFormat& fmt);

}  // namespace parvis::video
