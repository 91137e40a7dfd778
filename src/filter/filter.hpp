// Convolution filters (seed 001) with integer taps and a divisor, as NPP does:
// out = clamp(round_half_up(sum(tap * px) / divisor), 0, 255), exact integer arithmetic.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/image.hpp"
#include "common/status.hpp"

// The two small helpers below are the filter's arithmetic, shared by host and device code.
#ifdef __CUDACC__
#define PARVIS_FILTER_HD __host__ __device__
#else
#define PARVIS_FILTER_HD
#endif

namespace parvis::filter {

enum class Border {
  Zero,        // pixels outside the image count as 0 (the seeds' "ignore outside pixels")
  Replicate,   // aaa|abcd|ddd
  Reflect101,  // cb|abcd|cb
};

// Kernels are checked against these limits (builtin_kernel, parse_kernel_text), so that
// every version may accumulate sum(tap * px) in int32: |sum| <= sum|tap| * 255 <= 2^30,
// and sum + divisor / 2 < 2^31.
constexpr int kMaxKernelSize = 15;
constexpr int64_t kMaxKernelSum = int64_t(1) << 30;  // bound on sum(|tap|) * 255
constexpr int32_t kMaxDivisor = int32_t(1) << 30;

struct Kernel {
  std::string name;
  int size = 0;                // odd, taps are size x size, row-major
  std::vector<int32_t> taps;
  int32_t divisor = 1;         // > 0
};

// The coordinate of the pixel that stands for coordinate `i` of a row or column of `n`
// pixels (0 <= i < n: itself), or -1 when the border counts it as zero. Reflect101
// folds repeatedly, so any kernel works on any image size (n = 1 maps everything to 0).
PARVIS_FILTER_HD inline int border_index(int i, int n, Border border) {
  if (i >= 0 && i < n) return i;
  if (border == Border::Zero) return -1;
  if (border == Border::Replicate) return i < 0 ? 0 : n - 1;
  if (n == 1) return 0;
  const int period = 2 * (n - 1);  // reflect101 repeats every 2(n-1): 0 1 .. n-1 n-2 .. 1
  int m = i % period;
  if (m < 0) m += period;
  return m < n ? m : period - m;
}

// clamp(round_half_up(sum / divisor), 0, 255) in integers, divisor > 0. A sum <= 0 gives
// a quotient that rounds to <= 0, hence 0; a positive sum rounds up at .5 by adding
// divisor / 2 (exact for odd and even divisors) -- the same as floor((2 sum + d) / 2d).
PARVIS_FILTER_HD inline uint8_t round_clamp(int32_t sum, int32_t divisor) {
  if (sum <= 0) return 0;
  const int32_t q = (sum + divisor / 2) / divisor;
  return uint8_t(q > 255 ? 255 : q);
}

// The bank of DESIGN.md: identity, sharpen, edge, gaussian, box, unsharp; size 3 or 5.
// Shared by every version.
Status builtin_kernel(const std::string& name, int size, Kernel* out);
// A custom kernel: rows of integers (a square, odd size), then a line with the divisor.
// Blank lines and lines starting with '#' are skipped. Errors are bad input (exit 2).
Status parse_kernel_text(const std::string& text, Kernel* out);
// Checks a kernel against the limits above (size odd and <= kMaxKernelSize, divisor > 0).
Status check_kernel(const Kernel& k);

Status parse_border(const std::string& name, Border* out);
const char* border_name(Border b);

// `in` is grey or RGB (filtered per channel); `out` gets the same shape. Defined by each version.
Status apply(const Image& in, const Kernel& kernel, Border border, Image* out, Timings* timings);

}  // namespace parvis::filter
