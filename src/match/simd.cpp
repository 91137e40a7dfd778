// Template matching, simd version: the vector kernels of simd_kernels.hpp (AVX2 or SSE2,
// picked at run time; scalar off x86) on one thread, and the FFT method of cpu_fft.hpp.
#include "match/simd_matcher.hpp"

namespace parvis::match {

void MatcherDeleter::operator()(Matcher* m) const { delete m; }

Status matcher_create(const Image& gray_template, const Params& params, MatcherPtr* out) {
  return cpu::create(gray_template, params, serial_exec(), out);
}

Status matcher_run(Matcher* m, const Image& gray_source, Result* out) {
  return cpu::run(m, gray_source, serial_exec(), out);
}

}  // namespace parvis::match
