// parvis-gen: the project's own image generator. It makes the committed sample pictures
// (images/), the test inputs (build/testdata) and large bench inputs, all from a seeded
// PRNG with integer arithmetic only, so every platform and compiler writes the same bytes.
//
//   parvis-gen samples DIR      the committed samples (capsule scenes and their templates)
//   parvis-gen testdata DIR     every input the test cases use
//   parvis-gen crop IN X Y W H OUT
//   parvis-gen noise WxH OUT [--seed S] [--gray]
//   parvis-gen scene WxH OUT [--seed S] [--kind capsules|natural] [--scale N]
//                            [--template TPL_OUT] [--template-size WxH]
//
// No floating point anywhere: value noise, shading and geometry are fixed point, so the
// result does not depend on libm or on how a compiler contracts float expressions.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/image.hpp"
#include "common/output.hpp"
#include "image_io.hpp"
#include "video/yuv.hpp"

using namespace parvis;

namespace {

// ------------------------------------------------------------------ deterministic randomness

// splitmix64's output function: a good 64-bit mixer, used both as a PRNG step and as a hash.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A hash of integer coordinates: position-stable randomness (a texture that moves with the
// belt, or lattice values of value noise) without keeping any state.
uint64_t hash_at(uint64_t seed, int64_t a, int64_t b = 0, int64_t c = 0) {
  uint64_t h = mix64(seed + 0x9e3779b97f4a7c15ULL);
  h = mix64(h ^ (uint64_t(a) + 0x632be59bd9b4e019ULL));
  h = mix64(h ^ (uint64_t(b) + 0x85157af5d2c7a6d3ULL));
  return mix64(h ^ (uint64_t(c) + 0x2545f4914f6cdd1dULL));
}

// splitmix64: a sequential PRNG for things drawn in order (noise images, scattered shapes).
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() {
    state += 0x9e3779b97f4a7c15ULL;
    return mix64(state);
  }
  // Uniform in [0, n) by multiply-high (no modulo bias worth mentioning, no division).
  uint32_t below(uint32_t n) { return uint32_t(((next() >> 32) * uint64_t(n)) >> 32); }
  // Uniform in [lo, hi], inclusive.
  int range(int lo, int hi) { return lo + int(below(uint32_t(hi - lo + 1))); }
};

// ------------------------------------------------------------------ small pixel helpers

struct Color {
  int r, g, b;
};

