// The filter's shared host code: the kernel bank, custom kernel files, border names, the tuning
// from PARVIS_TUNING, and the prepared filter's checks and apply() over create/upload/compute/
// download. Linked into every version; the convolution itself is in the version files (seq.cpp,
// ..., cuda/filter/naive.cu, opt.cu), which call nothing here (kernel_math.hpp holds the analysis
// they share).
#include <cstdlib>
#include <sstream>

#include "common/config.hpp"
#include "filter/filter.hpp"

namespace parvis::filter {
namespace {

Kernel make_kernel(const std::string& name, int size, std::vector<int32_t> taps,
                   int32_t divisor) {
  Kernel k;
  k.name = name;
  k.size = size;
  k.taps = std::move(taps);
  k.divisor = divisor;
  return k;
}

// Outer product of a 1-D kernel with itself: the separable binomial Gaussians.
std::vector<int32_t> outer(const std::vector<int32_t>& v) {
  std::vector<int32_t> t;
  for (int32_t a : v)
    for (int32_t b : v) t.push_back(a * b);
  return t;
}

}  // namespace

// The bank. Every kernel sums to its divisor (flat areas are kept) except edge (sums to 0).
//   identity   the centre tap 1.
//   sharpen    3x3: [0 -1 0; -1 5 -1; 0 -1 0] (the usual one).
//              5x5: [-1 -1 -1 -1 -1; -1 2 2 2 -1; -1 2 8 2 -1; -1 2 2 2 -1; -1 -1 -1 -1 -1] / 8
//              (the common 5x5 sharpen: an inner positive ring, an outer negative one).
//   edge       Laplacians with a positive centre, so that bright detail comes out bright
//              (negative responses clamp to 0). 3x3: the 8-neighbour Laplacian, all -1 and
//              centre 8. 5x5: the Laplacian of Gaussian
//              [0 0 -1 0 0; 0 -1 -2 -1 0; -1 -2 16 -2 -1; 0 -1 -2 -1 0; 0 0 -1 0 0].
//   gaussian   binomial: [1 2 1]^T [1 2 1] / 16, [1 4 6 4 1]^T [1 4 6 4 1] / 256.
//   box        ones / 9, ones / 25.
//   unsharp    2 * identity - gaussian, i.e. the image plus (image - its blur):
//              5x5: -1/256 * the 5x5 Gaussian with centre -476 (DESIGN.md: 476 = 2*256 - 36);
//              3x3: -1/16 * the 3x3 Gaussian with centre -28 (28 = 2*16 - 4).
Status builtin_kernel(const std::string& name, int size, Kernel* out) {
  if (size != 3 && size != 5)
    return Status::usage("kernel size must be 3 or 5, not " + std::to_string(size));
  const int n = size * size;
  const int centre = n / 2;
  Kernel k;
  if (name == "identity") {
    std::vector<int32_t> t(n, 0);
    t[centre] = 1;
    k = make_kernel(name, size, t, 1);
  } else if (name == "sharpen") {
    if (size == 3)
      k = make_kernel(name, 3, {0, -1, 0, -1, 5, -1, 0, -1, 0}, 1);
    else
      k = make_kernel(name, 5,
                      {-1, -1, -1, -1, -1,  //
                       -1, 2,  2,  2,  -1,  //
                       -1, 2,  8,  2,  -1,  //
                       -1, 2,  2,  2,  -1,  //
                       -1, -1, -1, -1, -1},
                      8);
  } else if (name == "edge") {
    if (size == 3)
      k = make_kernel(name, 3, {-1, -1, -1, -1, 8, -1, -1, -1, -1}, 1);
    else
      k = make_kernel(name, 5,
                      {0,  0,  -1, 0,  0,   //
                       0,  -1, -2, -1, 0,   //
                       -1, -2, 16, -2, -1,  //
                       0,  -1, -2, -1, 0,   //
                       0,  0,  -1, 0,  0},
                      1);
  } else if (name == "gaussian") {
    k = size == 3 ? make_kernel(name, 3, outer({1, 2, 1}), 16)
                  : make_kernel(name, 5, outer({1, 4, 6, 4, 1}), 256);
  } else if (name == "box") {
    k = make_kernel(name, size, std::vector<int32_t>(n, 1), n);
  } else if (name == "unsharp") {
    Kernel g;
    PARVIS_TRY(builtin_kernel("gaussian", size, &g));
    std::vector<int32_t> t(n);
    for (int i = 0; i < n; ++i) t[i] = -g.taps[i];
    t[centre] += 2 * g.divisor;
    k = make_kernel(name, size, t, g.divisor);
  } else {
    return Status::usage("unknown kernel '" + name +
                         "' (identity, sharpen, edge, gaussian, box, unsharp)");
  }
  *out = std::move(k);
  return Status::Ok();
}

Status check_kernel(const Kernel& k) {
  if (k.size < 1 || k.size % 2 == 0 || k.size > kMaxKernelSize)
    return Status::bad_input("kernel size must be odd and at most " +
                             std::to_string(kMaxKernelSize) + ", not " + std::to_string(k.size));
  if (k.taps.size() != size_t(k.size) * size_t(k.size))
    return Status::bad_input("kernel has " + std::to_string(k.taps.size()) + " taps, expected " +
                             std::to_string(k.size * k.size));
  if (k.divisor < 1 || k.divisor > kMaxDivisor)
    return Status::bad_input("kernel divisor must be in 1.." + std::to_string(kMaxDivisor) +
                             ", not " + std::to_string(k.divisor));
  int64_t abs_sum = 0;
  for (int32_t t : k.taps) abs_sum += t < 0 ? -int64_t(t) : int64_t(t);
  if (abs_sum * 255 > kMaxKernelSum)
    return Status::bad_input("kernel taps too large: sum of |tap| * 255 must be at most 2^30");
  return Status::Ok();
}

Status parse_kernel_text(const std::string& text, Kernel* out) {
  // Each non-blank, non-comment line is one row of integers; the last one is the divisor.
  std::vector<std::vector<int64_t>> rows;
  std::istringstream lines(text);
  std::string line;
  int line_no = 0;
  while (std::getline(lines, line)) {
    ++line_no;
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::vector<int64_t> row;
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      char* end = nullptr;
      const long long v = std::strtoll(w.c_str(), &end, 10);
      if (*end != '\0' || v < INT32_MIN || v > INT32_MAX)
        return Status::bad_input("line " + std::to_string(line_no) + ": '" + w +
                                 "' is not a 32-bit integer");
      row.push_back(v);
    }
    rows.push_back(row);
  }
  if (rows.size() < 2)
    return Status::bad_input("a kernel file needs rows of taps and then a line with the divisor");
  if (rows.back().size() != 1)
    return Status::bad_input("the last line must hold the divisor alone, it has " +
                             std::to_string(rows.back().size()) + " numbers");
  const size_t size = rows.size() - 1;
  if (size % 2 == 0 || size > size_t(kMaxKernelSize))
    return Status::bad_input("the kernel has " + std::to_string(size) +
                             " rows; it must be square with an odd side of at most " +
                             std::to_string(kMaxKernelSize));
  Kernel k;
  k.name = "custom";
  k.size = int(size);
  for (size_t r = 0; r < size; ++r) {
    if (rows[r].size() != size)
      return Status::bad_input("kernel row " + std::to_string(r + 1) + " has " +
                               std::to_string(rows[r].size()) + " numbers, expected " +
                               std::to_string(size) + " (the kernel must be square)");
    for (int64_t v : rows[r]) k.taps.push_back(int32_t(v));
  }
  k.divisor = int32_t(rows.back()[0]);
  PARVIS_TRY(check_kernel(k));
  *out = std::move(k);
  return Status::Ok();
}

