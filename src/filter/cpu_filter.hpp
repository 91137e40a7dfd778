// What the CPU versions of the filter share: each version file (seq.cpp, simd.cpp, omp.cpp)
// defines cpu::convolve and variant_names(); cpu_api.cpp builds apply() and the prepared-filter
// API on top of them.
#pragma once
#include "filter/filter.hpp"

namespace parvis::filter::cpu {

// Filters `in` into `out`, which has the same shape (allocated by the caller). `variant` is an
// index into variant_names(); `kernel` has passed check_kernel.
Status convolve(const Image& in, const Kernel& kernel, Border border, int variant, Image* out);

// What convolve runs for this kernel and shape, e.g. "auto: sep16/avx2" (filter_describe).
std::string describe(const Kernel& kernel, Border border, int width, int height, int channels,
                     int variant);

}  // namespace parvis::filter::cpu