uint8_t clamp255(int v) { return uint8_t(v < 0 ? 0 : v > 255 ? 255 : v); }
int clamp_int(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

// alpha in 0..256 (256 = fully `over`), rounded.
int mix_channel(int base, int over, int alpha) {
  return (base * (256 - alpha) + over * alpha + 128) >> 8;
}
Color blend(Color base, Color over, int alpha) {
  return {mix_channel(base.r, over.r, alpha), mix_channel(base.g, over.g, alpha),
          mix_channel(base.b, over.b, alpha)};
}
// Multiplies a colour by factor/256.
Color scale(Color c, int factor) {
  return {(c.r * factor + 128) >> 8, (c.g * factor + 128) >> 8, (c.b * factor + 128) >> 8};
}

Color get(const Image& img, int x, int y) {
  const uint8_t* p = img.at(x, y);
  return {p[0], p[1], p[2]};
}
void put(Image* img, int x, int y, Color c) {
  uint8_t* p = img->at(x, y);
  p[0] = clamp255(c.r), p[1] = clamp255(c.g), p[2] = clamp255(c.b);
}

// Floor division and modulo for possibly negative world coordinates (b > 0).
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

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

// ------------------------------------------------------------------ value noise (fixed point)

// smoothstep on t in 0..256 -> 0..256: 3t^2 - 2t^3, so lattice cells join without creases.
int smooth256(int t) { return int((int64_t(t) * t * (768 - 2 * t)) >> 16); }

// Value noise of one octave at integer pixel (x, y): random lattice values every `period`
// pixels, smoothly interpolated. Returns 0..65280 (value * 256).
int value_noise(uint64_t seed, int64_t x, int64_t y, int period) {
  const int64_t ix = floor_div(x, period), iy = floor_div(y, period);
  const int wx = smooth256(int((x - ix * period) * 256 / period));
  const int wy = smooth256(int((y - iy * period) * 256 / period));
  auto lattice = [&](int64_t a, int64_t b) { return int(hash_at(seed, a, b) >> 56); };
  const int top = lattice(ix, iy) * (256 - wx) + lattice(ix + 1, iy) * wx;
  const int bottom = lattice(ix, iy + 1) * (256 - wx) + lattice(ix + 1, iy + 1) * wx;
  return int((int64_t(top) * (256 - wy) + int64_t(bottom) * wy) >> 8);
}

// Fractal sum of `octaves` value noises, each half the period and half the weight of the one
// before. Returns 0..65280 like value_noise.
int fbm(uint64_t seed, int64_t x, int64_t y, int period, int octaves) {
  int64_t sum = 0, weight = 0;
  for (int k = 0; k < octaves && period >= 2; ++k, period /= 2) {
    const int amp = 1024 >> k;
    sum += int64_t(amp) * value_noise(seed + uint64_t(k) * 7919, x, y, period);
    weight += amp;
  }
  return int(sum / weight);
}

// ------------------------------------------------------------------ the capsule line

// The scene of seed 000: a conveyor belt between two steel rails carries a grid of
// transparent pill-shaped capsules, some filled with blue soap, some empty, seen from above
// under a lamp that lights the left side a little more. Everything scales with `scale`:
// at scale 1 a capsule is 42x22 px and its template 50x30; at scale 2, 84x44 and 100x60.
struct CapsuleScene {
  int width = 0, height = 0;
  int scale = 1;
  uint64_t seed = 1;
  int belt_shift = 0;  // how far the belt has moved to the right (video frames), px
  int frame = 0;       // selects the sensor noise: a new frame, new noise
  int lane_pitch = 0;  // > 0: one lane of capsules this far apart (the production line video)
};

// One capsule as drawn, in view coordinates. Geometry in 1/8 pixel (antialiasing and
// sub-pixel jitter), so no two capsules are pixel-identical even before the sensor noise.
struct Capsule {
  int row = 0, col = 0;
  int64_t cx8 = 0, cy8 = 0;  // centre
  int64_t half8 = 0;         // half length of the straight part
  int64_t r8 = 0;            // radius of the round ends (half the capsule's thickness)
  bool filled = false;
  bool bubble = false;       // an air bubble in the soap
  int64_t bubble_dx8 = 0, bubble_dy8 = 0;
  Color soap{48, 100, 215};  // blue soap, tinted a little per capsule
};

// The grid the capsules sit on; columns are world columns (they move with the belt).
struct CapsuleLayout {
  int rail_h = 0;           // height of each steel rail
  int pitch_x = 0, pitch_y = 0;
  int rows = 0, cols = 0;   // the capsules of a still scene
  int x0 = 0, y0 = 0;       // world centre of capsule (row 0, col 0)
  int tpl_w = 0, tpl_h = 0; // template size: the capsule with a margin of belt
  int full_row = 0, full_col = 0;    // the filled capsule the template is cut from
  int empty_row = -1, empty_col = -1;  // the empty one (-1: the grid is too small for two)
};

CapsuleLayout capsule_layout(const CapsuleScene& sc) {
  const int s = sc.scale;
  CapsuleLayout L;
  L.rail_h = 18 * s;
  L.pitch_x = 64 * s;
  L.pitch_y = 52 * s;
  L.tpl_w = 50 * s;
  L.tpl_h = 30 * s;
  const int belt_h = std::max(0, sc.height - 2 * L.rail_h);
  if (sc.lane_pitch > 0) L.pitch_x = sc.lane_pitch, L.pitch_y = std::max(1, belt_h);
  L.rows = std::max(1, belt_h / L.pitch_y);
  L.cols = std::max(1, sc.width / L.pitch_x);
  // Centre the grid on the belt.
  L.x0 = (sc.width - L.cols * L.pitch_x) / 2 + L.pitch_x / 2;
  L.y0 = L.rail_h + (belt_h - L.rows * L.pitch_y) / 2 + L.pitch_y / 2;
  L.full_row = (L.rows - 1) / 2;
  L.full_col = L.cols / 2;
  if (sc.lane_pitch > 0) {  // the next capsule along the lane is empty
    L.empty_row = L.full_row, L.empty_col = L.full_col - 1;
  } else if (L.rows > 1) {
    L.empty_row = L.full_row + 1, L.empty_col = std::max(0, L.full_col - 1);
  } else if (L.cols > 1) {
    L.empty_row = L.full_row, L.empty_col = L.full_col - 1;
  }
  return L;
}

// The capsule of world grid cell (row, col): its shape, jitter and contents come from a
// hash of the cell, so a capsule looks the same in every video frame.
Capsule make_capsule(const CapsuleScene& sc, const CapsuleLayout& L, int row, int col) {
  const int s = sc.scale;
  Rng rng(hash_at(sc.seed, 0xCA95, row, col));
  Capsule c;
  c.row = row, c.col = col;
  c.cx8 = int64_t(L.x0 + col * L.pitch_x + sc.belt_shift) * 8 + rng.range(-16 * s, 16 * s);
  c.cy8 = int64_t(L.y0 + row * L.pitch_y) * 8 + rng.range(-8 * s, 8 * s);
  c.r8 = 88 * s + rng.range(-2 * s, 2 * s);    // ~11 px at scale 1
  c.half8 = 80 * s + rng.range(-6 * s, 6 * s);  // ~10 px straight part
  c.filled = rng.below(100) < 55;
  if (row == L.full_row && col == L.full_col) c.filled = true;
  if (row == L.empty_row && col == L.empty_col) c.filled = false;
  c.bubble = c.filled && rng.below(100) < 40;
  c.bubble_dx8 = rng.range(int(-c.half8), int(c.half8));
  c.bubble_dy8 = rng.range(-24 * s, 24 * s);
  c.soap = {48 + rng.range(-4, 4), 100 + rng.range(-6, 6), 215 + rng.range(-8, 8)};
  return c;
}

// A pill: the points within r8 of the horizontal segment cx8 +- half8 (all in 1/8 px).
struct Pill {
  int64_t cx8, cy8, half8, r8;
};

// How much of pixel (x, y) the pill covers, 0..16, from 4x4 samples.
int coverage(const Pill& p, int x, int y) {
  int n = 0;
  for (int sy = 1; sy < 8; sy += 2) {
    const int64_t dy = int64_t(y) * 8 + sy - p.cy8;
    for (int sx = 1; sx < 8; sx += 2) {
      int64_t dx = std::abs(int64_t(x) * 8 + sx - p.cx8) - p.half8;
      if (dx < 0) dx = 0;
      if (dx * dx + dy * dy <= p.r8 * p.r8) ++n;
    }
  }
  return n;
}

// The rubber belt at world column wx, row y: lengthwise ribs, a transverse seam every
// 40*scale px and a fine grain, all moving with the belt.
Color belt_color(const CapsuleScene& sc, const CapsuleLayout& L, int64_t wx, int y) {
  const int s = sc.scale;
  int v = sc.lane_pitch > 0 ? 196 : 66;  // the production line's belt is light PVC
  v += int(hash_at(sc.seed, 0xBE17, y / std::max(1, s / 2)) % 7) - 3;  // ribs along the belt
  v += int(hash_at(sc.seed, 0x6EA1, wx, y) % 7) - 3;                  // grain
  const int64_t m = floor_mod(wx, 40 * s);
  if (m < s) v -= 26;            // seam
  else if (m < 2 * s) v += 10;   // its lit edge
  // The rails shade the belt next to them.
  const int from_rail = std::min(y - L.rail_h, sc.height - L.rail_h - 1 - y);
  if (from_rail >= 0 && from_rail < 5 * s) v -= (5 * s - from_rail) * 24 / (5 * s);
  return {v + 2, v + 1, v};
}

// A steel rail with a yellow-black hazard stripe on its outer side and bolts. `t` runs
// 0..rail_h-1 from the outer edge of the image towards the belt; rails do not move.
Color rail_color(const CapsuleScene& sc, const CapsuleLayout& L, int x, int y, int t) {
  const int s = sc.scale;
  const int hazard_h = L.rail_h * 2 / 5;
  if (t < hazard_h) {
    const bool yellow = floor_mod(x + y, 16 * s) < 8 * s;
    Color c = yellow ? Color{222, 182, 34} : Color{34, 33, 31};
    if (t == hazard_h - 1) c = {20, 20, 20};  // the edge between stripe and steel
    return c;
  }
  // Brushed steel: brightest along the middle of the rail, like a rounded bar.
  const int steel_h = L.rail_h - hazard_h;
  const int u = (t - hazard_h) * 512 / steel_h - 256;  // -256..256 across the steel
  const int profile = 256 - (u * u >> 8);                // 0..256, 256 in the middle
  int v = 100 + profile * 80 / 256;
  v += int(hash_at(sc.seed, 0x57EE, y, floor_div(x, 24)) % 9) - 4;  // brushing streaks
  Color c{v, v + 2, v + 5};
  // A bolt every 72*scale px, in the middle of the steel.
  const int64_t bx = floor_mod(x, 72 * s) - 36 * s;
  const int by = (t - hazard_h) - steel_h / 2;
  const int64_t d2 = bx * bx + int64_t(by) * by;
  const int64_t br = 3 * int64_t(s);
  if (d2 <= br * br) c = d2 * 3 <= br * br ? Color{200, 202, 206} : Color{60, 62, 66};
  return c;
}

// Draws one capsule over what is already there (belt and shadows).
void draw_capsule(Image* img, const CapsuleScene& sc, const Capsule& c) {
  const int s = sc.scale;
  const int64_t outline8 = 6 * s;   // dark outer edge of the plastic
  const int64_t rim8 = 14 * s;      // wall thickness
  const Pill outer{c.cx8, c.cy8, c.half8, c.r8};
  const Pill outer_in{c.cx8, c.cy8, c.half8, c.r8 - outline8};
  const Pill wall_in{c.cx8, c.cy8, c.half8, c.r8 - rim8 + outline8};
  const Pill inner{c.cx8, c.cy8, c.half8, c.r8 - rim8};
  // Specular highlights: a streak along the top and a dot on the left end.
  const Pill streak{c.cx8 + c.half8 / 8, c.cy8 - c.r8 * 9 / 20, c.half8 * 7 / 8, c.r8 * 3 / 20};
  const Pill dot{c.cx8 - c.half8 - c.r8 / 4, c.cy8 - c.r8 / 5, 0, c.r8 / 8};
  const Pill bubble{c.cx8 + c.bubble_dx8, c.cy8 + c.bubble_dy8, 0, 20 * s};
  const Pill bubble_glint{c.cx8 + c.bubble_dx8 - 6 * s, c.cy8 + c.bubble_dy8 - 6 * s, 0, 6 * s};

  const int x_lo = std::max(0, int(floor_div(c.cx8 - c.half8 - c.r8, 8)) - 1);
  const int x_hi = std::min(img->width - 1, int(floor_div(c.cx8 + c.half8 + c.r8, 8)) + 1);
  const int y_lo = std::max(0, int(floor_div(c.cy8 - c.r8, 8)) - 1);
  const int y_hi = std::min(img->height - 1, int(floor_div(c.cy8 + c.r8, 8)) + 1);
  for (int y = y_lo; y <= y_hi; ++y) {
    for (int x = x_lo; x <= x_hi; ++x) {
      const int c_outer = coverage(outer, x, y);
      if (c_outer == 0) continue;
      const Color under = get(*img, x, y);
      const int c_outer_in = coverage(outer_in, x, y);
      const int c_wall_in = coverage(wall_in, x, y);
      const int c_inner = coverage(inner, x, y);
      // Clear plastic: a light tint over the whole capsule, a dark line round its edge.
      Color col = blend(under, {205, 210, 215}, 110 * c_outer / 16);
      col = blend(col, {70, 74, 78}, 170 * (c_outer - c_outer_in) / 16);
      // The inner face of the wall.
      const Color wall = c.filled ? Color{25, 45, 110} : Color{150, 155, 160};
      col = blend(col, wall, 140 * (c_wall_in - c_inner) / 16);
      if (c_inner > 0) {
        Color content;
        if (c.filled) {
          // Soap in a round shell: brightest along the axis, darker towards the walls.
          const int64_t dy8 = int64_t(y) * 8 + 4 - c.cy8;
          const int64_t rin8 = c.r8 - rim8;
          const int across = int(std::min<int64_t>(256, dy8 * dy8 * 256 / (rin8 * rin8)));
          content = scale(c.soap, 180 + (256 - across) * 90 / 256);
          if (c.bubble) {
            content = blend(content, {120, 160, 235}, 200 * coverage(bubble, x, y) / 16);
            content = blend(content, {240, 245, 255}, 220 * coverage(bubble_glint, x, y) / 16);
          }
        } else {
          // Empty: a pale, translucent shell through which the belt shows.
          // (On the production line the shell is smoky grey, about as dark as the soap: an
          // empty capsule differs from a full one in colour, hardly in grey.)
          content = sc.lane_pitch > 0 ? blend(under, {92, 95, 98}, 230) : blend(under, {228, 231, 234}, 165);
        }
        col = blend(col, content, 256 * c_inner / 16);
      }
      col = blend(col, {252, 252, 252}, 210 * coverage(streak, x, y) / 16);
      col = blend(col, {252, 252, 252}, 190 * coverage(dot, x, y) / 16);
      put(img, x, y, col);
    }
  }
}

// Darkens the belt under a capsule: a soft shadow, the light coming from the upper left.
void draw_shadow(Image* img, const CapsuleScene& sc, const Capsule& c) {
  const int s = sc.scale;
  const int64_t ox8 = 16 * s, oy8 = 24 * s;  // 2 px right, 3 px down at scale 1
  const Pill core{c.cx8 + ox8, c.cy8 + oy8, c.half8, c.r8};
  const Pill penumbra{c.cx8 + ox8, c.cy8 + oy8, c.half8, c.r8 + 12 * s};
  const int x_lo = std::max(0, int(floor_div(penumbra.cx8 - penumbra.half8 - penumbra.r8, 8)) - 1);
  const int x_hi =
      std::min(img->width - 1, int(floor_div(penumbra.cx8 + penumbra.half8 + penumbra.r8, 8)) + 1);
  const int y_lo = std::max(0, int(floor_div(penumbra.cy8 - penumbra.r8, 8)) - 1);
  const int y_hi = std::min(img->height - 1, int(floor_div(penumbra.cy8 + penumbra.r8, 8)) + 1);
  for (int y = y_lo; y <= y_hi; ++y)
    for (int x = x_lo; x <= x_hi; ++x) {
      const int dark = 36 * coverage(penumbra, x, y) / 16 + 40 * coverage(core, x, y) / 16;
      if (dark) put(img, x, y, scale(get(*img, x, y), 256 - dark));
    }
}

// The lamp (brighter on the left and at the top, about +-12 %) and the camera's noise:
// mostly luminance, a little per channel, new for every frame.
void light_and_noise(Image* img, const CapsuleScene& sc) {
  const int w = img->width, h = img->height;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int light = 1080 - int(int64_t(160) * x / w) - int(int64_t(80) * y / h);  // /1024
      const uint64_t n = hash_at(sc.seed ^ 0x5E115E11, x, y, sc.frame);
      const int luma = int(n & 7) + int((n >> 3) & 7) - 7;  // triangular, -7..7
      uint8_t* p = img->at(x, y);
      for (int ch = 0; ch < 3; ++ch) {
        const int chroma = int((n >> (8 + 8 * ch)) % 3) - 1;  // -1..1
        p[ch] = clamp255(((p[ch] * light + 512) >> 10) + luma + chroma);
      }
    }
}

