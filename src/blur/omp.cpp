// Blur map, omp version: the simd version's row kernel (cpu_kernels.inc) with the output rows
// spread over OpenMP threads (OMP_NUM_THREADS is honoured). Rows are independent, and in
// chunks of 4 handed out dynamically: the sharp centre of a radial map costs nothing, so
// equal static shares would not be equal work.
#include <omp.h>

#include "blur/cpu_blur.hpp"

namespace parvis::blur {

Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings, Launch*) {
  return cpu::apply(layers, map, taps, out, timings, [](int rows, const std::function<void(int)>& body) {
#pragma omp parallel for schedule(dynamic, 4)
    for (int y = 0; y < rows; ++y) body(y);
  });
}

}  // namespace parvis::blur
