// What the simd and omp versions of the blur map share (blur-v* and CUDA versions do not link
// it): the layers copied into zero-margined rows, the tap sets as 16-bit rows padded for
// vector loads, and the row kernel (cpu_kernels.inc, written once over the ISA ops of
// cpu/simd.hpp and compiled for SSE2 and AVX2; a scalar twin off x86). simd.cpp runs the
// output rows in order, omp.cpp over OpenMP threads: that is all that differs.
#pragma once
#include <functional>
#include <vector>

#include "blur/blur.hpp"

namespace parvis::blur::cpu {

// Runs body(y) once for every y in [0, rows), in any order and on any thread.
using RowRunner = std::function<void(int rows, const std::function<void(int y)>& body)>;

// apply() of the simd and omp versions (blur.hpp); `run_rows` decides who computes which rows.
Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings, const RowRunner& run_rows);

}  // namespace parvis::blur::cpu