// Renders the scene; `capsules` receives every capsule at least partly in view.
Image render_capsules(const CapsuleScene& sc, std::vector<Capsule>* capsules) {
  const CapsuleLayout L = capsule_layout(sc);
  Image img = alloc_or_die(sc.width, sc.height, 3);
  for (int y = 0; y < sc.height; ++y)
    for (int x = 0; x < sc.width; ++x) {
      Color c;
      if (y < L.rail_h) c = rail_color(sc, L, x, y, y);
      else if (y >= sc.height - L.rail_h) c = rail_color(sc, L, x, y, sc.height - 1 - y);
      else c = belt_color(sc, L, int64_t(x) - sc.belt_shift, y);
      put(&img, x, y, c);
    }
  // World columns that may be in view after the belt moved belt_shift px to the right.
  const int col_lo = int(floor_div(-sc.belt_shift - L.x0, L.pitch_x)) - 1;
  const int col_hi = int(floor_div(sc.width - sc.belt_shift - L.x0, L.pitch_x)) + 1;
  std::vector<Capsule> all;
  for (int row = 0; row < L.rows; ++row)
    for (int col = col_lo; col <= col_hi; ++col) {
      // A still scene shows exactly its grid; a moving belt brings in capsules from the left.
      if (sc.belt_shift == 0 && sc.lane_pitch == 0 && (col < 0 || col >= L.cols)) continue;
      Capsule c = make_capsule(sc, L, row, col);
      const int64_t left = floor_div(c.cx8 - c.half8 - c.r8, 8), right = (c.cx8 + c.half8 + c.r8) / 8;
      if (right < 0 || left >= sc.width) continue;
      all.push_back(c);
    }
  for (const Capsule& c : all) draw_shadow(&img, sc, c);
  for (const Capsule& c : all) draw_capsule(&img, sc, c);
  light_and_noise(&img, sc);
  if (capsules) *capsules = all;
  return img;
}

// The template rectangle around a capsule: the capsule with a margin of belt.
Rect template_rect(const CapsuleLayout& L, const Capsule& c) {
  const int cx = int(floor_div(c.cx8, 8)), cy = int(floor_div(c.cy8, 8));
  return {cx - L.tpl_w / 2, cy - L.tpl_h / 2, L.tpl_w, L.tpl_h};
}

bool inside(const Image& img, Rect r) {
  return r.w > 0 && r.h > 0 && r.x >= 0 && r.y >= 0 && int64_t(r.x) + r.w <= img.width &&
         int64_t(r.y) + r.h <= img.height;
}

// ------------------------------------------------------------------ a natural-looking scene

// An aerial view of made-up land: terrain from fractal value noise coloured by height
// (water, sand, meadow, forest, rock, snow), hill shading, and scattered trees and houses.
// Structure at every scale, so matching a large template cut from it is meaningful.
Color terrain_color(int h, int moisture) {
  struct Stop {
    int h;
    Color c;
  };
  // Green land drier or wetter with the moisture field.
  const Color meadow = blend(Color{150, 150, 86}, Color{86, 138, 60}, moisture);
  const Color forest = blend(Color{96, 110, 60}, Color{38, 84, 40}, moisture);
  const Stop stops[] = {{0, {16, 38, 92}},    {92, {36, 92, 150}},  {100, {70, 130, 160}},
                        {104, {206, 194, 146}}, {112, {180, 172, 120}}, {120, meadow},
                        {165, forest},          {195, {116, 106, 96}},  {228, {150, 144, 138}},
                        {238, {236, 236, 242}}, {256, {250, 250, 255}}};
  for (size_t i = 1; i < sizeof stops / sizeof stops[0]; ++i)
    if (h < stops[i].h) {
      const Stop& a = stops[i - 1];
      const Stop& b = stops[i];
      return blend(a.c, b.c, (h - a.h) * 256 / (b.h - a.h));
    }
  return stops[0].c;
}

