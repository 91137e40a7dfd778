// parvis-gen's natural-looking scene: fractal value noise in fixed point and the terrain.
#include <algorithm>

#include "gen.hpp"

namespace parvis::gen {

namespace {

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

}  // namespace

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

}  // namespace parvis::gen
