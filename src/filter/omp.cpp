// Convolution filter, omp version: the simd version's plan and kernels (cpu_kernels.hpp), the
// output rows cut into one contiguous band per OpenMP thread (OMP_NUM_THREADS is honoured); each
// band keeps its own padded-row buffers, so the threads share nothing but the input.
#include <omp.h>

#include "filter/cpu_filter.hpp"
#include "filter/cpu_kernels.hpp"

namespace parvis::filter {

std::vector<std::string> variant_names() { return cpu::vector_variant_names(); }

std::string cpu::describe(const Kernel& kernel, Border border, int width, int height, int channels,
                          int variant) {
  return describe(make_plan(kernel, border, width, height, channels, variant));
}

Status cpu::convolve(const Image& in, const Kernel& kernel, Border border, int variant, Image* out) {
  const Plan plan = make_plan(kernel, border, in.width, in.height, in.channels, variant);
#pragma omp parallel
  {
    const int n = omp_get_num_threads(), t = omp_get_thread_num();
    const int y0 = int(int64_t(in.height) * t / n), y1 = int(int64_t(in.height) * (t + 1) / n);
    convolve_rows(plan, in, out, y0, y1);
  }
  return Status::Ok();
}

}  // namespace parvis::filter