Image render_natural(int w, int h, uint64_t seed) {
  Image img = alloc_or_die(w, h, 3);
  // Features scale with the picture, so a 4K image is not just more of a small one.
  const int base = std::max(32, std::min(w, h) / 3);
  // Height field with a one-pixel border, for the shading's differences.
  const int hw = w + 2, hh = h + 2;
  std::vector<int> height(size_t(hw) * size_t(hh));
  for (int y = 0; y < hh; ++y)
    for (int x = 0; x < hw; ++x) {
      const int raw = fbm(seed, x, y, base, 7);  // 0..65280, mostly near the middle
      height[size_t(y) * hw + x] = clamp_int(32640 + (raw - 32640) * 2, 0, 65535);
    }
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int* c = &height[size_t(y + 1) * hw + (x + 1)];
      const int hv = *c >> 8;
      const int moisture = fbm(seed + 101, x, y, base * 2, 3) >> 8;
      Color col = terrain_color(hv, clamp_int((moisture - 64) * 2, 0, 256));
      // Lit from the upper left; water stays flat but gets ripples.
      if (hv >= 100) {
        const int slope = (c[-1] - c[1]) + (c[-hw] - c[hw]);  // fixed point *256
        col = scale(col, clamp_int(256 + slope * 3 / 64, 120, 400));
      } else {
        const int ripple = value_noise(seed + 7, x / 2, y, std::max(2, base / 24)) >> 8;
        col = scale(col, 236 + ripple * 40 / 256);
      }
      const int grain = int(hash_at(seed, 0x6A1, x, y) % 11) - 5;
      put(&img, x, y, {col.r + grain, col.g + grain, col.b + grain});
    }
  // Trees on green land and houses on meadows; placed in order from one PRNG.
  Rng rng(seed ^ 0x7EE5);
  const int64_t n_trees = int64_t(w) * h / 260;
  for (int64_t i = 0; i < n_trees; ++i) {
    const int x = int(rng.below(uint32_t(w))), y = int(rng.below(uint32_t(h)));
    const int r = rng.range(2, 4);
    const int hv = height[size_t(y + 1) * hw + (x + 1)] >> 8;
    if (hv < 125 || hv > 190) continue;
    for (int dy = -r; dy <= r; ++dy)
      for (int dx = -r; dx <= r; ++dx) {
        const int px = x + dx, py = y + dy;
        if (px < 0 || py < 0 || px >= w || py >= h || dx * dx + dy * dy > r * r) continue;
        // The crown's lit side (upper left) lighter than its shaded side.
        const int lit = 200 + (-dx - dy) * 24 / r;
        put(&img, px, py, scale(Color{40, 92, 38}, lit));
      }
  }
  const int64_t n_houses = int64_t(w) * h / 9000;
  for (int64_t i = 0; i < n_houses; ++i) {
    const int x = int(rng.below(uint32_t(w))), y = int(rng.below(uint32_t(h)));
    const int hw_house = rng.range(3, 7), hh_house = rng.range(3, 6);
    const bool red_roof = rng.below(3) != 0;
    const int hv = height[size_t(y + 1) * hw + (x + 1)] >> 8;
    if (hv < 112 || hv > 160) continue;
    const Color roof = red_roof ? Color{176, 68, 52} : Color{120, 118, 126};
    for (int dy = -hh_house; dy <= hh_house + 2; ++dy)
      for (int dx = -hw_house; dx <= hw_house + 2; ++dx) {
        const int px = x + dx, py = y + dy;
        if (px < 0 || py < 0 || px >= w || py >= h) continue;
        const bool on_roof = dx <= hw_house && dy <= hh_house;
        if (on_roof) {
          put(&img, px, py, scale(roof, dy < 0 ? 270 : 210));  // ridge along the middle
        } else if (dx >= -hw_house + 2 && dy >= -hh_house + 2) {
          put(&img, px, py, scale(get(img, px, py), 150));  // cast shadow
        }
      }
  }
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
    uint8_t* p = img.pixels.data() + size_t(i) * 3;
    p[0] = uint8_t(i >> 16), p[1] = uint8_t(i >> 8), p[2] = uint8_t(i);
  }
  return img;
}

// ------------------------------------------------------------------ Y4M video

// How a Y4M file is written: its chroma layout (the C tag), range (the XCOLORRANGE tag, which
// may be left out to test the reader's default: limited) and matrix (BT.601 unless told).
struct Y4mSpec {
  const char* colourspace = "420jpeg";
  int sx = 2, sy = 2;  // chroma subsampling
  bool mono = false;
  video::YuvRange range = video::YuvRange::Full;
  bool range_tag = true;
};

std::string y4m_header_of(const Y4mSpec& spec, int w, int h) {
  std::string t = "YUV4MPEG2 W" + std::to_string(w) + " H" + std::to_string(h) +
                  " F25:1 Ip A1:1 C" + spec.colourspace;
  if (spec.range_tag) t += spec.range == video::YuvRange::Full ? " XCOLORRANGE=FULL" : " XCOLORRANGE=LIMITED";
  return t + "\n";
}

// RGB -> Y'CbCr with the video path's own forward formula (video/yuv.hpp), chroma from the
// rounded mean RGB of each sx x sy block (4:2:0 sited between the pixels, as C420jpeg says).
void append_y4m_frame(const Image& rgb, const Y4mSpec& spec, std::vector<uint8_t>* out) {
  const video::RgbToYuv k = video::rgb_to_yuv_coefficients(video::YuvMatrix::Bt601, spec.range);
  const int w = rgb.width, h = rgb.height, cw = (w + spec.sx - 1) / spec.sx, ch = (h + spec.sy - 1) / spec.sy;
  static const char kFrame[] = "FRAME\n";
  out->insert(out->end(), kFrame, kFrame + 6);
  uint8_t y8, u8, v8;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const uint8_t* p = rgb.at(x, y);
      video::rgb_to_yuv(k, p[0], p[1], p[2], &y8, &u8, &v8);
      out->push_back(y8);
    }
  if (spec.mono) return;
  std::vector<uint8_t> cb, cr;
  for (int y = 0; y < ch; ++y)
    for (int x = 0; x < cw; ++x) {
      int sr = 0, sg = 0, sb = 0, n = 0;
      for (int dy = 0; dy < spec.sy; ++dy)
        for (int dx = 0; dx < spec.sx; ++dx) {
          const int px = spec.sx * x + dx, py = spec.sy * y + dy;
          if (px >= w || py >= h) continue;
          const uint8_t* p = rgb.at(px, py);
          sr += p[0], sg += p[1], sb += p[2], ++n;
        }
      video::rgb_to_yuv(k, (sr + n / 2) / n, (sg + n / 2) / n, (sb + n / 2) / n, &y8, &u8, &v8);
      cb.push_back(u8);
      cr.push_back(v8);
    }
  out->insert(out->end(), cb.begin(), cb.end());
  out->insert(out->end(), cr.begin(), cr.end());
}

// ------------------------------------------------------------------ checks and output

// True when the template's grey values occur exactly at `at` and nowhere else: the best
// SSD/SAD match is then unique and exact (score 0). Comparison stops at the first grey value
// that differs, so this is quick even on large scenes.
bool unique_exact_match(const Image& scene, const Image& tpl, Rect at) {
  const Image gs = to_gray(scene), gt = to_gray(tpl);
  int zero_hits = 0;
  bool hit_at = false;
  for (int y = 0; y + gt.height <= gs.height; ++y)
    for (int x = 0; x + gt.width <= gs.width; ++x) {
      bool same = true;
      for (int ty = 0; ty < gt.height && same; ++ty)
        same = std::memcmp(gs.at(x, y + ty), gt.row(ty), size_t(gt.width)) == 0;
      if (same) {
        ++zero_hits;
        hit_at = hit_at || (x == at.x && y == at.y);
      }
    }
  return zero_hits == 1 && hit_at;
}

