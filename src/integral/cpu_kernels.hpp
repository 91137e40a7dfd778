// The integral's CPU kernels, shared by the simd and omp versions (simd.cpp: one band of every
// row; omp.cpp: one band per thread, started from the column sums of the bands above).
#pragma once
#include <cstdint>

#include "common/image.hpp"

namespace parvis::integral::cpu {

// Integrates rows [y0, y1) of `gray` (1 channel) into `out` (row-major, gray.width a row):
// `col` holds gray.width elements: the integral's row y0 - 1 on entry (zeros for y0 = 0), its
// row y1 - 1 on return. `stream`: non-temporal stores for the output (large outputs).
// T is uint32_t, uint64_t or double; the caller has checked that T holds every element.
template <typename T>
void band(const Image& gray, bool squared, int y0, int y1, T* col, T* out, bool stream);

// sums[x] += the pixels (or squares) of column x over rows [y0, y1).
template <typename T>
void column_sums(const Image& gray, bool squared, int y0, int y1, T* sums);

// The instruction set band() runs on: "avx2", "sse2" or "scalar" (PARVIS_SIMD caps it).
const char* isa();

// Outputs at least this large are written with non-temporal stores.
constexpr uint64_t kStreamBytes = uint64_t(16) << 20;

}  // namespace parvis::integral::cpu
