// Blur-map Gaussian blur, the reference (seed 002): for every layer and pixel, the tap set
// its map value selects, weighted over the in-bounds part of the window and normalised by
// the in-bounds taps (pixels outside the image are left out of both sums). Plain loops.
#include "blur/blur.hpp"

namespace parvis::blur {

Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings) {
  PARVIS_TRY(check_apply_inputs(layers, map, taps));
  const double t0 = now_ms();
  std::vector<Image> results(layers.size());
  const int radius = taps.radius;
  for (size_t l = 0; l < layers.size(); ++l) {
    const Image& in = layers[l];
    Image& res = results[l];
    PARVIS_TRY(image_alloc(in.width, in.height, 1, &res));
    for (int y = 0; y < in.height; ++y) {
      for (int x = 0; x < in.width; ++x) {
        const int v = map.at(x, y)[0];
        if (v == 0) {  // sharp: the pixel itself
          res.at(x, y)[0] = in.at(x, y)[0];
          continue;
        }
        const int32_t* set = taps.set(v);
        uint32_t weighted = 0, weight = 0;  // < 2^31 by construction of the taps
        for (int dy = -radius; dy <= radius; ++dy) {
          const int sy = y + dy;
          if (sy < 0 || sy >= in.height) continue;
          for (int dx = -radius; dx <= radius; ++dx) {
            const int sx = x + dx;
            if (sx < 0 || sx >= in.width) continue;
            const uint32_t tap = uint32_t(set[(dy + radius) * taps.side + (dx + radius)]);
            weighted += tap * in.at(sx, sy)[0];
            weight += tap;
          }
        }
        res.at(x, y)[0] = divide_round(weighted, weight);
      }
    }
  }
  *out = std::move(results);
  if (timings) timings->compute_ms = now_ms() - t0;
  return Status::Ok();
}

}  // namespace parvis::blur