[[noreturn]] void die(const Status& s) {
  std::fprintf(stderr, "parvis-gen: %s\n", s.message.c_str());
  std::exit(s.code == kExitOk ? kExitRuntime : s.code);
}

std::string join_path(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

void write_image(const std::string& dir, const std::string& name, const Image& img) {
  const std::string path = join_path(dir, name);
  Status s = image_write(path, img);
  if (!s.ok()) die(s);
  std::printf("wrote %s (%dx%d, %s)\n", path.c_str(), img.width, img.height,
              img.channels == 1 ? "grey" : "RGB");
}

// mkdir -p
Status make_dirs(const std::string& dir) {
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i < dir.size() && dir[i] != '/') continue;
    const std::string part = dir.substr(0, i);
    if (::mkdir(part.c_str(), 0777) != 0 && errno != EEXIST)
      return Status::bad_input("cannot create directory " + part + ": " + std::strerror(errno));
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::bad_input(dir + " is not a directory");
  return Status::Ok();
}

// A capsule scene and its two templates (filled and empty), checked to match uniquely.
struct CapsuleSet {
  CapsuleScene scene;
  Image image, full_tpl, empty_tpl;
  Rect full_at, empty_at{0, 0, 0, 0};
  std::vector<Capsule> capsules;
};

CapsuleSet make_capsule_set(int w, int h, int scale, uint64_t seed) {
  CapsuleSet set;
  set.scene.width = w, set.scene.height = h, set.scene.scale = scale, set.scene.seed = seed;
  set.image = render_capsules(set.scene, &set.capsules);
  const CapsuleLayout L = capsule_layout(set.scene);
  for (const Capsule& c : set.capsules) {
    if (c.row == L.full_row && c.col == L.full_col) set.full_at = template_rect(L, c);
    if (c.row == L.empty_row && c.col == L.empty_col) set.empty_at = template_rect(L, c);
  }
  if (!inside(set.image, set.full_at))
    die(Status::bad_input("a " + std::to_string(w) + "x" + std::to_string(h) +
                          " capsule scene at scale " + std::to_string(scale) +
                          " has no room for a template"));
  set.full_tpl = crop(set.image, set.full_at);
  if (!unique_exact_match(set.image, set.full_tpl, set.full_at))
    die(Status::runtime("the capsule template does not match uniquely (seed " +
                        std::to_string(seed) + ")"));
  if (inside(set.image, set.empty_at)) {
    set.empty_tpl = crop(set.image, set.empty_at);
    if (!unique_exact_match(set.image, set.empty_tpl, set.empty_at))
      die(Status::runtime("the empty capsule template does not match uniquely"));
  }
  return set;
}

void describe_capsules(const char* name, const CapsuleSet& set) {
  const CapsuleLayout L = capsule_layout(set.scene);
  std::printf("%s: %d rows x %d capsules; filled (row,col from 0):", name, L.rows, L.cols);
  for (const Capsule& c : set.capsules)
    if (c.filled) std::printf(" (%d,%d)", c.row, c.col);
  std::printf("\n  filled template at x=%d y=%d size %dx%d (capsule row %d col %d)\n",
              set.full_at.x, set.full_at.y, set.full_at.w, set.full_at.h, L.full_row, L.full_col);
  if (!set.empty_tpl.empty())
    std::printf("  empty template at x=%d y=%d size %dx%d (capsule row %d col %d)\n",
                set.empty_at.x, set.empty_at.y, set.empty_at.w, set.empty_at.h, L.empty_row,
                L.empty_col);
}

// The seeds of the committed and test pictures: change one and the pinned test hashes change.
constexpr uint64_t kSeedCapsules = 20250001;
constexpr uint64_t kSeedSmall = 20250002;
constexpr uint64_t kSeed720p = 20250003;

// capsules_small.bmp is frame 0 of capsules.y4m before the conversion to YCbCr.
constexpr int kVideoW = 320, kVideoH = 200, kVideoFrames = 12, kVideoSpeed = 5;

void write_samples(const std::string& dir) {
  Status s = make_dirs(dir);
  if (!s.ok()) die(s);
  const CapsuleSet big = make_capsule_set(800, 500, 2, kSeedCapsules);
  write_image(dir, "capsules.bmp", big.image);
  write_image(dir, "capsule_template.bmp", big.full_tpl);
  write_image(dir, "capsule_empty_template.bmp", big.empty_tpl);
  describe_capsules("capsules.bmp", big);
  const CapsuleSet small = make_capsule_set(kVideoW, kVideoH, 1, kSeedSmall);
  write_image(dir, "capsules_small.bmp", small.image);
  write_image(dir, "capsules_small_template.bmp", small.full_tpl);
  describe_capsules("capsules_small.bmp", small);
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes, const std::string& what) {
  Status s = write_file_atomic(path, bytes.data(), bytes.size());
  if (!s.ok()) die(s);
  std::printf("wrote %s (%s)\n", path.c_str(), what.c_str());
}

void write_video(const std::string& path) {
  const Y4mSpec spec;  // C420jpeg, full range, tagged
  std::vector<uint8_t> bytes;
  const std::string header = y4m_header_of(spec, kVideoW, kVideoH);
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (int f = 0; f < kVideoFrames; ++f) {
    CapsuleScene sc;
    sc.width = kVideoW, sc.height = kVideoH, sc.scale = 1, sc.seed = kSeedSmall;
    sc.belt_shift = f * kVideoSpeed;
    sc.frame = f;
    append_y4m_frame(render_capsules(sc, nullptr), spec, &bytes);
  }
  write_bytes(path, bytes, std::to_string(kVideoW) + "x" + std::to_string(kVideoH) + ", " +
                               std::to_string(kVideoFrames) + " frames, C420jpeg full range");
}

// ------------------------------------------------------------------ the production line

// Seed 000's camera over the line: one lane of capsules `pitch` px apart moving `speed` px
// per frame to the right under a fixed camera, some full, some empty. The template is the
// capsule in the middle of frame 0 (always full). Ground truth per frame: every capsule whose
// template-sized rectangle lies inside the frame (at most one when pitch exceeds
// width - template width), with its position and whether it is full.
struct LineClip {
  int width = 160, height = 88, scale = 1, pitch = 120, speed = 8, frames = 60;
  uint64_t seed = 20250004;
};

struct LineTruth {
  int frame;
  Rect at;
  bool full;
};

// Frame f of the clip (a one-element vector); `truth` receives its capsules in view, `tpl`
// (frame 0 only) the template.
std::vector<Image> render_line_frame(const LineClip& clip, int f, Image* tpl, std::vector<LineTruth>* truth) {
  CapsuleScene sc;
  sc.width = clip.width, sc.height = clip.height, sc.scale = clip.scale, sc.seed = clip.seed;
  sc.lane_pitch = clip.pitch;
  sc.belt_shift = f * clip.speed;
  sc.frame = f;
  std::vector<Capsule> capsules;
  std::vector<Image> frame;
  frame.push_back(render_capsules(sc, &capsules));
  const CapsuleLayout L = capsule_layout(sc);
  for (const Capsule& c : capsules) {
    const Rect r = template_rect(L, c);
    if (!inside(frame[0], r)) continue;
    if (truth) truth->push_back({f, r, c.filled});
    if (f == 0 && tpl && c.row == L.full_row && c.col == L.full_col) *tpl = crop(frame[0], r);
  }
  if (f == 0 && tpl && tpl->empty())
    die(Status::bad_input("a " + std::to_string(clip.width) + "x" + std::to_string(clip.height) +
                          " production line has no room for a template in frame 0"));
  return frame;
}

