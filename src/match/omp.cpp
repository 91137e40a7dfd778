// Template matching, omp version: the simd version's kernels (simd_kernels.hpp) with the
// result rows spread over OpenMP threads (static schedule; OMP_NUM_THREADS is honoured),
// and the FFT method of cpu_fft.hpp, whose FFTW loops run on the same OpenMP threads.
#include <omp.h>

#include "match/simd_matcher.hpp"

namespace parvis::match {

// Static schedule: each thread takes one contiguous range of rows, in order.
static CpuExec omp_exec() {
  CpuExec e;
  e.workers = omp_get_max_threads();
  e.for_each_fn = [](int n, LoopBody body) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; ++i) body(i, omp_get_thread_num());
  };
  return e;
}

void MatcherDeleter::operator()(Matcher* m) const { delete m; }

Status matcher_create(const Image& gray_template, const Params& params, MatcherPtr* out) {
  return cpu::create(gray_template, params, omp_exec(), out);
}

Status matcher_run(Matcher* m, const Image& gray_source, Result* out) {
  return cpu::run(m, gray_source, omp_exec(), out);
}

}  // namespace parvis::match
