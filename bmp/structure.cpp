// The structure of the files stb decodes (PNG, JPEG, TGA), checked by parvis before stb sees
// them. stb trusts declared sizes: it allocates what a header declares, and where the data
// runs out it reads zeros, so a file cut short would come back as an image (rows of zeros, flat
// grey). These checks find such files from their structure alone, without decoding pixels.
#include <algorithm>
#include <cstdint>
#include <string>

#include "codecs.hpp"

namespace parvis {
namespace codec {
namespace {

uint32_t be16(const uint8_t* p) { return uint32_t(p[0]) << 8 | p[1]; }
uint32_t be32(const uint8_t* p) { return be16(p) << 16 | be16(p + 2); }
uint32_t le16(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8; }

// stb_image 2.27, the version Debian and Ubuntu ship, writes past its Huffman tables when a
// JPEG DHT segment declares more than 256 codes (nothings/stb issues 1289 and 1291, fixed in
// 2.28). Such files are refused here, before stb reads any of their headers.
Status check_jpeg_huffman_tables(const uint8_t* table, size_t size) {
  for (size_t at = 0; at < size;) {
    if (size - at < 17) return Status::bad_input("corrupt JPEG Huffman table (cut short)");
    size_t codes = 0;
    for (int length = 1; length <= 16; ++length) codes += table[at + size_t(length)];
    if (codes > 256)
      return Status::bad_input("corrupt JPEG Huffman table: " + std::to_string(codes) +
                               " codes, at most 256");
    if (size - at - 17 < codes) return Status::bad_input("corrupt JPEG Huffman table (cut short)");
    at += 17 + codes;
  }
  return Status::Ok();
}

// What the JPEG frame header (SOFn) declares.
struct JpegFrame {
  bool seen = false;
  bool huffman = false;  // SOF0..3, 5..7: Huffman-coded (stb decodes only those)
  uint32_t width = 0, height = 0;
  int components = 0;
  int h[4] = {0, 0, 0, 0}, v[4] = {0, 0, 0, 0};  // sampling factors
};

Status parse_jpeg_frame(uint8_t marker, const uint8_t* seg, size_t length, JpegFrame* f) {
  if (f->seen) return Status::bad_input("corrupt JPEG: a second frame header");
  if (length < 8) return Status::bad_input("corrupt JPEG: frame header of " + std::to_string(length) + " bytes");
  f->seen = true;
  f->huffman = marker <= 0xc3 || (marker >= 0xc5 && marker <= 0xc7);
  f->height = be16(seg + 1);
  f->width = be16(seg + 3);
  const int n = seg[5];
  if (n < 1 || n > 4 || length < 6 + 3 * size_t(n))
    return Status::bad_input("corrupt JPEG: frame header with " + std::to_string(n) + " components");
  f->components = n;
  for (int i = 0; i < n; ++i) {
    f->h[i] = seg[6 + 3 * i + 1] >> 4;
    f->v[i] = seg[6 + 3 * i + 1] & 15;
    if (f->h[i] < 1 || f->h[i] > 4 || f->v[i] < 1 || f->v[i] > 4)
      return Status::bad_input("corrupt JPEG: bad sampling factors in the frame header");
  }
  return Status::Ok();
}

// The fewest entropy-coded bits a Huffman-coded frame can have: every 8x8 block of every
// component has its DC coefficient coded (a code of at least one bit) in some scan, so the scans
// together hold at least one bit per block of the component with the most blocks.
uint64_t jpeg_min_scan_bits(const JpegFrame& f) {
  int hmax = 1, vmax = 1;
  for (int i = 0; i < f.components; ++i) hmax = std::max(hmax, f.h[i]), vmax = std::max(vmax, f.v[i]);
  uint64_t most = 0;
  for (int i = 0; i < f.components; ++i) {
    const uint64_t w = (uint64_t(f.width) * uint64_t(f.h[i]) + uint64_t(hmax) - 1) / uint64_t(hmax);
    const uint64_t h = (uint64_t(f.height) * uint64_t(f.v[i]) + uint64_t(vmax) - 1) / uint64_t(vmax);
    most = std::max(most, ((w + 7) / 8) * ((h + 7) / 8));
  }
  return most;
}

}  // namespace

bool jpeg_start(const uint8_t* data, size_t size, size_t* after_soi) {
  if (size < 2 || data[0] != 0xff) return false;
  size_t i = 1;
  while (i < size && data[i] == 0xff) ++i;
  if (i == size || data[i] != 0xd8) return false;
  *after_soi = i + 1;
  return true;
}

Status jpeg_check(const uint8_t* data, size_t size) {
  size_t at = 0;
  if (!jpeg_start(data, size, &at)) return Status::bad_input("not a JPEG file (no start-of-image marker)");
  const Status truncated = Status::bad_input("truncated JPEG (no end-of-image marker)");
  JpegFrame frame;
  uint64_t scans = 0, scan_bytes = 0;
  for (;;) {
    if (at >= size) return truncated;
    if (data[at] != 0xff)
      return Status::bad_input("corrupt JPEG: no marker at byte " + std::to_string(at));
    while (at < size && data[at] == 0xff) ++at;  // fill bytes
    if (at >= size) return truncated;
    const uint8_t marker = data[at++];
    if (marker == 0xd9) break;                                          // EOI
    if ((marker >= 0xd0 && marker <= 0xd7) || marker == 0x01) continue;  // RSTn, TEM: no length
    if (size - at < 2) return truncated;
    const size_t length = size_t(data[at]) << 8 | data[at + 1];
    if (length < 2) return Status::bad_input("corrupt JPEG: segment length " + std::to_string(length));
    if (length > size - at) return truncated;
    if (marker == 0xc4) PARVIS_TRY(check_jpeg_huffman_tables(data + at + 2, length - 2));
    if (marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc)
      PARVIS_TRY(parse_jpeg_frame(marker, data + at + 2, length - 2, &frame));
    at += length;
    if (marker == 0xda) {  // start of scan: entropy-coded bytes up to a marker other than RSTn
      if (!frame.seen) return Status::bad_input("corrupt JPEG: a scan before the frame header");
      ++scans;
      const size_t begin = at;
      while (at + 1 < size &&
             !(data[at] == 0xff && data[at + 1] != 0x00 && !(data[at + 1] >= 0xd0 && data[at + 1] <= 0xd7)))
        ++at;
      if (at + 1 >= size) return Status::bad_input("truncated JPEG (cut inside its scan data)");
      scan_bytes += at - begin;
    }
  }
  if (!frame.seen) return Status::bad_input("corrupt JPEG: no frame header (SOF)");
  if (scans == 0) return Status::bad_input("JPEG without scan data (no SOS segment): nothing to decode");
  if (frame.huffman && frame.height > 0) {
    const uint64_t bits = jpeg_min_scan_bits(frame);
    if (scan_bytes * 8 < bits)
      return Status::bad_input("truncated JPEG: " + std::to_string(scan_bytes) + " bytes of scan data, a " +
                               std::to_string(frame.width) + "x" + std::to_string(frame.height) +
                               " frame needs at least " + std::to_string((bits + 7) / 8));
  }
  return Status::Ok();
}

Status png_header_check(const uint8_t* data, size_t size, ImageInfo* info) {
  // The signature, then IHDR: length 13, "IHDR", width, height, bit depth, colour type, ...
  if (size < 33 || be32(data + 8) != 13 || std::string(reinterpret_cast<const char*>(data + 12), 4) != "IHDR")
    return Status::bad_input("corrupt PNG: it does not start with an IHDR chunk");
  const uint32_t width = be32(data + 16), height = be32(data + 20);
  const uint8_t colour = data[25];
  if (colour != 0 && colour != 2 && colour != 3 && colour != 4 && colour != 6)
    return Status::bad_input("corrupt PNG: colour type " + std::to_string(colour));
  const int channels = colour == 2 || colour == 3 || colour == 6 ? 3 : 1;
  if (width == 0 || height == 0 || width > INT32_MAX || height > INT32_MAX)
    return Status::bad_input("PNG image size " + std::to_string(width) + "x" + std::to_string(height) +
                             " is not valid");
  PARVIS_TRY(check_input_size(width, height, channels));
  // stb decodes at most 2^30 bytes of samples (a palette image counts 4 per pixel); it says
  // only "unknown image type" past that.
  const uint32_t samples = colour == 3 ? 4 : uint32_t((colour & 2 ? 3 : 1) + (colour & 4 ? 1 : 0));
  if ((uint32_t(1) << 30) / width / samples < height)
    return Status::bad_input("PNG image " + std::to_string(width) + "x" + std::to_string(height) +
                             " is too large for the PNG decoder (at most 2^30 bytes of samples, " +
                             std::to_string(samples) + " per pixel here)");
  if (info) *info = ImageInfo{int(width), int(height), channels};
  return Status::Ok();
}

bool tga_header(const uint8_t* data, size_t size, TgaLayout* out) {
  // Accepts what stb's TGA test accepts: colour-mapped types 1/9, true-colour 2/10, grey 3/11.
  if (size < 18 || data[1] > 1) return false;
  TgaLayout t;
  const bool mapped = data[1] == 1;
  const uint8_t type = data[2];
  if (mapped ? type != 1 && type != 9 : type != 2 && type != 3 && type != 10 && type != 11) return false;
  const int map_bits = data[7], bits = data[16];
  auto depth_ok = [](int b) { return b == 8 || b == 15 || b == 16 || b == 24 || b == 32; };
  if ((mapped && !depth_ok(map_bits)) || !depth_ok(bits) || (mapped && bits != 8 && bits != 16)) return false;
  t.width = int(le16(data + 12));
  t.height = int(le16(data + 14));
  if (t.width < 1 || t.height < 1) return false;
  t.rle = type >= 9;
  t.pixel_bytes = uint32_t(bits + 7) / 8;
  // stb skips the colour map's first-entry field in bytes before reading the map itself.
  const uint64_t map_bytes = mapped ? uint64_t(le16(data + 3)) + uint64_t(le16(data + 5)) * uint64_t((map_bits + 7) / 8) : 0;
  t.data_offset = 18 + uint64_t(data[0]) + map_bytes;
  *out = t;
  return true;
}

uint64_t tga_extent(const TgaLayout& t) {
  const uint64_t pixels = uint64_t(t.width) * uint64_t(t.height);
  // RLE: at worst one packet (a count byte) per pixel.
  return t.data_offset + pixels * (t.pixel_bytes + (t.rle ? 1 : 0));
}

Status tga_check(const uint8_t* data, size_t size, const TgaLayout& t) {
  const std::string what = std::to_string(t.width) + "x" + std::to_string(t.height) + " TGA";
  if (!t.rle) {
    if (tga_extent(t) <= size) return Status::Ok();
    return Status::bad_input("truncated " + what + ": " + std::to_string(tga_extent(t)) +
                             " bytes expected, the file has " + std::to_string(size));
  }
  // Run-length packets: a count byte (bit 7: one pixel repeated), then one or count pixels.
  const uint64_t pixels = uint64_t(t.width) * uint64_t(t.height);
  uint64_t at = t.data_offset, covered = 0;
  while (covered < pixels && at < size) {
    const uint8_t head = data[at++];
    const uint64_t count = uint64_t(head & 127) + 1;
    at += (head & 128 ? 1 : count) * t.pixel_bytes;
    covered += count;
  }
  if (covered >= pixels && at <= size) return Status::Ok();
  return Status::bad_input("truncated " + what + ": its run-length data ends after " +
                           std::to_string(std::min(covered, pixels)) + " of " + std::to_string(pixels) +
                           " pixels (the file has " + std::to_string(size) + " bytes)");
}

}  // namespace codec
}  // namespace parvis
