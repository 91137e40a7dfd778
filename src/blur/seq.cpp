// Blur-map Gaussian blur, the reference (seed 002): for every layer and pixel, the tap set
// its map value selects, weighted over the in-bounds part of the window and normalised by
// the in-bounds taps (pixels outside the image are left out of both sums). Plain loops:
// reference_pixel (blur.cpp) over every pixel of every layer.
#include "blur/blur.hpp"

namespace parvis::blur {

Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings, Launch*) {
  PARVIS_TRY(check_apply_inputs(layers, map, taps));
  const double t0 = now_ms();
  std::vector<Image> results(layers.size());
  for (size_t l = 0; l < layers.size(); ++l) {
    const Image& in = layers[l];
    PARVIS_TRY(image_alloc(in.width, in.height, 1, &results[l]));
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < in.width; ++x) results[l].at(x, y)[0] = reference_pixel(in, map, taps, x, y);
  }
  *out = std::move(results);
  if (timings) timings->compute_ms = now_ms() - t0;
  return Status::Ok();
}

}  // namespace parvis::blur
