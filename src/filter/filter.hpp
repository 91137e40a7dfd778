// Convolution filters (seed 001) with integer taps and a divisor, as NPP does:
// out = clamp(round_half_up(sum(tap * px) / divisor), 0, 255), exact integer arithmetic.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/image.hpp"
#include "common/status.hpp"

namespace parvis::filter {

enum class Border {
  Zero,        // pixels outside the image count as 0 (the seeds' "ignore outside pixels")
  Replicate,   // aaa|abcd|ddd
  Reflect101,  // cb|abcd|cb
};

struct Kernel {
  std::string name;
  int size = 0;                // odd, taps are size x size, row-major
  std::vector<int32_t> taps;
  int32_t divisor = 1;         // > 0
};

// The bank of DESIGN.md: identity, sharpen, edge, gaussian, box, unsharp; size 3 or 5.
// Shared by every version.
Status builtin_kernel(const std::string& name, int size, Kernel* out);
// A custom kernel: rows of integers (a square, odd size), then a line with the divisor.
Status parse_kernel_text(const std::string& text, Kernel* out);

// `in` is grey or RGB (filtered per channel); `out` gets the same shape. Defined by each version.
Status apply(const Image& in, const Kernel& kernel, Border border, Image* out, Timings* timings);

}  // namespace parvis::filter
