// Convolution filters (seed 001) with integer taps and a divisor, as NPP does:
// out = clamp(round_half_up(sum(tap * px) / divisor), 0, 255), exact integer arithmetic.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/timing.hpp"
#include "common/image.hpp"
#include "common/status.hpp"
#include "filter/tuning.hpp"

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

// ---- the prepared filter: for the CLI, the bench and repeated frames of one shape ---------------
// Made once for a kernel, border, image shape and tuning (device buffers, taps in constant memory,
// launch plans live here), then: upload an image, compute (as often as wanted; on a CUDA version
// the image and the result stay on the GPU), download the result. Each step fills its field of
// Timings (CUDA events on the CUDA versions; CPU versions: compute only, no copies: upload keeps
// a reference to `in`, which must outlive compute).
struct Filter;
struct FilterDeleter {
  void operator()(Filter* f) const;
};
using FilterPtr = std::unique_ptr<Filter, FilterDeleter>;

// Checks the kernel (exit 2) and the tuning's variant (an unknown one: exit 1), then makes the
// version's filter (version_create). Errors: also a bad block size (exit 1), no device (exit 3),
// a variant this kernel or device cannot take (exit 2). Defined once, in filter.cpp.
Status filter_create(const Kernel& kernel, Border border, int width, int height, int channels,
                     const FilterTuning& tuning, FilterPtr* out);

// What ran (--explain): the tuning with the version's defaults filled in, and the path.
struct FilterRun {
  FilterTuning tuning;
  std::string path;
};

// `in` is grey or RGB (filtered per channel); `out` gets the same shape: create, upload, compute,
// download. filter.cpp.
Status apply(const Image& in, const Kernel& kernel, Border border, const FilterTuning& tuning,
             Image* out, Timings* timings, FilterRun* ran = nullptr);

// A prepared filter's run on one image of its shape: upload, compute, download. filter.cpp.
Status filter_run(Filter* f, const Image& in, Image* out, Timings* timings);

// `name` checked against variant_names(): its index, or a usage error listing them. filter.cpp.
Status find_variant(const std::string& name, int* index);

// ---- what each version defines (cpu_api.cpp with seq.cpp ..., cuda/filter/naive.cu, opt.cu) ----
// The kernels or code paths this version can run, the default first (seq: "loops"; simd and omp:
// "auto", "2d", "generic", "sse2", "scalar"; cuda-naive: the seed's "nonvec" and "vec"; cuda-opt:
// "auto", "mma", "direct", "sep").
std::vector<std::string> variant_names();
// filter_create's work, with the kernel checked and `variant` the index of tuning.variant (0 for "").
Status version_create(const Kernel& kernel, Border border, int width, int height, int channels,
                      const FilterTuning& tuning, int variant, FilterPtr* out);
Status filter_upload(Filter* f, const Image& in, Timings* timings);  // `in` of the filter's shape
Status filter_compute(Filter* f, Timings* timings);
Status filter_download(Filter* f, Image* out, Timings* timings);
// What runs: the variant, the path it took for this kernel, the launch configuration.
std::string filter_describe(const Filter* f);
// The tuning it runs with: the one given, its open fields filled with the version's defaults.
FilterTuning filter_tuning(const Filter* f);

}  // namespace parvis::filter
