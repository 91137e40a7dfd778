// THE grey conversion of parvis, for host and device code alike: every version and every
// operation that turns colour into grey (match, filter --gray, blur maps, integral inputs,
// video frames, and the CUDA kernels that convert on the GPU) calls this one function.
//
// It is OpenCV 4.x's 8-bit cvtColor(BGR2GRAY) bit for bit: 15-bit fixed-point weights
// (0.299, 0.587, 0.114 times 2^15, rounded so that they sum to 2^15) and round half up.
// Checked against OpenCV 4.6 on all 2^24 colours (docs/DESIGN.md, "Grey"); the 14-bit
// weights (4899, 9617, 1868) it replaces differ from OpenCV on 43,864 colours.
#pragma once
#include <cstdint>

#ifdef __CUDACC__
#define PARVIS_GRAY_HD __host__ __device__ __forceinline__
#else
#define PARVIS_GRAY_HD inline
#endif

namespace parvis {

constexpr uint32_t kGrayR = 9798, kGrayG = 19235, kGrayB = 3735;  // sum 2^15
constexpr int kGrayShift = 15;

PARVIS_GRAY_HD uint8_t gray_of(uint32_t r, uint32_t g, uint32_t b) {
  // At most 255 * 2^15 + 2^14 < 2^24: no overflow in 32 bits.
  return uint8_t((kGrayR * r + kGrayG * g + kGrayB * b + (1u << (kGrayShift - 1))) >> kGrayShift);
}

}  // namespace parvis
