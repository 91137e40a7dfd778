// Own BMP codec. Reads the uncompressed flavours: 1/4/8-bit palette, 16/24/32-bit with
// BI_RGB or BI_BITFIELDS (any contiguous masks), bottom-up or top-down (negative height),
// any row padding, headers BITMAPCOREHEADER (12 bytes) to BITMAPV5HEADER (124). Writes
// 8-bit grey with a grey palette, or 24-bit, bottom-up.
//
// Every pixel, whatever its bit count, goes through one path: unpack_row turns a file row
// into one raw value per pixel, which is then a palette index or a word of colour bit
// fields (24-bit is just fixed masks). BMP stores blue, green, red; Image is RGB.
#include <algorithm>
#include <cstdio>
#include <string>

#include "codecs.hpp"

namespace parvis {
namespace codec {
namespace {

constexpr size_t kFileHeaderBytes = 14;
constexpr uint32_t kBiRgb = 0, kBiRle8 = 1, kBiRle4 = 2, kBiBitfields = 3, kBiAlphaBitfields = 6;

uint32_t le16(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8; }
uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
void put_le16(std::vector<uint8_t>* out, uint32_t v) {
  out->push_back(uint8_t(v));
  out->push_back(uint8_t(v >> 8));
}
void put_le32(std::vector<uint8_t>* out, uint32_t v) {
  put_le16(out, v & 0xffff);
  put_le16(out, v >> 16);
}

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// One colour channel as a bit field of the raw pixel word.
struct BitField {
  uint32_t mask = 0;
  int shift = 0;  // position of the lowest set bit
  int bits = 0;   // width of the field (the mask is contiguous)
};

Status make_bit_field(uint32_t mask, int bits_per_pixel, const char* channel, BitField* out) {
  if (mask == 0) return Status::bad_input(std::string("BMP ") + channel + " bit mask is empty");
  if (bits_per_pixel < 32 && (mask >> bits_per_pixel) != 0)
    return Status::bad_input(std::string("BMP ") + channel + " bit mask " + hex(mask) +
                             " does not fit in a " + std::to_string(bits_per_pixel) + "-bit pixel");
  int shift = 0;
  while (((mask >> shift) & 1u) == 0) ++shift;
  const uint64_t field = mask >> shift;
  if ((field & (field + 1)) != 0)  // contiguous ones are 2^k - 1
    return Status::bad_input(std::string("BMP ") + channel + " bit mask " + hex(mask) +
                             " is not contiguous");
  int bits = 0;
  while ((field >> bits) != 0) ++bits;
  *out = {mask, shift, bits};
  return Status::Ok();
}

// A field's value scaled to 0..255: wide fields keep their top 8 bits, narrow ones are
// rounded from 0..2^bits-1 (so 5-bit 31 -> 255 and 1-bit 1 -> 255).
uint8_t field_value(uint32_t raw, const BitField& f) {
  const uint32_t v = (raw & f.mask) >> f.shift;
  if (f.bits >= 8) return uint8_t(v >> (f.bits - 8));
  const uint32_t max = (1u << f.bits) - 1;
  return uint8_t((v * 255 + max / 2) / max);
}

struct BmpLayout {
  int width = 0;
  int height = 0;
  bool top_down = false;
  int bits_per_pixel = 0;
  std::vector<Rgb> palette;  // bits_per_pixel <= 8 only
  BitField fields[3];        // red, green, blue; bits_per_pixel >= 16 only
  int channels = 0;          // what the decoded image will have
  size_t pixel_offset = 0;
  size_t row_bytes = 0;      // with padding to 4 bytes
};

Status parse_palette(const uint8_t* data, size_t size, size_t at, uint32_t colours_used,
                     size_t entry_bytes, uint32_t pixel_offset, BmpLayout* layout) {
  const uint32_t max_colours = 1u << layout->bits_per_pixel;
  uint32_t count = colours_used;
  if (count == 0) {
    // "0 = all 2^bpp colours", but some writers store fewer and say so only through the
    // pixel offset: believe the offset when it leaves room for a shorter palette.
    count = max_colours;
    if (pixel_offset > at && (pixel_offset - at) / entry_bytes < count)
      count = uint32_t((pixel_offset - at) / entry_bytes);
  }
  if (count == 0) return Status::bad_input("BMP palette is empty");
  if (count > max_colours)
    return Status::bad_input("BMP palette of " + std::to_string(count) + " colours is too large for " +
                             std::to_string(layout->bits_per_pixel) + "-bit pixels");
  if (uint64_t(count) * entry_bytes > size - at)  // at <= size is known here
    return Status::bad_input("truncated BMP palette");
  bool grey = true;
  layout->palette.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* e = data + at + size_t(i) * entry_bytes;
    layout->palette[i] = Rgb{e[2], e[1], e[0]};
    grey = grey && e[0] == e[1] && e[1] == e[2];
  }
  layout->channels = grey ? 1 : 3;
  return Status::Ok();
}

// Reads and checks everything but the pixels: sizes, bit count, masks, palette, offsets.
Status parse_layout(const uint8_t* data, size_t size, BmpLayout* layout) {
  if (size < kFileHeaderBytes + 4) return Status::bad_input("truncated BMP header");
  if (data[0] != 'B' || data[1] != 'M') return Status::bad_input("not a BMP file");
  const uint32_t pixel_offset = le32(data + 10);
  const uint32_t header_bytes = le32(data + 14);
  if (header_bytes != 12 && header_bytes != 40 && header_bytes != 52 && header_bytes != 56 &&
      header_bytes != 108 && header_bytes != 124)
    return Status::bad_input("unsupported BMP header size " + std::to_string(header_bytes));
  if (size - kFileHeaderBytes < header_bytes)
    return Status::bad_input("truncated BMP header: " + std::to_string(size) + " bytes, its " +
                             std::to_string(header_bytes) + "-byte header ends at " +
                             std::to_string(kFileHeaderBytes + header_bytes));
  const uint8_t* h = data + kFileHeaderBytes;

  int64_t width, height;
  uint32_t compression = kBiRgb, colours_used = 0;
  size_t palette_entry_bytes = 4;
  if (header_bytes == 12) {  // BITMAPCOREHEADER (OS/2 1.x): 16-bit sides, 3-byte palette entries
    width = le16(h + 4);
    height = le16(h + 6);
    layout->bits_per_pixel = int(le16(h + 10));
    palette_entry_bytes = 3;
  } else {
    width = int32_t(le32(h + 4));
    height = int32_t(le32(h + 8));
    layout->bits_per_pixel = int(le16(h + 14));
    compression = le32(h + 16);
    colours_used = le32(h + 32);
  }
  layout->top_down = height < 0;
  if (height < 0) height = -height;  // int64: -INT32_MIN is representable

  const int bpp = layout->bits_per_pixel;
  if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32)
    return Status::bad_input("unsupported BMP bit count " + std::to_string(bpp) +
                             " (supported: 1, 4, 8, 16, 24, 32)");
  const bool bitfields = compression == kBiBitfields || compression == kBiAlphaBitfields;
  if (compression == kBiRle8 || compression == kBiRle4)
    return Status::bad_input("RLE-compressed BMP is not supported");
  if (compression != kBiRgb && !bitfields)
    return Status::bad_input("unsupported BMP compression " + std::to_string(compression));
  if (bitfields && bpp != 16 && bpp != 32)
    return Status::bad_input("BMP bit fields need 16 or 32 bits per pixel, not " +
                             std::to_string(bpp));

