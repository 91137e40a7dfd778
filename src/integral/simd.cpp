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
  if (gray.channels != 1) return Status::bad_input("the integral image needs a grey input");
  type = resolve_type(type, gray.width, gray.height, squared);
  PARVIS_TRY(check_type(type, gray.width, gray.height, squared));
  Result r;
  PARVIS_TRY(allocate(type, gray.width, gray.height, &r));
  const double t0 = now_ms();
  if (type == Type::U32) integrate(gray, squared, &r.u32);
  if (type == Type::U64) integrate(gray, squared, &r.u64);
  if (type == Type::F64) integrate(gray, squared, &r.f64);
  r.timings.compute_ms = now_ms() - t0;
  *out = std::move(r);
  return Status::Ok();
}

Status compute_source(const Source& src, Type type, bool squared, bool keep, Result* out) {
  return host_compute_source(src, type, squared, keep, out);
}

}  // namespace parvis::integral
