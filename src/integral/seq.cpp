// Integral image, the reference (seed 004, formula 1): row by row, the running sum of the
// row plus the element above, which equals px + I(y-1,x) + I(y,x-1) - I(y-1,x-1).
// Inclusive, same size as the input. Plain loops, in the output type itself (exact:
// check_type guarantees no element exceeds it).
#include <string>

#include "integral/integral.hpp"

namespace parvis::integral {

namespace {

template <typename T>
void integrate(const Image& gray, bool squared, Buffer<T>* out) {
  const int w = gray.width;
  for (int y = 0; y < gray.height; ++y) {
    const uint8_t* px = gray.row(y);
    T* row = out->data() + size_t(y) * w;
    const T* above = y > 0 ? row - w : nullptr;
    T row_sum = 0;
    for (int x = 0; x < w; ++x) {
      row_sum += squared ? T(uint32_t(px[x]) * px[x]) : T(px[x]);
      row[x] = above ? above[x] + row_sum : row_sum;
    }
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
