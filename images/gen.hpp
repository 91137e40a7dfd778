// The shared declarations of parvis-gen (images/gen.cpp and its parts images/gen_*.cpp):
// the seeded randomness and small pixel helpers every family uses, the capsule scene, Y4M and
// production line types, and the functions one part calls in another.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "common/image.hpp"
#include "common/splitmix.hpp"
#include "video/yuv.hpp"

namespace parvis::gen {

// ------------------------------------------------------------------ deterministic randomness

// A hash of integer coordinates: position-stable randomness (a texture that moves with the
// belt, or lattice values of value noise) without keeping any state.
inline uint64_t hash_at(uint64_t seed, int64_t a, int64_t b = 0, int64_t c = 0) {
  uint64_t h = splitmix64_mix(seed + kSplitmixGamma);
  h = splitmix64_mix(h ^ (uint64_t(a) + 0x632be59bd9b4e019ULL));
  h = splitmix64_mix(h ^ (uint64_t(b) + 0x85157af5d2c7a6d3ULL));
  return splitmix64_mix(h ^ (uint64_t(c) + 0x2545f4914f6cdd1dULL));
}

// splitmix64: a sequential PRNG for things drawn in order (noise images, scattered shapes).
struct Rng : SplitMix64 {
  explicit Rng(uint64_t seed) : SplitMix64{seed} {}
  // Uniform in [0, n) by multiply-high (no modulo bias worth mentioning, no division).
  uint32_t below(uint32_t n) { return uint32_t(((next() >> 32) * uint64_t(n)) >> 32); }
  // Uniform in [lo, hi], inclusive.
  int range(int lo, int hi) { return lo + int(below(uint32_t(hi - lo + 1))); }
};

// ------------------------------------------------------------------ small pixel helpers

struct Color {
  int r, g, b;
};

inline uint8_t clamp255(int v) { return uint8_t(v < 0 ? 0 : v > 255 ? 255 : v); }
inline int clamp_int(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

// alpha in 0..256 (256 = fully `over`), rounded.
inline int mix_channel(int base, int over, int alpha) {
  return (base * (256 - alpha) + over * alpha + 128) >> 8;
}
inline Color blend(Color base, Color over, int alpha) {
  return {mix_channel(base.r, over.r, alpha), mix_channel(base.g, over.g, alpha),
          mix_channel(base.b, over.b, alpha)};
}
// Multiplies a colour by factor/256.
inline Color scale(Color c, int factor) {
  return {(c.r * factor + 128) >> 8, (c.g * factor + 128) >> 8, (c.b * factor + 128) >> 8};
}

inline Color get(const Image& img, int x, int y) {
  const uint8_t* p = img.at(x, y);
  return {p[0], p[1], p[2]};
}
inline void put(Image* img, int x, int y, Color c) {
  uint8_t* p = img->at(x, y);
  p[0] = clamp255(c.r), p[1] = clamp255(c.g), p[2] = clamp255(c.b);
}

// Floor division and modulo for possibly negative world coordinates (b > 0).
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

inline bool inside(const Image& img, Rect r) {
  return r.w > 0 && r.h > 0 && r.x >= 0 && r.y >= 0 && int64_t(r.x) + r.w <= img.width &&
         int64_t(r.y) + r.h <= img.height;
}

// ------------------------------------------------------------------ output (gen.cpp)

[[noreturn]] void die(const Status& s);
std::string join_path(const std::string& dir, const std::string& name);
// Writes DIR/NAME and says so on stdout; dies when it cannot.
void write_image(const std::string& dir, const std::string& name, const Image& img);
void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes, const std::string& what);
// mkdir -p
Status make_dirs(const std::string& dir);

// ------------------------------------------------------------------ test images (gen_images.cpp)

Image alloc_or_die(int w, int h, int channels);
// Uniform 0..255 on every channel: the input that exposes wrong arithmetic.
Image noise_image(int w, int h, int channels, uint64_t seed);
Image radial_map(int w, int h);
Image noise_map(int w, int h, uint64_t seed);
Image gradient_image(int w, int h);
Image flat_image(int w, int h, int channels, Color c);
Image all_colours_image();

// ------------------------------------------------------------------ natural scene (gen_natural.cpp)

Image render_natural(int w, int h, uint64_t seed);

// ------------------------------------------------------------------ the capsule line (gen_capsules.cpp)

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

CapsuleLayout capsule_layout(const CapsuleScene& sc);
// Renders the scene; `capsules` receives every capsule at least partly in view.
Image render_capsules(const CapsuleScene& sc, std::vector<Capsule>* capsules);
// The template rectangle around a capsule: the capsule with a margin of belt.
Rect template_rect(const CapsuleLayout& L, const Capsule& c);

// A capsule scene and its two templates (filled and empty), checked to match uniquely.
struct CapsuleSet {
  CapsuleScene scene;
  Image image, full_tpl, empty_tpl;
  Rect full_at, empty_at{0, 0, 0, 0};
  std::vector<Capsule> capsules;
};

CapsuleSet make_capsule_set(int w, int h, int scale, uint64_t seed);
void describe_capsules(const char* name, const CapsuleSet& set);

// ------------------------------------------------------------------ Y4M and the production line (gen_video.cpp)

// How a Y4M file is written: its chroma layout (the C tag), range (the XCOLORRANGE tag, which
// may be left out to test the reader's default: limited) and matrix (BT.601 unless told).
struct Y4mSpec {
  const char* colourspace = "420jpeg";
  int sx = 2, sy = 2;  // chroma subsampling
  bool mono = false;
  video::YuvRange range = video::YuvRange::Full;
  bool range_tag = true;
};

std::string y4m_header_of(const Y4mSpec& spec, int w, int h);
void append_y4m_frame(const Image& rgb, const Y4mSpec& spec, std::vector<uint8_t>* out);

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
std::vector<Image> render_line_frame(const LineClip& clip, int f, Image* tpl, std::vector<LineTruth>* truth);
std::vector<Image> render_line(const LineClip& clip, Image* tpl, std::vector<LineTruth>* truth);
std::vector<uint8_t> line_y4m(const std::vector<Image>& frames, const Y4mSpec& spec);
std::string truth_csv(const std::vector<LineTruth>& truth);

// ------------------------------------------------------------------ the file sets (gen_testdata.cpp)

void write_samples(const std::string& dir);
void write_testdata(const std::string& dir);

}  // namespace parvis::gen