std::vector<Image> render_line(const LineClip& clip, Image* tpl, std::vector<LineTruth>* truth) {
  std::vector<Image> frames;
  for (int f = 0; f < clip.frames; ++f) frames.push_back(render_line_frame(clip, f, tpl, truth)[0]);
  return frames;
}

std::vector<uint8_t> line_y4m(const std::vector<Image>& frames, const Y4mSpec& spec) {
  std::vector<uint8_t> bytes;
  const std::string header = y4m_header_of(spec, frames.at(0).width, frames.at(0).height);
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (const Image& f : frames) append_y4m_frame(f, spec, &bytes);
  return bytes;
}

std::string truth_csv(const std::vector<LineTruth>& truth) {
  std::string t = "frame,x,y,full\n";
  for (const LineTruth& r : truth)
    t += std::to_string(r.frame) + "," + std::to_string(r.at.x) + "," + std::to_string(r.at.y) + "," +
         (r.full ? "1" : "0") + "\n";
  return t;
}

// The test clips: line.y4m (4:2:0, full range) and the same frames in every layout the
// reader knows, raw RGB and grey, the template and the ground truth; an odd-sized clip.
void write_line_testdata(const std::string& dir) {
  const LineClip clip;
  Image tpl;
  std::vector<LineTruth> truth;
  const std::vector<Image> frames = render_line(clip, &tpl, &truth);
  write_image(dir, "line_template.bmp", tpl);
  const std::string csv = truth_csv(truth);
  write_bytes(join_path(dir, "line_truth.csv"), std::vector<uint8_t>(csv.begin(), csv.end()),
              std::to_string(truth.size()) + " capsules in view");
  struct Variant {
    const char* name;
    Y4mSpec spec;
  };
  using video::YuvRange;
  const Variant variants[] = {
      {"line.y4m", {"420jpeg", 2, 2, false, YuvRange::Full, true}},
      {"line_422.y4m", {"422", 2, 1, false, YuvRange::Limited, true}},
      {"line_411.y4m", {"411", 4, 1, false, YuvRange::Limited, true}},
      {"line_444.y4m", {"444", 1, 1, false, YuvRange::Full, true}},
      {"line_mono.y4m", {"mono", 1, 1, true, YuvRange::Full, true}},
      {"line_limited.y4m", {"420mpeg2", 2, 2, false, YuvRange::Limited, false}},  // untagged
  };
  for (const Variant& v : variants)
    write_bytes(join_path(dir, v.name), line_y4m(frames, v.spec),
                std::to_string(frames.size()) + " frames, C" + v.spec.colourspace);
  std::vector<uint8_t> rgb, gray;
  for (const Image& f : frames) {
    rgb.insert(rgb.end(), f.pixels.begin(), f.pixels.end());
    const Image g = to_gray(f);
    gray.insert(gray.end(), g.pixels.begin(), g.pixels.end());
  }
  write_bytes(join_path(dir, "line.rgb"), rgb, "raw rgb24");
  write_bytes(join_path(dir, "line.gray"), gray, "raw gray");
  // Raw yuv420p (limited): the Y4M frames without their header and FRAME lines.
  std::vector<uint8_t> yuv;
  const Y4mSpec raw420{"420", 2, 2, false, YuvRange::Limited, false};
  for (const Image& f : frames) {
    std::vector<uint8_t> one;
    append_y4m_frame(f, raw420, &one);
    yuv.insert(yuv.end(), one.begin() + 6, one.end());
  }
  write_bytes(join_path(dir, "line.yuv"), yuv, "raw yuv420p, limited range");

  // Noise straight into the planes (every Y, Cb, Cr value, no structure): the conversion's
  // test, pinned by video.cases and checked against numpy by tests/video_yuv_reference.py.
  auto noise_y4m = [&](const std::string& name, const std::string& header, size_t frame_bytes, int frames, uint64_t seed) {
    std::vector<uint8_t> bytes(header.begin(), header.end());
    Rng rng(seed);
    for (int f = 0; f < frames; ++f) {
      static const char kFrame[] = "FRAME\n";
      bytes.insert(bytes.end(), kFrame, kFrame + 6);
      for (size_t i = 0; i < frame_bytes; ++i) bytes.push_back(uint8_t(rng.next() >> 56));
    }
    write_bytes(join_path(dir, name), bytes, "YUV noise");
  };
  noise_y4m("yuv_noise_1027x769_420.y4m", "YUV4MPEG2 W1027 H769 F25:1 C420jpeg XCOLORRANGE=LIMITED\n",
            1027 * 769 + 2 * 514 * 385, 2, 108);
  noise_y4m("yuv_noise_333x111_444.y4m", "YUV4MPEG2 W333 H111 F25:1 C444 XCOLORRANGE=FULL\n", 333 * 111 * 3, 1, 109);

  LineClip odd;
  odd.width = 161, odd.height = 87, odd.frames = 6;
  write_bytes(join_path(dir, "line_odd.y4m"),
              line_y4m(render_line(odd, nullptr, nullptr), {"420", 2, 2, false, YuvRange::Limited, false}),
              "161x87, C420, odd chroma sizes");
}

void write_testdata(const std::string& dir) {
  Status s = make_dirs(dir);
  if (!s.ok()) die(s);
  const Image noise_big = noise_image(1027, 769, 3, 101);
  write_image(dir, "noise_1027x769.bmp", noise_big);
  write_image(dir, "noise_1027x769_tpl.bmp", crop(noise_big, {101, 57, 37, 23}));
  write_image(dir, "noise_1027x769_gray.pgm", noise_image(1027, 769, 1, 102));
  write_image(dir, "noise_1x1.bmp", noise_image(1, 1, 3, 103));
  write_image(dir, "noise_3x2.bmp", noise_image(3, 2, 3, 104));
  const Image noise_vga = noise_image(640, 480, 3, 105);
  write_image(dir, "noise_640x480.bmp", noise_vga);
  write_image(dir, "noise_640x480_tpl16.bmp", crop(noise_vga, {200, 100, 16, 16}));
  write_image(dir, "noise_31x17.bmp", noise_image(31, 17, 3, 106));
  write_image(dir, "gradient_257x129.bmp", gradient_image(257, 129));
  write_image(dir, "flat_64x48.bmp", flat_image(64, 48, 1, {128, 128, 128}));
  write_image(dir, "flat_rgb_33x21.bmp", flat_image(33, 21, 3, {200, 120, 40}));
  write_image(dir, "map_radial_257x129.pgm", radial_map(257, 129));
  write_image(dir, "map_noise_257x129.pgm", noise_map(257, 129, 107));
  write_image(dir, "all_colours_4096x4096.bmp", all_colours_image());

  const CapsuleSet big = make_capsule_set(800, 500, 2, kSeedCapsules);
  write_image(dir, "capsules.bmp", big.image);
  write_image(dir, "capsule_template.bmp", big.full_tpl);
  write_image(dir, "capsule_empty_template.bmp", big.empty_tpl);
  const CapsuleSet small = make_capsule_set(kVideoW, kVideoH, 1, kSeedSmall);
  write_image(dir, "capsules_small.bmp", small.image);
  write_image(dir, "capsules_small_template.bmp", small.full_tpl);
  const CapsuleSet hd = make_capsule_set(1280, 720, 2, kSeed720p);
  write_image(dir, "capsules_720p.bmp", hd.image);
  write_image(dir, "capsules_720p_template.bmp", hd.full_tpl);
  describe_capsules("capsules_720p.bmp", hd);
  write_video(join_path(dir, "capsules.y4m"));
  write_line_testdata(dir);

  // A directory of sources for `match --sources` (issue 14): odd and different sizes, two of
  // 333x251 (the template's plan reused), grey and colour, BMP, PGM and PPM.
  const std::string batch = join_path(dir, "batch_sources");
  s = make_dirs(batch);
  if (!s.ok()) die(s);
  write_image(batch, "a_noise_333x251.bmp", crop(noise_big, {0, 0, 333, 251}));
  write_image(batch, "b_noise_333x251.pgm", noise_image(333, 251, 1, 108));
  write_image(batch, "c_noise_640x480.bmp", noise_vga);
  write_image(batch, "d_gradient_257x129.bmp", gradient_image(257, 129));
  write_image(batch, "e_noise_401x177.ppm", crop(noise_big, {17, 9, 401, 177}));
}