Status parse_border(const std::string& name, Border* out) {
  if (name == "zero") *out = Border::Zero;
  else if (name == "replicate") *out = Border::Replicate;
  else if (name == "reflect101") *out = Border::Reflect101;
  else return Status::usage("unknown border '" + name + "' (zero, replicate, reflect101)");
  return Status::Ok();
}

const char* border_name(Border b) {
  switch (b) {
    case Border::Zero: return "zero";
    case Border::Replicate: return "replicate";
    case Border::Reflect101: return "reflect101";
  }
  return "?";
}

FilterTuning tuning_from_config() {
  FilterTuning t;
  const std::string v = config::tuning_word("filter.variant", "");
  int index = 0;
  if (!v.empty() && find_variant(v, &index).ok()) t.variant = v;
  if (config::tuning_set("filter.sep_async")) t.sep_async = config::tuning_flag("filter.sep_async", true) ? 1 : 0;
  t.sep_rows = int(config::tuning_int("filter.sep_rows", 0));
  return t;
}

Status find_variant(const std::string& name, int* index) {
  const std::vector<std::string> names = variant_names();
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) {
      *index = int(i);
      return Status::Ok();
    }
    list += (i ? ", " : "") + names[i];
  }
  return Status::usage("unknown filter variant '" + name + "' for " + kVersionName + " (" + list + ")");
}

Status filter_create(const Kernel& kernel, Border border, int width, int height, int channels,
                     const FilterTuning& tuning, FilterPtr* out) {
  PARVIS_TRY(check_kernel(kernel));
  int variant = 0;
  if (!tuning.variant.empty()) PARVIS_TRY(find_variant(tuning.variant, &variant));
  return version_create(kernel, border, width, height, channels, tuning, variant, out);
}

Status filter_run(Filter* f, const Image& in, Image* out, Timings* timings) {
  PARVIS_TRY(filter_upload(f, in, timings));
  PARVIS_TRY(filter_compute(f, timings));
  return filter_download(f, out, timings);
}

Status apply(const Image& in, const Kernel& kernel, Border border, const FilterTuning& tuning,
             Image* out, Timings* timings, FilterRun* ran) {
  FilterPtr f;
  PARVIS_TRY(filter_create(kernel, border, in.width, in.height, in.channels, tuning, &f));
  Timings t;
  PARVIS_TRY(filter_run(f.get(), in, out, &t));
  if (ran) *ran = FilterRun{filter_tuning(f.get()), filter_describe(f.get())};
  if (timings) {
    timings->upload_ms = t.upload_ms;
    timings->compute_ms = t.compute_ms;
    timings->download_ms = t.download_ms;
  }
  return Status::Ok();
}

}  // namespace parvis::filter