  size_t headers_end = kFileHeaderBytes + header_bytes;
  if (bpp <= 8) {
    PARVIS_TRY(parse_palette(data, size, headers_end, colours_used, palette_entry_bytes, pixel_offset,
                             layout));
    headers_end += layout->palette.size() * palette_entry_bytes;
  } else {
    uint32_t masks[3];
    if (bitfields) {
      // BITMAPINFOHEADER keeps its masks just after it; the later headers hold them inside.
      const uint8_t* m = h + 40;
      if (header_bytes == 40) {
        const size_t mask_bytes = compression == kBiAlphaBitfields ? 16 : 12;
        if (size - headers_end < mask_bytes) return Status::bad_input("truncated BMP bit masks");
        m = data + headers_end;
        headers_end += mask_bytes;
      }
      for (int c = 0; c < 3; ++c) masks[c] = le32(m + 4 * c);
    } else if (bpp == 16) {  // BI_RGB 16-bit is 5-5-5
      masks[0] = 0x7c00, masks[1] = 0x03e0, masks[2] = 0x001f;
    } else {
      masks[0] = 0xff0000, masks[1] = 0x00ff00, masks[2] = 0x0000ff;
    }
    const char* names[3] = {"red", "green", "blue"};
    for (int c = 0; c < 3; ++c) PARVIS_TRY(make_bit_field(masks[c], bpp, names[c], &layout->fields[c]));
    layout->channels = 3;
  }

