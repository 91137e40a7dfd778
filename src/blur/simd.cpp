// Blur map, simd version: the vector row kernel of cpu_kernels.inc (AVX2 or SSE2, picked at
// run time; scalar off x86) over the output rows in order, on one thread.
#include "blur/cpu_blur.hpp"

namespace parvis::blur {

Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings, Launch*) {
  return cpu::apply(layers, map, taps, out, timings, [](int rows, const std::function<void(int)>& body) {
    for (int y = 0; y < rows; ++y) body(y);
  });
}

}  // namespace parvis::blur
