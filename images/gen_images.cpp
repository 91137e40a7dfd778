// parvis-gen's plain test images: noise, grey maps, gradients, flat and all-colours pictures.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "gen.hpp"

namespace parvis::gen {

namespace {

// floor(sqrt(v)) in integers.
uint64_t isqrt(uint64_t v) {
  uint64_t r = 0, bit = uint64_t(1) << 62;
  while (bit > v) bit >>= 2;
  while (bit != 0) {
    if (v >= r + bit) {
      v -= r + bit;
      r = (r >> 1) + bit;
    } else {
      r >>= 1;
    }
    bit >>= 2;
  }
  return r;
}

}  // namespace

Image alloc_or_die(int w, int h, int channels) {
  Image img;
  Status s = image_alloc(w, h, channels, &img);
  if (!s.ok()) {
    std::fprintf(stderr, "parvis-gen: %s\n", s.message.c_str());
    std::exit(s.code);
  }
  return img;
}

// ------------------------------------------------------------------ noise images

// Uniform 0..255 on every channel: the input that exposes wrong arithmetic.
Image noise_image(int w, int h, int channels, uint64_t seed) {
  Image img = alloc_or_die(w, h, channels);
  Rng rng(seed);
  for (uint8_t& p : img.pixels) p = uint8_t(rng.next() >> 56);
  return img;
}

// ------------------------------------------------------------------ grey maps

// Grey radial gradient: 0 at the centre, 255 at the corners (the blur map: sharp centre,
// blurred rim). Rounded from an integer square root, no libm.
Image radial_map(int w, int h) {
  Image img = alloc_or_die(w, h, 1);
  // Doubled coordinates so the centre of an even side lies between pixels exactly.
  const int64_t cx2 = w - 1, cy2 = h - 1;
  const uint64_t dmax2 = uint64_t(cx2 * cx2 + cy2 * cy2);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int64_t dx = 2 * int64_t(x) - cx2, dy = 2 * int64_t(y) - cy2;
      const uint64_t d2 = uint64_t(dx * dx + dy * dy);
      // 256 * 255 * d / dmax, rounded to the nearest integer afterwards.
      const uint64_t q = dmax2 ? uint64_t(255 * 255) * 65536 * d2 / dmax2 : 0;
      img.at(x, y)[0] = clamp255(int((isqrt(q) + 128) >> 8));
    }
  return img;
}

// Grey noise with about one pixel in eight set to 0 ("copy this pixel" for the blur map).
Image noise_map(int w, int h, uint64_t seed) {
  Image img = alloc_or_die(w, h, 1);
  Rng rng(seed);
  for (uint8_t& p : img.pixels) {
    const uint64_t v = rng.next();
    p = (v & 7) == 0 ? 0 : uint8_t(v >> 56);
  }
  return img;
}

// Smooth RGB gradient: red along x, green along y, blue along the diagonal.
Image gradient_image(int w, int h) {
  Image img = alloc_or_die(w, h, 3);
  const int wd = std::max(1, w - 1), hd = std::max(1, h - 1);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = img.at(x, y);
      p[0] = uint8_t((255 * x + wd / 2) / wd);
      p[1] = uint8_t((255 * y + hd / 2) / hd);
      p[2] = uint8_t((255 * (x * hd + y * wd) + wd * hd) / (2 * wd * hd));
    }
  return img;
}

Image flat_image(int w, int h, int channels, Color c) {
  Image img = alloc_or_die(w, h, channels);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = img.at(x, y);
      if (channels == 1) p[0] = uint8_t(c.r);
      else p[0] = uint8_t(c.r), p[1] = uint8_t(c.g), p[2] = uint8_t(c.b);
    }
  return img;
}

// Every 24-bit colour once: pixel i = y * 4096 + x has R = i >> 16, G = (i >> 8) & 255,
// B = i & 255. The test of the grey conversion on all 2^24 colours (docs/DESIGN.md, "Grey").
Image all_colours_image() {
  Image img = alloc_or_die(4096, 4096, 3);
  for (uint32_t i = 0; i < (1u << 24); ++i) {
    uint8_t* p = img.data() + size_t(i) * 3;
    p[0] = uint8_t(i >> 16), p[1] = uint8_t(i >> 8), p[2] = uint8_t(i);
  }
  return img;
}

}  // namespace parvis::gen
