// Convolution filter, the reference (seed 001, Algorithms 1-2): for every pixel and
// channel, the integer sum of tap * pixel over the window centred on it, then rounded,
// divided and clamped (round_clamp). Plain loops. Like the seed, the kernel is not
// flipped (correlation); the bank's kernels are symmetric, so only custom ones can tell.
#include "filter/cpu_filter.hpp"

namespace parvis::filter {

std::vector<std::string> variant_names() { return {"loops"}; }

std::string cpu::describe(const Kernel&, Border, int, int, int, int) { return "loops"; }

Status cpu::convolve(const Image& in, const Kernel& kernel, Border border, int, Image* res) {
  const int radius = kernel.size / 2;
  for (int y = 0; y < in.height; ++y) {
    for (int x = 0; x < in.width; ++x) {
      for (int c = 0; c < in.channels; ++c) {
        int32_t sum = 0;  // exact: check_kernel bounds |sum| by 2^30
        for (int ky = -radius; ky <= radius; ++ky) {
          const int sy = border_index(y + ky, in.height, border);
          if (sy < 0) continue;
          const uint8_t* const row = in.row(sy);
          for (int kx = -radius; kx <= radius; ++kx) {
            const int sx = border_index(x + kx, in.width, border);
            if (sx < 0) continue;
            const int32_t tap = kernel.taps[size_t(ky + radius) * kernel.size + (kx + radius)];
            sum += tap * row[size_t(sx) * size_t(in.channels) + size_t(c)];
          }
        }
        res->at(x, y)[c] = round_clamp(sum, kernel.divisor);
      }
    }
  }
  return Status::Ok();
}

}  // namespace parvis::filter
