// Convolution filter, simd version: the plan and vector kernels of cpu_kernels.hpp (AVX2 or
// SSE2, picked at run time; scalar off x86) over every row, on one thread.
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
  convolve_rows(plan, in, out, 0, in.height);
  return Status::Ok();
}

}  // namespace parvis::filter
