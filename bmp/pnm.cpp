// Own binary PGM/PPM codec: P5 (grey) and P6 (RGB) with maxval 255. The header is
// "P5|P6, width, height, maxval", tokens separated by whitespace and '#' comments, then
// exactly one whitespace character and the rows, top-down, without padding.
#include <algorithm>
#include <cstdio>
#include <string>

#include "codecs.hpp"

namespace parvis {
namespace codec {
namespace {

bool is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// How a header byte is shown in a message: itself when printable, else its code.
std::string shown(uint8_t c) {
  if (c >= 0x21 && c < 0x7f) return std::string("'") + char(c) + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", c);
  return buf;
}

// Reads one header number at *pos, skipping whitespace and comments before it.
Status read_header_number(const uint8_t* data, size_t size, size_t* pos, const char* what,
                          int64_t* value) {
  size_t i = *pos;
  while (i < size && (is_space(data[i]) || data[i] == '#')) {
    if (data[i] == '#') {
      while (i < size && data[i] != '\n' && data[i] != '\r') ++i;
    } else {
      ++i;
    }
  }
  if (i == size) return Status::bad_input("truncated PGM/PPM header");
  if (data[i] < '0' || data[i] > '9')
    return Status::bad_input(std::string("bad PGM/PPM header: expected the ") + what + ", found " +
                             shown(data[i]));
  int64_t v = 0;
  for (; i < size && data[i] >= '0' && data[i] <= '9'; ++i) {
    v = v * 10 + (data[i] - '0');
    if (v > INT32_MAX) return Status::bad_input(std::string("PGM/PPM ") + what + " is too large");
  }
  if (i == size) return Status::bad_input("truncated PGM/PPM header");
  if (!is_space(data[i]) && data[i] != '#')
    return Status::bad_input(std::string("bad PGM/PPM header: ") + what + " is followed by " +
                             shown(data[i]));
  *pos = i;
  *value = v;
  return Status::Ok();
}

struct PnmLayout {
  int width = 0, height = 0, channels = 0;
  size_t pixel_offset = 0;
};

Status parse_layout(const uint8_t* data, size_t size, PnmLayout* layout) {
  if (size < 3 || data[0] != 'P') return Status::bad_input("truncated PGM/PPM header");
  if (data[1] == '1' || data[1] == '2' || data[1] == '3' || data[1] == '4' || data[1] == '7')
    return Status::bad_input(std::string("PNM type P") + char(data[1]) +
                             " is not supported (only binary P5 PGM and P6 PPM)");
  if (data[1] != '5' && data[1] != '6') return Status::bad_input("not a PGM/PPM file");
  if (!is_space(data[2]) && data[2] != '#')
    return Status::bad_input("bad PGM/PPM header: the magic number is followed by " + shown(data[2]));
  size_t pos = 2;
  int64_t width, height, maxval;
  PARVIS_TRY(read_header_number(data, size, &pos, "width", &width));
  PARVIS_TRY(read_header_number(data, size, &pos, "height", &height));
  PARVIS_TRY(read_header_number(data, size, &pos, "maxval", &maxval));
  if (maxval != 255)
    return Status::bad_input("PGM/PPM maxval " + std::to_string(maxval) + " is not supported (only 255)");
  if (!is_space(data[pos]))  // a comment here would be ambiguous with the pixels
    return Status::bad_input("bad PGM/PPM header: maxval must be followed by one whitespace character");
  ++pos;
  const int channels = data[1] == '5' ? 1 : 3;
  PARVIS_TRY(check_input_size(width, height, channels));
  const uint64_t pixel_bytes = uint64_t(width) * uint64_t(height) * uint64_t(channels);  // <= 2^31
  if (pixel_bytes > size - pos)
    return Status::bad_input("truncated PGM/PPM pixel data: " + std::to_string(pixel_bytes) +
                             " bytes expected, the file has " + std::to_string(size - pos));
  *layout = PnmLayout{int(width), int(height), channels, pos};
  return Status::Ok();
}

}  // namespace

Status pnm_extent(const uint8_t* head, size_t size, uint64_t* bytes) {
  if (size < 3 || head[0] != 'P' || (head[1] != '5' && head[1] != '6'))
    return Status::bad_input("not a P5/P6 PGM/PPM file");
  size_t pos = 2;
  int64_t width, height, maxval;
  PARVIS_TRY(read_header_number(head, size, &pos, "width", &width));
  PARVIS_TRY(read_header_number(head, size, &pos, "height", &height));
  PARVIS_TRY(read_header_number(head, size, &pos, "maxval", &maxval));
  const int channels = head[1] == '5' ? 1 : 3;
  PARVIS_TRY(check_input_size(width, height, channels));
  *bytes = uint64_t(pos) + 1 + uint64_t(width) * uint64_t(height) * uint64_t(channels);
  return Status::Ok();
}

Status pnm_info(const uint8_t* data, size_t size, ImageInfo* info) {
  PnmLayout layout;
  PARVIS_TRY(parse_layout(data, size, &layout));
  *info = ImageInfo{layout.width, layout.height, layout.channels};
  return Status::Ok();
}

Status pnm_decode(const uint8_t* data, size_t size, Image* out) {
  PnmLayout layout;
  PARVIS_TRY(parse_layout(data, size, &layout));
  Image img;
  PARVIS_TRY(image_alloc(layout.width, layout.height, layout.channels, &img));
  std::copy(data + layout.pixel_offset, data + layout.pixel_offset + img.pixels.size(),
            img.pixels.begin());
  *out = std::move(img);
  return Status::Ok();
}

Status pnm_encode(const Image& img, PnmKind kind, std::vector<uint8_t>* out) {
  if (kind == PnmKind::Pgm && img.channels != 1)
    return Status::bad_input("a colour image cannot be written as PGM (use .ppm, or convert to grey)");
  const bool colour = kind == PnmKind::Ppm || (kind == PnmKind::ByChannels && img.channels == 3);
  const std::string header = std::string(colour ? "P6" : "P5") + "\n" + std::to_string(img.width) +
                             " " + std::to_string(img.height) + "\n255\n";
  const size_t row_bytes = size_t(img.width) * (colour ? 3 : 1);
  out->assign(header.begin(), header.end());
  out->reserve(header.size() + row_bytes * size_t(img.height));
  for (int y = 0; y < img.height; ++y) {
    const uint8_t* src = img.row(y);
    if (colour && img.channels == 1) {  // grey to PPM: replicate
      for (int x = 0; x < img.width; ++x) out->insert(out->end(), {src[x], src[x], src[x]});
    } else {
      out->insert(out->end(), src, src + row_bytes);
    }
  }
  return Status::Ok();
}

}  // namespace codec
}  // namespace parvis
