// parvis-compare: compares outputs where bit-identity is not the contract.
//   parvis-compare npy-close SEQ.npy OTHER.npy REL
//     same dtype and shape; every |a - b| <= REL * max|a| (FFT score maps: DESIGN.md lets
//     them differ from the exact map by rounding, within the documented bound).
// Exit 0 when close, 1 otherwise (one line saying where and by how much), 2 on bad input.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/npy.hpp"

using namespace parvis;

static double element(const NpyArray& a, size_t i) {
  const uint8_t* p = a.bytes.data() + i * dtype_size(a.dtype);
  switch (a.dtype) {
    case DType::U8: return *p;
    case DType::U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::U64: { uint64_t v; std::memcpy(&v, p, 8); return double(v); }
    case DType::F32: { float v; std::memcpy(&v, p, 4); return v; }
    case DType::F64: { double v; std::memcpy(&v, p, 8); return v; }
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 5 || std::strcmp(argv[1], "npy-close") != 0) {
    std::fprintf(stderr, "usage: parvis-compare npy-close SEQ.npy OTHER.npy REL\n");
    return 2;
  }
  NpyArray a, b;
  Status s = npy_read(argv[2], &a);
  if (s.ok()) s = npy_read(argv[3], &b);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.message.c_str());
    return 2;
  }
  const double rel = std::atof(argv[4]);
  if (a.dtype != b.dtype || a.shape != b.shape) {
    std::printf("dtype or shape differs\n");
    return 1;
  }
  const size_t n = a.count();
  double scale = 0, worst = 0;
  size_t worst_i = 0;
  for (size_t i = 0; i < n; ++i) scale = std::fmax(scale, std::fabs(element(a, i)));
  for (size_t i = 0; i < n; ++i) {
    const double d = std::fabs(element(a, i) - element(b, i));
    if (!(d <= worst)) worst = d, worst_i = i;  // also catches NaN
  }
  const bool ok = worst <= rel * scale;
  std::printf("%s: max |diff| %.6g at element %zu, %.3g of max|seq| %.6g (allowed %g)\n",
              ok ? "close" : "NOT close", worst, worst_i, scale > 0 ? worst / scale : 0.0, scale, rel);
  return ok ? 0 : 1;
}