// ------------------------------------------------------------------ subcommands

const char kUsage[] =
    "usage: parvis-gen COMMAND ...   deterministic test and sample images (own PRNG, integers only)\n"
    "\n"
    "  parvis-gen samples DIR        the committed samples: capsules.bmp (800x500),\n"
    "                                capsule_template.bmp, capsule_empty_template.bmp,\n"
    "                                capsules_small.bmp (320x200), capsules_small_template.bmp\n"
    "  parvis-gen testdata DIR       every input of the test cases (noise, odd sizes, flat,\n"
    "                                gradient, blur maps, capsule scenes, capsules.y4m,\n"
    "                                the production line clips line*.y4m)\n"
    "  parvis-gen crop IN X Y W H OUT   cut a rectangle (must lie inside IN)\n"
    "  parvis-gen noise WxH OUT [--seed S] [--gray]   uniform noise 0..255 per channel\n"
    "  parvis-gen scene WxH OUT [--seed S] [--kind capsules|natural] [--scale N]\n"
    "                  [--template TPL_OUT] [--template-size WxH]\n"
    "                                a capsule line (template: a filled capsule, exact match)\n"
    "                                or a natural-looking aerial view (template cut from it,\n"
    "                                default 479x432 where it fits); prints where it was cut\n"
    "  parvis-gen mask WxH SHAPE OUT [--seed S] [--on V]   a grey template-matching mask:\n"
    "                                V (default 255) where a pixel counts, 0 elsewhere; SHAPE\n"
    "                                full, ring, disc, holes (random, ~1/3 out), dot (the\n"
    "                                centre pixel), corner (the top-left pixel), checker, zero\n"
    "  parvis-gen line WxH OUT.y4m [--frames N] [--scale N] [--speed PX] [--seed S]\n"
    "                  [--chroma 420|422|444|mono] [--range full|limited]\n"
    "                  [--template TPL_OUT] [--truth CSV_OUT]\n"
    "                                the production line video: one lane of capsules passing\n"
    "                                the camera, full and empty; the template (the capsule in\n"
    "                                the middle of frame 0) and the ground truth per frame\n"
    "\n"
    "The output format follows the extension (.bmp, .pgm, .ppm; .png with stb).\n"
    "Exit codes: 0 ok, 1 usage, 2 bad input, 3 runtime error.\n";

int usage_error(const std::string& msg) {
  const bool says_help = msg.find("--help") != std::string::npos;
  std::fprintf(stderr, "parvis-gen: %s%s\n", msg.c_str(), says_help ? "" : " (see parvis-gen --help)");
  return kExitUsage;
}

int cmd_crop(int argc, char** argv) {
  if (argc != 8) return usage_error("crop takes IN X Y W H OUT");
  int64_t v[4];
  for (int i = 0; i < 4; ++i) {
    Status s = parse_int(argv[3 + i], i < 2 ? 0 : 1, INT32_MAX, &v[i]);
    if (!s.ok()) return usage_error("crop: " + s.message);
  }
  Image in;
  Status s = image_read(argv[2], &in);
  if (!s.ok()) die(s);
  const Rect r{int(v[0]), int(v[1]), int(v[2]), int(v[3])};
  if (!inside(in, r))
    die(Status::bad_input("crop " + std::to_string(r.w) + "x" + std::to_string(r.h) + " at (" +
                          std::to_string(r.x) + "," + std::to_string(r.y) + ") does not lie inside " +
                          std::to_string(in.width) + "x" + std::to_string(in.height) + " " +
                          argv[2]));
  s = image_write(argv[7], crop(in, r));
  if (!s.ok()) die(s);
  return kExitOk;
}

// Shared parsing of `noise` and `scene`: WxH OUT and options.
struct GenArgs {
  int w = 0, h = 0;
  std::string out;
  int seed = 1;
  bool gray = false;
  std::string kind = "capsules", tpl_out, tpl_size;
  int scale = 0;
};

int parse_gen_args(int argc, char** argv, bool scene, GenArgs* a, bool* help) {
  ArgParser p(scene ? "usage: parvis-gen scene WxH OUT [options]"
                    : "usage: parvis-gen noise WxH OUT [options]");
  p.option("--seed", &a->seed, "S", "PRNG seed (default 1)");
  if (scene) {
    p.option("--kind", &a->kind, "K", "capsules (default) or natural");
    p.option("--scale", &a->scale, "N", "capsule size: 1 = 42x22 px (default: min(W,H)/250)");
    p.option("--template", &a->tpl_out, "FILE", "also write a template cut from the scene");
    p.option("--template-size", &a->tpl_size, "WxH", "template size (natural scene only)");
  } else {
    p.flag("--gray", &a->gray, "one grey channel instead of RGB");
  }
  std::vector<std::string> pos;
  Status s = p.parse(argc, argv, 2, &pos);
  if (!s.ok()) return usage_error(s.message);
  if (p.help_requested()) {
    std::fputs(p.help_text().c_str(), stdout);
    *help = true;
    return kExitOk;
  }
  if (pos.size() != 2) return usage_error(std::string(argv[1]) + " takes WxH OUT");
  s = parse_size(pos[0], &a->w, &a->h);
  if (!s.ok()) return usage_error(s.message);
  a->out = pos[1];
  if (a->seed < 0) return usage_error("--seed must not be negative");
  if (scene && a->kind != "capsules" && a->kind != "natural")
    return usage_error("--kind must be capsules or natural");
  if (scene && a->scale < 0) return usage_error("--scale must be positive");
  if (scene && !a->tpl_size.empty() && a->kind != "natural")
    return usage_error("--template-size is for --kind natural");
  s = check_image_size(a->w, a->h, 3);
  if (!s.ok()) die(s);
  return kExitOk;
}

int cmd_noise(int argc, char** argv) {
  GenArgs a;
  bool help = false;
  if (int rc = parse_gen_args(argc, argv, false, &a, &help); rc != kExitOk || help) return rc;
  Status s = image_write(a.out, noise_image(a.w, a.h, a.gray ? 1 : 3, uint64_t(a.seed)));
  if (!s.ok()) die(s);
  return kExitOk;
}

