// Runs the device pipeline's per-pixel conversion (cuda/video/frame_pixel.cuh: frame_rgb_at,
// and grey_quad, the whole-frame kernel's body, thread by thread as its grid would) on the host
// and compares every pixel with the host conversion every version's results are defined by
// (frame_to_rgb_gray and rect_to_rgb, src/video/convert.cpp): every layout (YUV 4:2:0, 4:2:2,
// 4:1:1, 4:4:4, mono, 4:4:4 + alpha; packed RGB, BGR; grey), both matrices and ranges, odd sizes,
// random bytes, and the pitch's zero columns past the width. Needs nvcc but no GPU. Exit 0
// when every pixel matches. Build and run with
//   nvcc -std=c++17 -O2 -Iinclude -Isrc -Ibmp -Icuda tests/cuda/video_convert_emulate.cu \
//        src/video/convert.cpp src/common/image.cpp src/cli/cli.cpp src/common/parse.cpp src/common/timing.cpp src/common/config.cpp -o /tmp/vce && /tmp/vce
#include <cstdio>
#include <vector>

#include "video/frame_pixel.cuh"

namespace parvis {
const char* const kVersionName = "emulate";
}
using namespace parvis;
using namespace parvis::video;

namespace {

uint32_t next(uint32_t* s) { return *s = *s * 1664525u + 1013904223u; }

// One case: returns the number of values that differ.
size_t check(const FrameFormat& f, uint32_t seed) {
  std::vector<uint8_t> bytes(f.frame_bytes());
  for (uint8_t& b : bytes) b = uint8_t(next(&seed) >> 24);
  Image rgb, gray, rect_rgb;
  if (!image_alloc(f.width, f.height, 3, &rgb).ok() || !image_alloc(f.width, f.height, 1, &gray).ok() ||
      !image_alloc(f.width, f.height, 3, &rect_rgb).ok())
    return 1;
  frame_to_rgb_gray(f, bytes.data(), &rgb, &gray);
  rect_to_rgb(f, bytes.data(), Rect{0, 0, f.width, f.height}, &rect_rgb);

  const DevFrame d = dev_frame(f);
  // The kernel's layout: rows of pitch bytes (the matcher's: 16-aligned, >= 16 spare), filled
  // with a marker first so that a column past the width left unwritten is seen.
  const size_t pitch = (size_t(f.width) + 16 + 15) / 16 * 16;
  std::vector<uint8_t> out(pitch * size_t(f.height), 0xA5);
  for (int y = 0; y < f.height; ++y)
    for (int x0 = 0; x0 < f.width; x0 += 4) grey_quad(d, bytes.data(), out.data(), pitch, x0, y);

  size_t bad = 0;
  for (int y = 0; y < f.height; ++y) {
    const int written_to = (f.width + 3) / 4 * 4;
    for (int x = 0; x < f.width; ++x) {
      uint8_t r, g, b;
      frame_rgb_at(d, bytes.data(), x, y, &r, &g, &b);
      const uint8_t* want = rgb.at(x, y);
      const uint8_t* want2 = rect_rgb.at(x, y);
      const uint8_t gv = out[size_t(y) * pitch + size_t(x)];
      const bool ok = r == want[0] && g == want[1] && b == want[2] && r == want2[0] && g == want2[1] &&
                      b == want2[2] && gv == gray.row(y)[x] && gv == frame_grey_at(d, bytes.data(), x, y);
      if (!ok && bad++ < 3)
        std::printf("  %s at (%d,%d): rgb %d %d %d want %d %d %d; grey %d want %d\n", f.describe().c_str(),
                    x, y, r, g, b, want[0], want[1], want[2], gv, gray.row(y)[x]);
    }
    for (int x = f.width; x < written_to; ++x)
      if (out[size_t(y) * pitch + size_t(x)] != 0 && bad++ < 3)
        std::printf("  %s: column %d past the width is not 0\n", f.describe().c_str(), x);
  }
  return bad;
}

}  // namespace

int main() {
  struct Sub {
    int sx, sy;
    bool mono, alpha;
  };
  const Sub subs[] = {{2, 2, false, false}, {2, 1, false, false}, {4, 1, false, false},
                      {1, 1, false, false}, {1, 1, true, false},  {1, 1, false, true}};
  const int sizes[][2] = {{1, 1}, {2, 2}, {3, 5}, {5, 3}, {7, 1}, {1, 7}, {17, 9}, {33, 31}, {64, 2}, {101, 37}};
  size_t cases = 0, bad = 0;
  uint32_t seed = 12345;
  for (const auto& wh : sizes) {
    for (const Sub& s : subs)
      for (YuvMatrix m : {YuvMatrix::Bt601, YuvMatrix::Bt709})
        for (YuvRange r : {YuvRange::Limited, YuvRange::Full}) {
          FrameFormat f;
          f.width = wh[0], f.height = wh[1];
          f.layout = Layout::Yuv;
          f.chroma_sx = s.sx, f.chroma_sy = s.sy, f.mono = s.mono, f.alpha = s.alpha;
          f.matrix = m, f.range = r;
          bad += check(f, seed += 7);
          ++cases;
        }
    for (Layout l : {Layout::Rgb24, Layout::Bgr24, Layout::Gray}) {
      FrameFormat f;
      f.width = wh[0], f.height = wh[1];
      f.layout = l;
      bad += check(f, seed += 7);
      ++cases;
    }
  }
  std::printf("video_convert_emulate: %zu cases, %zu values differ\n", cases, bad);
  return bad == 0 ? 0 : 1;
}
