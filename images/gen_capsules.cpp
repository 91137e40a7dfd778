// parvis-gen's capsule line: the conveyor belt scene of seed 000, its capsules, and the
// capsule sets (a scene with its filled and empty templates, checked to match uniquely).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gen.hpp"

namespace parvis::gen {

namespace {

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

}  // namespace

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

}  // namespace parvis::gen