// parvis-gen mask WxH SHAPE OUT [--seed S] [--on V]: integer geometry only (squared radii).
int cmd_mask(int argc, char** argv) {
  if (argc < 5) return usage_error("mask takes WxH SHAPE OUT [--seed S] [--on V]");
  int w = 0, h = 0;
  Status s = parse_size(argv[2], &w, &h);
  if (!s.ok()) return usage_error(s.message);
  const std::string shape = argv[3], out = argv[4];
  int64_t seed = 1, on = 255;
  for (int i = 5; i < argc; i += 2) {
    const std::string opt = argv[i];
    if (i + 1 >= argc) return usage_error(opt + " needs a value");
    if (opt == "--seed") s = parse_int(argv[i + 1], 0, INT64_MAX, &seed);
    else if (opt == "--on") s = parse_int(argv[i + 1], 1, 255, &on);
    else return usage_error("unknown option '" + opt + "'");
    if (!s.ok()) return usage_error(opt + ": " + s.message);
  }
  Image m = alloc_or_die(w, h, 1);
  // Twice the offset from the centre, so that even sizes stay symmetric in integers.
  const int64_t r_out = int64_t(std::min(w, h)) * int64_t(std::min(w, h));  // (2r)^2, r = min/2
  Rng rng{uint64_t(seed)};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int64_t dx = 2 * int64_t(x) + 1 - w, dy = 2 * int64_t(y) + 1 - h, d2 = dx * dx + dy * dy;
      bool c;
      if (shape == "full") c = true;
      else if (shape == "zero") c = false;
      else if (shape == "disc") c = d2 <= r_out;
      else if (shape == "ring") c = d2 <= r_out && 4 * d2 >= r_out;  // radii r/2 .. r
      else if (shape == "holes") c = rng.next() % 3 != 0;
      else if (shape == "dot") c = x == w / 2 && y == h / 2;
      else if (shape == "corner") c = x == 0 && y == 0;
      else if (shape == "checker") c = ((x / 3) + (y / 3)) % 2 == 0;
      else return usage_error("unknown mask shape '" + shape + "' (full, ring, disc, holes, dot, corner, checker, zero)");
      m.row(y)[x] = c ? uint8_t(on) : 0;
    }
  s = image_write(out, m);
  if (!s.ok()) die(s);
  return kExitOk;
}

int cmd_scene(int argc, char** argv) {
  GenArgs a;
  bool help = false;
  if (int rc = parse_gen_args(argc, argv, true, &a, &help); rc != kExitOk || help) return rc;
  if (a.kind == "capsules") {
    const int scale = a.scale > 0 ? a.scale : std::max(1, std::min(a.w, a.h) / 250);
    Image img;
    if (a.tpl_out.empty()) {
      CapsuleScene sc;
      sc.width = a.w, sc.height = a.h, sc.scale = scale, sc.seed = uint64_t(a.seed);
      img = render_capsules(sc, nullptr);
    } else {
      const CapsuleSet set = make_capsule_set(a.w, a.h, scale, uint64_t(a.seed));
      img = set.image;
      Status s = image_write(a.tpl_out, set.full_tpl);
      if (!s.ok()) die(s);
      std::printf("template %s: %dx%d at x=%d y=%d (a filled capsule; exact, unique match)\n",
                  a.tpl_out.c_str(), set.full_at.w, set.full_at.h, set.full_at.x, set.full_at.y);
    }
    Status s = image_write(a.out, img);
    if (!s.ok()) die(s);
    return kExitOk;
  }
  const Image img = render_natural(a.w, a.h, uint64_t(a.seed));
  if (!a.tpl_out.empty()) {
    int tw = std::min(479, a.w), th = std::min(432, a.h);
    if (!a.tpl_size.empty()) {
      Status s = parse_size(a.tpl_size, &tw, &th);
      if (!s.ok()) return usage_error(s.message);
      if (tw > a.w || th > a.h) die(Status::bad_input("--template-size is larger than the scene"));
    }
    // Somewhere away from the edges, chosen by the seed.
    Rng rng(hash_at(uint64_t(a.seed), 0x79E));
    const Rect r{int(rng.below(uint32_t(a.w - tw + 1))), int(rng.below(uint32_t(a.h - th + 1))),
                 tw, th};
    Status s = image_write(a.tpl_out, crop(img, r));
    if (!s.ok()) die(s);
    std::printf("template %s: %dx%d at x=%d y=%d\n", a.tpl_out.c_str(), tw, th, r.x, r.y);
  }
  Status s = image_write(a.out, img);
  if (!s.ok()) die(s);
  return kExitOk;
}

int cmd_line(int argc, char** argv) {
  LineClip clip;
  std::string chroma = "420", range = "full", tpl_out, truth_out;
  int seed = int(clip.seed), scale = 0;
  ArgParser p("usage: parvis-gen line WxH OUT.y4m [options]   the production line video (Y4M)");
  p.option("--frames", &clip.frames, "N", "how many frames (default 60)");
  p.option("--scale", &scale, "N", "capsule size: 1 = 42x22 px (default: H/88)");
  p.option("--speed", &clip.speed, "PX", "belt movement per frame at scale 1 (default 8)");
  p.option("--seed", &seed, "S", "PRNG seed (default 20250004, the test clip's)");
  p.option("--chroma", &chroma, "420|422|444|mono", "Y4M colour space (default 420: C420jpeg)");
  p.option("--range", &range, "full|limited", "YUV range, written as XCOLORRANGE (default full)");
  p.option("--template", &tpl_out, "FILE", "also write the template (the capsule in the middle of frame 0)");
  p.option("--truth", &truth_out, "FILE.csv", "also write the ground truth: frame,x,y,full per capsule in view");
  std::vector<std::string> pos;
  Status s = p.parse(argc, argv, 2, &pos);
  if (!s.ok()) return usage_error(s.message);
  if (p.help_requested()) {
    std::fputs(p.help_text().c_str(), stdout);
    return kExitOk;
  }
  if (pos.size() != 2) return usage_error("line takes WxH OUT.y4m");
  s = parse_size(pos[0], &clip.width, &clip.height);
  if (!s.ok()) return usage_error(s.message);
  if (clip.frames < 1 || clip.speed < 0 || seed < 0 || scale < 0) return usage_error("line: --frames, --speed, --seed, --scale must be positive");
  Y4mSpec spec;
  if (chroma == "422") spec = {"422", 2, 1, false};
  else if (chroma == "444") spec = {"444", 1, 1, false};
  else if (chroma == "mono") spec = {"mono", 1, 1, true};
  else if (chroma != "420") return usage_error("--chroma must be 420, 422, 444 or mono");
  if (range != "full" && range != "limited") return usage_error("--range must be full or limited");
  spec.range = range == "full" ? video::YuvRange::Full : video::YuvRange::Limited;
  clip.seed = uint64_t(seed);
  clip.scale = scale > 0 ? scale : std::max(1, clip.height / 88);
  clip.pitch = 120 * clip.scale;
  clip.speed *= clip.scale;
  s = check_image_size(clip.width, clip.height, 3);
  if (!s.ok()) die(s);
  std::vector<LineTruth> truth;
  Image tpl;
  std::vector<uint8_t> bytes;
  const std::string header = y4m_header_of(spec, clip.width, clip.height);
  bytes.insert(bytes.end(), header.begin(), header.end());
  const int frames = clip.frames;
  for (int f = 0; f < frames; ++f)
    append_y4m_frame(render_line_frame(clip, f, &tpl, &truth)[0], spec, &bytes);
  write_bytes(pos[1], bytes, std::to_string(frames) + " frames of " + pos[0] + ", C" + spec.colourspace);
  if (!tpl_out.empty()) {
    s = image_write(tpl_out, tpl);
    if (!s.ok()) die(s);
    std::printf("template %s: %dx%d at x=%d y=%d in frame 0\n", tpl_out.c_str(), tpl.width, tpl.height,
                truth.empty() ? 0 : truth[0].at.x, truth.empty() ? 0 : truth[0].at.y);
  }
  if (!truth_out.empty()) {
    const std::string csv = truth_csv(truth);
    write_bytes(truth_out, std::vector<uint8_t>(csv.begin(), csv.end()), "ground truth");
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  const std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (cmd == "samples" || cmd == "testdata") {
    if (argc != 3) return usage_error(cmd + " takes DIR");
    if (cmd == "samples") write_samples(argv[2]);
    else write_testdata(argv[2]);
    return kExitOk;
  }
  if (cmd == "crop") return cmd_crop(argc, argv);
  if (cmd == "noise") return cmd_noise(argc, argv);
  if (cmd == "scene") return cmd_scene(argc, argv);
  if (cmd == "line") return cmd_line(argc, argv);
  if (cmd == "mask") return cmd_mask(argc, argv);
  return usage_error("unknown command '" + cmd + "'");
}
