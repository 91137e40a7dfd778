// Blur-map Gaussian blur (seed 002): each pixel is blurred with a Gaussian whose sigma
// comes from an 8-bit map: v = 0 copies the pixel, v in 1..255 gives sigma = sigma_max*v/255
// on a fixed (2R+1)^2 window, R = ceil(3*sigma_max). Many layers share one map.
#pragma once
#include <cstdint>
#include <vector>

#include "common/cli.hpp"
#include "common/image.hpp"
#include "common/status.hpp"

namespace parvis::blur {

// The 255 integer tap sets, made once by make_tap_sets() and used by every version from
// V3 on (and by seq): out = round(sum(tap * px) / sum(in-bounds taps)), in integers.
struct TapSets {
  double sigma_max = 0;
  int radius = 0;               // R
  int side = 0;                 // 2R + 1
  std::vector<int32_t> taps;    // 255 sets of side*side taps; set v (1..255) at (v-1)*side*side
  const int32_t* set(int v) const { return taps.data() + size_t(v - 1) * size_t(side) * size_t(side); }
};

// THE shared host function that makes the tap sets.
Status make_tap_sets(double sigma_max, TapSets* out);

// The default map: sharp centre (0), blurred rim (255), a radial gradient.
Status radial_map(int width, int height, Image* out);

// `layers` are grey images of the map's size; `out` gets one image per layer.
// Defined by each version (blur-v1/v2 recompute the weights from taps.sigma_max).
Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings);

}  // namespace parvis::blur
