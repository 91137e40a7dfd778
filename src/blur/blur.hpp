// Blur-map Gaussian blur (seed 002): each pixel is blurred with a Gaussian whose sigma
// comes from an 8-bit map: v = 0 copies the pixel, v in 1..255 gives sigma = sigma_max*v/255
// on a fixed (2R+1)^2 window, R = ceil(3*sigma_max). Many layers share one map.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/timing.hpp"
#include "common/image.hpp"
#include "common/status.hpp"

#ifdef __CUDACC__
#define PARVIS_BLUR_HD __host__ __device__
#else
#define PARVIS_BLUR_HD
#endif

namespace parvis::blur {

// sigma_max is in [kMinSigmaMax, kMaxSigmaMax]: R = ceil(3 * sigma_max) <= 48, a window of at
// most 97 x 97. The lower bound keeps 2 sigma^2 of the smallest set (v = 1) far from underflow
// (a zero there made the centre tap 0/0); any sigma_max below 1/3 blurs nothing visible anyway.
// The seed gives no value; DESIGN's default is 5 (R = 15, 31 x 31 taps).
constexpr double kMinSigmaMax = 0.01;
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
  int k = 0;                    // the centre tap of every set is 2^k
  std::vector<int32_t> taps;    // 255 sets of side*side taps; set v (1..255) at (v-1)*side*side
  const int32_t* set(int v) const { return taps.data() + size_t(v - 1) * size_t(side) * size_t(side); }
};

// THE shared host function that makes the tap sets. sigma_max outside
// [kMinSigmaMax, kMaxSigmaMax] is a usage error.
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

// Sum of the in-bounds taps of every set for every window the image clips: each set's 2-D
// inclusive prefix sums, (side + 1)^2 per set with a zero first row and column, set v at
// (v - 1) * (side + 1)^2. Shared by the versions that do not sum the weights tap by tap
// (simd, omp, cuda-opt): an interior pixel's weight is the set's full sum, a border pixel's
// four look-ups. Exact: every sum is < 2^31 / 255.
struct WeightTable {
  int side = 0;
  std::vector<uint32_t> prefix;
  const uint32_t* set(int v) const { return prefix.data() + size_t(v - 1) * size_t(side + 1) * size_t(side + 1); }
};
void make_weight_table(const TapSets& taps, WeightTable* out);

// The weight of pixel (x, y) of a width x height image: the taps of one set's prefix table
// (WeightTable::set) whose window position lies inside the image.
PARVIS_BLUR_HD inline uint32_t window_weight(const uint32_t* prefix, int radius, int x, int y,
                                             int width, int height) {
  const int side = 2 * radius + 1, n = side + 1;
  // In-bounds offsets dx in [x0 - R, x1 - R), as columns [x0, x1) of the set (same for y).
  const int x0 = x >= radius ? 0 : radius - x;
  const int x1 = width - 1 - x >= radius ? side : radius + width - x;
  const int y0 = y >= radius ? 0 : radius - y;
  const int y1 = height - 1 - y >= radius ? side : radius + height - y;
  return prefix[y1 * n + x1] - prefix[y0 * n + x1] - prefix[y1 * n + x0] + prefix[y0 * n + x0];
}

// The contract for one output pixel of one layer, as plain loops: the tap set of the map
// value, weighted over the in-bounds part of the window, rounded half up (v = 0: the pixel).
// seq is this function over every pixel; the selftest checks each version against it.
uint8_t reference_pixel(const Image& layer, const Image& map, const TapSets& taps, int x, int y);

// How far this version's outputs may lie from the reference: 0 (bit-identical) for every
// version but blur-v1 and blur-v2, which recompute the Gaussian in floating point (1).
int rounding_tolerance();

// Launch configuration for seed 002's ladder (blur-v1 … blur-v5): the grid's blocks and the
// threads per block. In: 0 = the version's default. Out: what the ladder versions launched
// (the other versions ignore it and leave it as it was).
struct Launch {
  int blocks = 0;
  int threads_per_block = 0;
  std::string note;  // out: anything about the run worth a line on stderr (V4: where its taps live)
};

// Deterministic noise (splitmix64 of `seed`), uniform 0 … 255: the layers of the seed's command
// form and of the bench, and the bench's noise map (no correlation between neighbours).
Image noise_image(int width, int height, uint64_t seed);

// The multiply-add rates of this version's hardware, for the bench's "against the floor":
// on a GPU measured with long independent instruction chains (IMAD: one multiply-add; the
// unsigned dp2a: two), beside the data sheet's IMAD rate (64 per SM per clock on sm_70 …
// sm_90). The CPU versions do not measure it (not implemented).
struct PeakRates {
  int sms = 0;
  double clock_ghz = 0;
  double imad_per_s = 0;        // measured
  double dp2a_per_s = 0;        // measured, instructions (2 multiply-adds each)
  double imad_sheet_per_s = 0;  // sms * 64 * clock
};
Status measure_peak(PeakRates* out);

// An image's channels as grey layers, appended to *layers (what apply() blurs), and the
// image of `channels` layers put back together from (*layers)[first...]. The command line and
// the library (src/api/ops.cpp) both.
Status split_channels(const Image& in, std::vector<Image>* layers);
Status join_channels(const std::vector<Image>& layers, size_t first, int channels, Image* out);

// The checks every version's apply() starts with: a grey map, layers grey and of its
// size, tap sets of make_tap_sets' shape (bad input otherwise).
Status check_apply_inputs(const std::vector<Image>& layers, const Image& map,
                          const TapSets& taps);

// `layers` are grey images of the map's size; `out` gets one image per layer.
// Defined by each version (blur-v1/v2 recompute the weights from taps.sigma_max).
Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings, Launch* launch = nullptr);

}  // namespace parvis::blur
