// The blur's shared host code: the 255 integer tap sets and the default radial map.
// Every version uses these, so every version sees the same taps and the same map.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "blur/blur.hpp"

namespace parvis::blur {

Status make_tap_sets(double sigma_max, TapSets* out) {
  if (!(sigma_max > 0 && sigma_max <= kMaxSigmaMax)) {
    char text[96];
    std::snprintf(text, sizeof text, "sigma-max must be in (0, %g], not %g", kMaxSigmaMax, sigma_max);
    return Status::usage(text);
  }
  TapSets ts;
  ts.sigma_max = sigma_max;
  ts.radius = int(std::ceil(3 * sigma_max));
  ts.side = 2 * ts.radius + 1;
  const int64_t window = int64_t(ts.side) * ts.side;

  // Every tap is <= 2^K (the centre), so sum(tap * 255) <= window * 255 * 2^K < 2^31.
  int k = 16;
  while (window * 255 * (int64_t(1) << k) >= (int64_t(1) << 31)) --k;
  const double one = std::ldexp(1.0, k);

  ts.taps.resize(size_t(255) * size_t(window));
  for (int v = 1; v <= 255; ++v) {
    const double sigma = sigma_max * v / 255;
    int32_t* set = ts.taps.data() + size_t(v - 1) * size_t(window);
    for (int dy = -ts.radius; dy <= ts.radius; ++dy)
      for (int dx = -ts.radius; dx <= ts.radius; ++dx) {
        const double g = std::exp(-double(dx * dx + dy * dy) / (2 * sigma * sigma));
        set[(dy + ts.radius) * ts.side + (dx + ts.radius)] = int32_t(std::llround(one * g));
      }
  }
  *out = std::move(ts);
  return Status::Ok();
}

Status check_apply_inputs(const std::vector<Image>& layers, const Image& map, const TapSets& taps) {
  if (map.channels != 1) return Status::bad_input("the blur map must be grey");
  if (taps.side != 2 * taps.radius + 1 ||
      taps.taps.size() != size_t(255) * size_t(taps.side) * size_t(taps.side))
    return Status::bad_input("blur tap sets are not made by make_tap_sets");
  for (const Image& layer : layers)
    if (layer.channels != 1 || layer.width != map.width || layer.height != map.height)
      return Status::bad_input("every layer must be grey and of the map's size " +
                               std::to_string(map.width) + "x" + std::to_string(map.height));
  return Status::Ok();
}

namespace {

// floor(sqrt(n)), exactly.
uint64_t isqrt(uint64_t n) {
  uint64_t s = uint64_t(std::sqrt(double(n)));
  while (s * s > n) --s;
  while ((s + 1) * (s + 1) <= n) ++s;
  return s;
}

}  // namespace

Status radial_map(int width, int height, Image* out) {
  Image map;
  PARVIS_TRY(image_alloc(width, height, 1, &map));
  // Distances in half pixels, so that the centre of an even side is exact: the centre of
  // pixel x lies 2x + 1 - width half pixels from the image centre.
  const int64_t r = int64_t(std::min(width, height)) - 1;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const int64_t dx = 2 * int64_t(x) + 1 - width;
      const int64_t dy = 2 * int64_t(y) + 1 - height;
      const uint64_t d2 = uint64_t(dx * dx + dy * dy);
      uint8_t v = 255;
      // d < r here, and r < 46341 (an image has at most 2^31 pixels), so 65025 d^2 fits.
      if (d2 < uint64_t(r * r)) v = uint8_t(isqrt(65025 * d2 / uint64_t(r * r)));
      map.at(x, y)[0] = v;
    }
  }
  *out = std::move(map);
  return Status::Ok();
}

}  // namespace parvis::blur
