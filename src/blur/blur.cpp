// The blur's shared host code: the 255 integer tap sets and the default radial map.
// Every version uses these, so every version sees the same taps and the same map.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "blur/blur.hpp"
#include "common/splitmix.hpp"

namespace parvis::blur {

Status make_tap_sets(double sigma_max, TapSets* out) {
  if (!(sigma_max >= kMinSigmaMax && sigma_max <= kMaxSigmaMax)) {
    char text[96];
    std::snprintf(text, sizeof text, "sigma-max must be in [%g, %g], not %g", kMinSigmaMax, kMaxSigmaMax,
                  sigma_max);
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

  ts.k = k;
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

void make_weight_table(const TapSets& taps, WeightTable* out) {
  const int s = taps.side, n = s + 1;
  out->side = s;
  out->prefix.assign(size_t(255) * size_t(n) * size_t(n), 0);
  for (int v = 1; v <= 255; ++v) {
    const int32_t* t = taps.set(v);
    uint32_t* p = out->prefix.data() + size_t(v - 1) * size_t(n) * size_t(n);
    for (int y = 0; y < s; ++y)
      for (int x = 0; x < s; ++x)
        p[(y + 1) * n + x + 1] = uint32_t(t[y * s + x]) + p[y * n + x + 1] + p[(y + 1) * n + x] - p[y * n + x];
  }
}

uint8_t reference_pixel(const Image& layer, const Image& map, const TapSets& taps, int x, int y) {
  const int v = map.at(x, y)[0];
  if (v == 0) return layer.at(x, y)[0];  // sharp: the pixel itself
  const int radius = taps.radius;
  const int32_t* set = taps.set(v);
  uint32_t weighted = 0, weight = 0;  // < 2^31 by construction of the taps
  for (int dy = -radius; dy <= radius; ++dy) {
    const int sy = y + dy;
    if (sy < 0 || sy >= layer.height) continue;
    for (int dx = -radius; dx <= radius; ++dx) {
      const int sx = x + dx;
      if (sx < 0 || sx >= layer.width) continue;
      const uint32_t tap = uint32_t(set[(dy + radius) * taps.side + (dx + radius)]);
      weighted += tap * layer.at(sx, sy)[0];
      weight += tap;
    }
  }
  return divide_round(weighted, weight);
}

Image noise_image(int width, int height, uint64_t seed) {
  Image img;
  image_alloc(width, height, 1, &img);
  SplitMix64 rng{seed};
  for (size_t i = 0; i < img.pixels.size(); i += 8) {
    const uint64_t z = rng.next();
    for (size_t j = 0; j < 8 && i + j < img.pixels.size(); ++j) img.pixels[i + j] = uint8_t(z >> (8 * j));
  }
  return img;
}

int rounding_tolerance() {
  const std::string v = kVersionName;
  return v == "blur-v1" || v == "blur-v2" ? 1 : 0;
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

Status split_channels(const Image& in, std::vector<Image>* layers) {
  for (int c = 0; c < in.channels; ++c) {
    Image layer;
    PARVIS_TRY(image_alloc(in.width, in.height, 1, &layer));
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < in.width; ++x) layer.at(x, y)[0] = in.at(x, y)[c];
    layers->push_back(std::move(layer));
  }
  return Status::Ok();
}

Status join_channels(const std::vector<Image>& layers, size_t first, int channels, Image* out) {
  const Image& one = layers[first];
  PARVIS_TRY(image_alloc(one.width, one.height, channels, out));
  for (int c = 0; c < channels; ++c)
    for (int y = 0; y < out->height; ++y)
      for (int x = 0; x < out->width; ++x) out->at(x, y)[c] = layers[first + size_t(c)].at(x, y)[0];
  return Status::Ok();
}

}  // namespace parvis::blur
