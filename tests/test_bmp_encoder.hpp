// The test-only BMP encoder of parvis-imgtest (tests/image_test.cpp): the BMP flavours the library
// does not write (palettes of 1, 4 and 8 bits, 16- and 32-bit pixels, bit fields, core and V5
// headers, top-down rows, gaps before the pixels), made from deterministic noise together with the
// image the decoder must return. It shares no code with the decoder (bmp/bmp.cpp).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/image.hpp"
#include "common/splitmix.hpp"

namespace parvis::test_bmp {

// Deterministic noise (splitmix64's high halves), so a failure can be reproduced.
struct Rng {
  SplitMix64 g;
  uint32_t next() { return uint32_t(g.next() >> 32); }
  uint8_t byte() { return uint8_t(next()); }
  uint32_t below(uint32_t n) { return next() % n; }
};

inline void put16(std::vector<uint8_t>* b, uint32_t v) {
  b->push_back(uint8_t(v & 0xff));
  b->push_back(uint8_t((v >> 8) & 0xff));
}
inline void put32(std::vector<uint8_t>* b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b->push_back(uint8_t((v >> (8 * i)) & 0xff));
}
inline void poke16(std::vector<uint8_t>* b, size_t at, uint32_t v) {
  (*b)[at] = uint8_t(v & 0xff), (*b)[at + 1] = uint8_t((v >> 8) & 0xff);
}
inline void poke32(std::vector<uint8_t>* b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*b)[at + size_t(i)] = uint8_t((v >> (8 * i)) & 0xff);
}

struct BmpFlavour {
  std::string name;
  int bits_per_pixel = 24;
  int header_bytes = 40;        // 12 (BITMAPCOREHEADER), 40 (BITMAPINFOHEADER), 124 (V5)
  uint32_t compression = 0;     // 0 BI_RGB, 3 BI_BITFIELDS, 6 BI_ALPHABITFIELDS
  uint32_t masks[3] = {0, 0, 0};  // red, green, blue (bit fields only)
  bool top_down = false;
  std::vector<Rgb> palette;     // bits_per_pixel <= 8
  bool palette_count_in_header = false;  // write biClrUsed (else 0 = 2^bpp)
  size_t gap = 0;               // junk bytes between the headers and the pixels
};

// `raw` holds one value per pixel, rows top-down: a palette index or a packed pixel word.
inline std::vector<uint8_t> encode_test_bmp(const BmpFlavour& f, int width, int height,
                                     const std::vector<uint32_t>& raw) {
  const bool core = f.header_bytes == 12;
  const size_t entry = core ? 3 : 4;
  const bool masks_after_header = f.header_bytes == 40 && f.compression != 0;
  const size_t mask_bytes = masks_after_header ? (f.compression == 6 ? 16 : 12) : 0;
  const size_t offset = 14 + size_t(f.header_bytes) + mask_bytes + f.palette.size() * entry + f.gap;
  const size_t row_bytes = ((size_t(width) * size_t(f.bits_per_pixel) + 31) / 32) * 4;

  std::vector<uint8_t> b;
  b.push_back('B'), b.push_back('M');
  put32(&b, uint32_t(offset + row_bytes * size_t(height)));
  put32(&b, 0);
  put32(&b, uint32_t(offset));
  put32(&b, uint32_t(f.header_bytes));
  if (core) {
    put16(&b, uint32_t(width));
    put16(&b, uint32_t(height));
    put16(&b, 1);
    put16(&b, uint32_t(f.bits_per_pixel));
  } else {
    put32(&b, uint32_t(width));
    put32(&b, uint32_t(f.top_down ? -height : height));
    put16(&b, 1);
    put16(&b, uint32_t(f.bits_per_pixel));
    put32(&b, f.compression);
    put32(&b, uint32_t(row_bytes * size_t(height)));
    put32(&b, 3780), put32(&b, 3780);
    put32(&b, f.palette_count_in_header ? uint32_t(f.palette.size()) : 0);
    put32(&b, 0);
    if (f.header_bytes > 40) {  // V5: the masks, alpha mask 0, then zeros (colour space etc.)
      for (uint32_t m : f.masks) put32(&b, m);
      b.resize(14 + size_t(f.header_bytes), 0);
    }
  }
  if (masks_after_header) {
    for (uint32_t m : f.masks) put32(&b, m);
    if (f.compression == 6) put32(&b, 0xff000000u);
  }
  for (const Rgb& c : f.palette) {
    b.push_back(c.b), b.push_back(c.g), b.push_back(c.r);
    if (!core) b.push_back(0);
  }
  b.resize(b.size() + f.gap, 0x5a);
  for (int i = 0; i < height; ++i) {
    const int y = f.top_down ? i : height - 1 - i;
    std::vector<uint8_t> row(row_bytes, 0);
    for (int x = 0; x < width; ++x) {
      const uint32_t v = raw[size_t(y) * size_t(width) + size_t(x)];
      if (f.bits_per_pixel < 8) {  // pack from the most significant bit down
        const int first_bit = x * f.bits_per_pixel;
        for (int k = 0; k < f.bits_per_pixel; ++k)
          if (v >> (f.bits_per_pixel - 1 - k) & 1) row[size_t((first_bit + k) / 8)] |= uint8_t(0x80 >> ((first_bit + k) % 8));
      } else {
        for (int k = 0; k < f.bits_per_pixel / 8; ++k) row[size_t(x * f.bits_per_pixel / 8 + k)] = uint8_t(v >> (8 * k));
      }
    }
    b.insert(b.end(), row.begin(), row.end());
  }
  return b;
}

