// Integral image, simd version: cpu_kernels.hpp's vector band (AVX2 or SSE2, picked at run time;
// scalar off x86) over every row, on one thread.
#include "integral/cpu_kernels.hpp"
#include "integral/integral.hpp"

namespace parvis::integral {

namespace {

template <typename T>
void integrate(const Image& gray, bool squared, Buffer<T>* out) {
  Buffer<T> col(size_t(gray.width), T(0));
  const bool stream = out->size() * sizeof(T) >= cpu::kStreamBytes;
  cpu::band(gray, squared, 0, gray.height, col.data(), out->data(), stream);
}

}  // namespace

Status compute(const Image& gray, Type type, bool squared, Result* out) {
  return host_compute(gray, type, squared, out, [&](auto& buf) { integrate(gray, squared, &buf); });
}

Status compute_source(const Source& src, Type type, bool squared, bool keep, Result* out) {
  return host_compute_source(src, type, squared, keep, out);
}

}  // namespace parvis::integral
