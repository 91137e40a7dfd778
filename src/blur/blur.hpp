// Blur-map Gaussian blur (seed 002): each pixel is blurred with a Gaussian whose sigma
// comes from an 8-bit map: v = 0 copies the pixel, v in 1..255 gives sigma = sigma_max*v/255
// on a fixed (2R+1)^2 window, R = ceil(3*sigma_max). Many layers share one map.
#pragma once
#include <cstdint>
#include <vector>

#include "common/cli.hpp"
#include "common/image.hpp"
#include "common/status.hpp"

#ifdef __CUDACC__
#define PARVIS_BLUR_HD __host__ __device__
#else
#define PARVIS_BLUR_HD
#endif

namespace parvis::blur {

// sigma_max is in (0, kMaxSigmaMax]: R = ceil(3 * sigma_max) <= 48, a window of at most
// 97 x 97. The seed gives no value; DESIGN's default is 5 (R = 15, 31 x 31 taps).
constexpr double kMaxSigmaMax = 16;
constexpr double kDefaultSigmaMax = 5;

// The 255 integer tap sets, made once by make_tap_sets() and used by every version from
// V3 on (and by seq): out = round(sum(tap * px) / sum(in-bounds taps)), in integers.
// Taps are round(2^K exp(-(dx^2 + dy^2) / (2 sigma^2))), the centre tap is exactly 2^K
// and the largest, and K is the largest (<= 16) with side^2 * 255 * 2^K < 2^31: so both
// sums fit in int32/uint32 for any window, and sum(in-bounds taps) >= 2^K > 0.
struct TapSets {
  double sigma_max = 0;
  int radius = 0;               // R
  int side = 0;                 // 2R + 1
  std::vector<int32_t> taps;    // 255 sets of side*side taps; set v (1..255) at (v-1)*side*side
  const int32_t* set(int v) const { return taps.data() + size_t(v - 1) * size_t(side) * size_t(side); }
};

// THE shared host function that makes the tap sets. sigma_max outside (0, kMaxSigmaMax]
// is a usage error.
Status make_tap_sets(double sigma_max, TapSets* out);

// round_half_up(weighted / weight) for the non-negative sums above (weight > 0): adding
// weight / 2 before dividing rounds .5 up for odd and even weights alike; both sums are
// < 2^31, so the addition fits in uint32.
PARVIS_BLUR_HD inline uint8_t divide_round(uint32_t weighted, uint32_t weight) {
  return uint8_t((weighted + weight / 2) / weight);
}

// The default map: sharp centre (0), blurred rim (255), a radial gradient.
// v = floor(255 * d / r) capped at 255, in integers: d is the distance of the pixel's
// centre from the image centre and r the distance to the middle of the nearest edge
// pixel, so the inscribed circle is the sharp-to-blurred ramp and the corners are 255.
// An image one pixel wide or high is all rim (255).
Status radial_map(int width, int height, Image* out);

// The checks every version's apply() starts with: a grey map, layers grey and of its
// size, tap sets of make_tap_sets' shape (bad input otherwise).
Status check_apply_inputs(const std::vector<Image>& layers, const Image& map,
                          const TapSets& taps);

// `layers` are grey images of the map's size; `out` gets one image per layer.
// Defined by each version (blur-v1/v2 recompute the weights from taps.sigma_max).
Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings);

}  // namespace parvis::blur