// A field value that decodes to `v`: wide fields keep v in their top 8 bits (the lower
// bits are noise the decoder must ignore); narrow fields keep v's top bits.
inline uint32_t field_of(uint8_t v, int bits, Rng* rng) {
  if (bits >= 8) return uint32_t(v) << (bits - 8) | (rng->next() & ((1u << (bits - 8)) - 1));
  return uint32_t(v) >> (8 - bits);
}
// What a narrow field decodes to: rounded to 0..255.
inline uint8_t expanded(uint32_t field, int bits) {
  if (bits >= 8) return uint8_t(field >> (bits - 8));
  return uint8_t(std::lround(field * 255.0 / double((1u << bits) - 1)));
}

inline int lowest_bit(uint32_t m) { int s = 0; while (!(m >> s & 1)) ++s; return s; }
inline int bit_count(uint32_t m) { int n = 0; for (; m; m &= m - 1) ++n; return n; }

// Builds a w x h BMP of flavour f from noise; `want` is what the decoder must return.
inline std::vector<uint8_t> make_flavour(const BmpFlavour& f, int w, int h, uint64_t seed, Image* want) {
  Rng rng{seed};
  std::vector<uint32_t> raw(size_t(w) * size_t(h));
  if (f.bits_per_pixel <= 8) {
    bool grey = true;
    for (const Rgb& c : f.palette) grey = grey && c.r == c.g && c.g == c.b;
    image_alloc(w, h, grey ? 1 : 3, want);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const uint32_t index = rng.below(uint32_t(f.palette.size()));
        raw[size_t(y) * size_t(w) + size_t(x)] = index;
        const Rgb c = f.palette[index];
        if (grey) {
          want->at(x, y)[0] = c.r;
        } else {
          want->at(x, y)[0] = c.r, want->at(x, y)[1] = c.g, want->at(x, y)[2] = c.b;
        }
      }
  } else {
    uint32_t masks[3];
    if (f.compression != 0) {
      std::copy(f.masks, f.masks + 3, masks);
    } else if (f.bits_per_pixel == 16) {
      masks[0] = 0x7c00, masks[1] = 0x03e0, masks[2] = 0x001f;
    } else {
      masks[0] = 0xff0000, masks[1] = 0x00ff00, masks[2] = 0x0000ff;
    }
    image_alloc(w, h, 3, want);
    uint32_t unused = 0xffffffffu >> (32 - f.bits_per_pixel);
    for (uint32_t m : masks) unused &= ~m;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        uint32_t word = rng.next() & unused;  // alpha / unused bits: noise, ignored
        for (int c = 0; c < 3; ++c) {
          const int bits = bit_count(masks[c]);
          const uint32_t field = field_of(rng.byte(), bits, &rng);
          word |= field << lowest_bit(masks[c]);
          want->at(x, y)[c] = expanded(field, bits);
        }
        raw[size_t(y) * size_t(w) + size_t(x)] = word;
      }
  }
  return encode_test_bmp(f, w, h, raw);
}

