// The filter's typed tuning: every choice of how a version runs the filter, in one struct, filled
// once from PARVIS_TUNING (tuning_from_config, filter.cpp: the keys filter.variant,
// filter.sep_async, filter.sep_rows of src/common/config.cpp), passed to filter_create and
// printed by --explain as it ran (filter_tuning: the fields left open filled with the version's
// defaults). Every version takes `variant`; the CUDA versions `block_threads`; the sep_ fields
// are cuda-opt's separable kernel (cuda/filter/opt_sep*.cuh). It lives in src/ because every
// version, the CPU ones too, is handed it; cuda-opt's defaults per device and size are
// opt_tuning_defaults below, the one place they are set.
#pragma once
#include <string>

namespace parvis::filter {

struct FilterTuning {
  std::string variant;    // "": the version's default (the first of variant_names()); else one of them
  int block_threads = 0;  // CUDA versions: threads a block (cuda-naive: pixels a block); 0: 256
  int sep_async = -1;     // cuda-opt sep: 1 the cp.async kernel (compute capability 8.0+), 0 the
                          // register kernel; -1: by the device
  int sep_rows = 0;       // cuda-opt sep: output rows a warp's strip; 0: the default (one wave of
                          // the resident warps, or as opt_tuning_defaults says)

  // The fields that are set, e.g. "variant=auto threads=256 sep_async=1 sep_rows=8".
  std::string describe() const {
    std::string s = "variant=" + (variant.empty() ? std::string("default") : variant);
    if (block_threads > 0) s += " threads=" + std::to_string(block_threads);
    if (sep_async >= 0) s += " sep_async=" + std::to_string(sep_async);
    if (sep_rows > 0) s += " sep_rows=" + std::to_string(sep_rows);
    return s;
  }
};

// PARVIS_TUNING's filter keys (config.cpp). A variant this version does not have is left at the
// default: the tests run seq beside the version under test with the same environment.
FilterTuning tuning_from_config();

// cuda-opt's defaults for what `t` leaves open, on a device of compute capability `cc_major`
// with a K x K kernel (the one place they are set):
//   variant "auto" (the cost model of opt.cu: sep where it applies, else mma, else direct; "sep"
//   and "mma" force their kernel where it applies, and take auto's path elsewhere);
//   256 threads a block;
//   sep: the cp.async kernel where the device has cp.async (8.0), the register kernel below
//   (decision 017); with the cp.async kernel at 3x3 strips of 8 rows (the warps resident at once
//   work on neighbouring rows; at 5x5 the (K - 1) / 8 halo rows cost more than that gains), else
//   one wave of the resident warps.
inline FilterTuning opt_tuning_defaults(FilterTuning t, int cc_major, int kernel_size) {
  if (t.variant.empty()) t.variant = "auto";
  if (t.block_threads == 0) t.block_threads = 256;
  if (t.sep_async < 0) t.sep_async = cc_major >= 8 ? 1 : 0;
  if (t.sep_rows == 0 && t.sep_async == 1 && kernel_size == 3) t.sep_rows = 8;
  return t;
}

}  // namespace parvis::filter