  PARVIS_TRY(check_input_size(width, height, layout->channels));
  layout->width = int(width);
  layout->height = int(height);
  // width * height <= 2^31 (checked above) and bpp <= 32, so none of these overflow.
  layout->row_bytes = size_t((uint64_t(width) * uint64_t(bpp) + 31) / 32 * 4);
  const uint64_t pixel_bytes = uint64_t(layout->row_bytes) * uint64_t(height);
  if (pixel_offset < headers_end)
    return Status::bad_input("BMP pixel data offset " + std::to_string(pixel_offset) +
                             " points into the headers (they end at " + std::to_string(headers_end) + ")");
  if (pixel_offset > size || pixel_bytes > size - pixel_offset)
    return Status::bad_input("truncated BMP pixel data: " + std::to_string(pixel_bytes) +
                             " bytes expected at offset " + std::to_string(pixel_offset) +
                             ", the file has " + std::to_string(size));
  layout->pixel_offset = pixel_offset;
  return Status::Ok();
}

// The one bit-unpacking routine: pixel x of a row as an unsigned value. Pixels narrower
// than a byte are packed from the most significant bit; wider ones are little endian.
void unpack_row(const uint8_t* row, int width, int bits_per_pixel, uint32_t* raw) {
  if (bits_per_pixel < 8) {
    const uint32_t value_mask = (1u << bits_per_pixel) - 1;
    for (int x = 0; x < width; ++x) {
      const size_t bit = size_t(x) * size_t(bits_per_pixel);
      const int shift = 8 - bits_per_pixel - int(bit % 8);
      raw[x] = (uint32_t(row[bit / 8]) >> shift) & value_mask;
    }
    return;
  }
  const int bytes = bits_per_pixel / 8;
  for (int x = 0; x < width; ++x) {
    const uint8_t* p = row + size_t(x) * size_t(bytes);
    uint32_t v = 0;
    for (int b = bytes - 1; b >= 0; --b) v = v << 8 | p[b];
    raw[x] = v;
  }
}

}  // namespace

Status bmp_extent(const uint8_t* head, size_t size, uint64_t* bytes) {
  // The pixel offset plus the rows the header declares; the offset may leave a gap after the
  // headers (colour profiles, padding), at most kMaxGap of it is read.
  constexpr uint64_t kMaxGap = uint64_t(16) << 20;
  if (size < kFileHeaderBytes + 4) return Status::bad_input("truncated BMP header");
  const uint32_t header_bytes = le32(head + 14);
  if (header_bytes != 12 && header_bytes < 40)
    return Status::bad_input("unsupported BMP header size " + std::to_string(header_bytes));
  // The fields read here: up to the bit count (12-byte header: byte 12, the others: byte 16).
  const size_t need = kFileHeaderBytes + (header_bytes == 12 ? 12 : 16);
  if (size < need)
    return Status::bad_input("truncated BMP header: " + std::to_string(size) + " bytes, its " +
                             std::to_string(header_bytes) + "-byte header ends at " +
                             std::to_string(kFileHeaderBytes + header_bytes));
  const uint8_t* h = head + kFileHeaderBytes;
  int64_t width, height;
  int bpp;
  if (header_bytes == 12) {
    width = le16(h + 4), height = le16(h + 6), bpp = int(le16(h + 10));
  } else {
    width = int32_t(le32(h + 4)), height = int32_t(le32(h + 8)), bpp = int(le16(h + 14));
  }
  if (height < 0) height = -height;
  if (bpp < 1 || bpp > 32) return Status::bad_input("unsupported BMP bit count " + std::to_string(bpp));
  // Pixels of more than 8 bits decode to RGB: the size is checked as such before any is read.
  PARVIS_TRY(check_input_size(width, height, bpp > 8 ? 3 : 1));
  const uint64_t row_bytes = (uint64_t(width) * uint64_t(bpp) + 31) / 32 * 4;
  const uint64_t offset = std::min<uint64_t>(le32(head + 10), kFileHeaderBytes + header_bytes + 1024 + kMaxGap);
  *bytes = offset + row_bytes * uint64_t(height);
  return Status::Ok();
}