inline std::vector<Rgb> random_palette(size_t n, bool grey, uint64_t seed) {
  Rng rng{seed};
  std::vector<Rgb> p(n);
  for (Rgb& c : p) {
    c = Rgb{rng.byte(), rng.byte(), rng.byte()};
    if (grey) c.g = c.b = c.r;
  }
  if (!grey && n >= 2) p[1] = Rgb{10, 200, 30};  // surely not grey
  return p;
}

inline std::vector<BmpFlavour> bmp_flavours() {
  std::vector<BmpFlavour> v;
  auto palette_flavour = [&](const std::string& name, int bpp, size_t colours, bool grey) {
    BmpFlavour f;
    f.name = name;
    f.bits_per_pixel = bpp;
    f.palette = random_palette(colours, grey, uint64_t(bpp) * 7 + colours + (grey ? 1 : 0));
    f.palette_count_in_header = colours != (size_t(1) << bpp);
    v.push_back(f);
    return &v.back();
  };
  palette_flavour("pal1_colour", 1, 2, false);
  palette_flavour("pal1_grey", 1, 2, true);
  palette_flavour("pal4_colour", 4, 16, false);
  palette_flavour("pal4_grey", 4, 16, true);
  palette_flavour("pal8_colour", 8, 256, false);
  palette_flavour("pal8_grey", 8, 256, true);
  palette_flavour("pal8_13colours_gap", 8, 13, false)->gap = 7;
  // biClrUsed left 0 with a 20-entry palette: only the pixel offset tells the size.
  palette_flavour("pal8_short_palette_unsaid", 8, 20, false)->palette_count_in_header = false;
  palette_flavour("pal4_topdown", 4, 11, false)->top_down = true;
  palette_flavour("pal8_core_header", 8, 256, false)->header_bytes = 12;
  palette_flavour("pal1_core_header_grey", 1, 2, true)->header_bytes = 12;

  BmpFlavour f;
  f.name = "rgb24";
  v.push_back(f);
  f.name = "rgb24_topdown", f.top_down = true;
  v.push_back(f);
  f = BmpFlavour();
  f.name = "rgb24_core_header", f.header_bytes = 12;
  v.push_back(f);
  f = BmpFlavour();
  f.name = "rgb24_gap", f.gap = 33;
  v.push_back(f);
  f = BmpFlavour();
  f.name = "rgb32", f.bits_per_pixel = 32;
  v.push_back(f);
  f.name = "rgb32_topdown", f.top_down = true;
  v.push_back(f);
  f = BmpFlavour();
  f.name = "rgb32_bitfields_shuffled", f.bits_per_pixel = 32, f.compression = 3;
  f.masks[0] = 0x0000ff00, f.masks[1] = 0xff000000, f.masks[2] = 0x00ff0000;
  v.push_back(f);
  f.name = "rgb32_alphabitfields", f.compression = 6;
  f.masks[0] = 0x00ff0000, f.masks[1] = 0x0000ff00, f.masks[2] = 0x000000ff;
  v.push_back(f);
  f = BmpFlavour();
  f.name = "rgb32_bitfields_10bit_v5_topdown", f.bits_per_pixel = 32, f.compression = 3;
  f.header_bytes = 124, f.top_down = true;
  f.masks[0] = 0x3ff00000, f.masks[1] = 0x000ffc00, f.masks[2] = 0x000003ff;
  v.push_back(f);
  f = BmpFlavour();
  f.name = "rgb32_bitfields_narrow", f.bits_per_pixel = 32, f.compression = 3;
  f.masks[0] = 0x00000007, f.masks[1] = 0x00001f80, f.masks[2] = 0x80000000;  // 3, 6 and 1 bits
  v.push_back(f);
  f = BmpFlavour();
  f.name = "rgb16_555", f.bits_per_pixel = 16;
  v.push_back(f);
  f.name = "rgb16_565_bitfields", f.compression = 3;
  f.masks[0] = 0xf800, f.masks[1] = 0x07e0, f.masks[2] = 0x001f;
  v.push_back(f);
  return v;
}

}  // namespace parvis::test_bmp
