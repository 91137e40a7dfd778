// Integral image, omp version: the rows cut into one band per OpenMP thread (OMP_NUM_THREADS is
// honoured). Pass 1: each thread sums the columns of its band (the input read once more, an
// eighth of the output's bytes at u64). Then each thread starts its running sums at the row of
// the integral just above its band, the prefix along x of the column sums of the bands above it
// (the carry fix-up, done before the output is written, so the output is written once) and runs the simd version's band kernel (cpu_kernels.hpp) over its rows.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "integral/cpu_kernels.hpp"
#include "integral/integral.hpp"

namespace parvis::integral {

namespace {

template <typename T>
void integrate(const Image& gray, bool squared, Buffer<T>* out) {
  const int w = gray.width, h = gray.height;
  const int threads = std::max(1, std::min(omp_get_max_threads(), h));
  std::vector<Buffer<T>> sums(static_cast<size_t>(threads));
  const bool stream = out->size() * sizeof(T) >= cpu::kStreamBytes;
#pragma omp parallel num_threads(threads)
  {
    const int n = omp_get_num_threads(), t = omp_get_thread_num();
    const int y0 = int(int64_t(h) * t / n), y1 = int(int64_t(h) * (t + 1) / n);
    sums[size_t(t)].assign(size_t(w), T(0));
    if (t + 1 < n) cpu::column_sums(gray, squared, y0, y1, sums[size_t(t)].data());
#pragma omp barrier
    Buffer<T> col(size_t(w), T(0));
    // col[x] = I(y0 - 1, x): the column sums of the bands above, summed along the row.
    T row = 0;
    for (int x = 0; x < w; ++x) {
      for (int b = 0; b < t; ++b) row += sums[size_t(b)][size_t(x)];
      col[size_t(x)] = row;
    }
    cpu::band(gray, squared, y0, y1, col.data(), out->data(), stream);
  }
}

}  // namespace

Status compute(const Image& gray, Type type, bool squared, Result* out) {
  return host_compute(gray, type, squared, out, [&](auto& buf) { integrate(gray, squared, &buf); });
}

Status compute_source(const Source& src, Type type, bool squared, bool keep, Result* out) {
  return host_compute_source(src, type, squared, keep, out);
}

}  // namespace parvis::integral