Status bmp_info(const uint8_t* data, size_t size, ImageInfo* info) {
  BmpLayout layout;
  PARVIS_TRY(parse_layout(data, size, &layout));
  *info = ImageInfo{layout.width, layout.height, layout.channels};
  return Status::Ok();
}

Status bmp_decode(const uint8_t* data, size_t size, Image* out) {
  BmpLayout layout;
  PARVIS_TRY(parse_layout(data, size, &layout));
  Image img;
  PARVIS_TRY(image_alloc(layout.width, layout.height, layout.channels, &img));
  std::vector<uint32_t> raw(size_t(layout.width));
  const uint32_t palette_size = uint32_t(layout.palette.size());
  for (int file_row = 0; file_row < layout.height; ++file_row) {
    const int y = layout.top_down ? file_row : layout.height - 1 - file_row;
    unpack_row(data + layout.pixel_offset + size_t(file_row) * layout.row_bytes, layout.width,
               layout.bits_per_pixel, raw.data());
    uint8_t* dst = img.row(y);
    for (int x = 0; x < layout.width; ++x) {
      if (layout.bits_per_pixel <= 8) {
        if (raw[x] >= palette_size)
          return Status::bad_input("BMP pixel index " + std::to_string(raw[x]) +
                                   " is beyond the palette of " + std::to_string(palette_size) +
                                   " colours");
        const Rgb c = layout.palette[raw[x]];
        if (layout.channels == 1) {
          dst[x] = c.r;
        } else {
          dst[3 * x] = c.r, dst[3 * x + 1] = c.g, dst[3 * x + 2] = c.b;
        }
      } else {
        for (int c = 0; c < 3; ++c) dst[3 * x + c] = field_value(raw[x], layout.fields[c]);
      }
    }
  }
  *out = std::move(img);
  return Status::Ok();
}

Status bmp_encode(const Image& img, std::vector<uint8_t>* out) {
  const bool grey = img.channels == 1;
  const uint32_t bpp = grey ? 8 : 24;
  const uint32_t palette_bytes = grey ? 256 * 4 : 0;
  const uint32_t pixel_offset = uint32_t(kFileHeaderBytes) + 40 + palette_bytes;
  const uint64_t row_bytes = (uint64_t(img.width) * bpp / 8 + 3) / 4 * 4;
  const uint64_t file_bytes = pixel_offset + row_bytes * uint64_t(img.height);
  if (file_bytes > UINT32_MAX)
    return Status::bad_input("image " + std::to_string(img.width) + "x" + std::to_string(img.height) +
                             " is too large for a BMP file");
  out->clear();
  out->reserve(size_t(file_bytes));
  // BITMAPFILEHEADER
  out->push_back('B');
  out->push_back('M');
  put_le32(out, uint32_t(file_bytes));
  put_le32(out, 0);  // reserved
  put_le32(out, pixel_offset);
  // BITMAPINFOHEADER, bottom-up
  put_le32(out, 40);
  put_le32(out, uint32_t(img.width));
  put_le32(out, uint32_t(img.height));
  put_le16(out, 1);  // planes
  put_le16(out, bpp);
  put_le32(out, kBiRgb);
  put_le32(out, uint32_t(row_bytes * uint64_t(img.height)));
  put_le32(out, 2835);  // 72 dpi, in pixels per metre
  put_le32(out, 2835);
  put_le32(out, grey ? 256 : 0);  // colours used
  put_le32(out, 0);               // colours important
  for (uint32_t i = 0; i < palette_bytes / 4; ++i) {
    const uint8_t level = uint8_t(i);
    out->insert(out->end(), {level, level, level, 0});
  }
  const size_t pixel_bytes = size_t(img.width) * size_t(img.channels);
  for (int y = img.height - 1; y >= 0; --y) {
    const uint8_t* src = img.row(y);
    if (grey) {
      out->insert(out->end(), src, src + pixel_bytes);
    } else {
      for (int x = 0; x < img.width; ++x)
        out->insert(out->end(), {src[3 * x + 2], src[3 * x + 1], src[3 * x]});
    }
    out->resize(out->size() + size_t(row_bytes - pixel_bytes), 0);
  }
  return Status::Ok();
}

}  // namespace codec
}  // namespace parvis
