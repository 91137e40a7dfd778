// parvis-compare: compares outputs where bit-identity is not the contract.
//   parvis-compare npy-close SEQ.npy OTHER.npy REL
//     same dtype and shape; every |a - b| <= REL * max|a| (FFT score maps: DESIGN.md lets
//     them differ from the exact map by rounding, within the documented bound).
//   parvis-compare image-close SEQ OTHER MAXDIFF MAXFRACTION
//     same size and channels; every sample within MAXDIFF of seq's, and at most
//     ceil(MAXFRACTION x samples) of them different at all (blur-v1/v2: DESIGN.md "Blur
//     map" allows +-1 from rounding). Says how many samples differ either way.
// Exit 0 when close, 1 otherwise (one line saying where and by how much), 2 on bad input.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/npy.hpp"
#include "image_io.hpp"

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

static int image_close(const char* seq_path, const char* other_path, int max_diff, double max_fraction) {
  Image a, b;
  Status s = image_read(seq_path, &a);
  if (s.ok()) s = image_read(other_path, &b);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.message.c_str());
    return 2;
  }
  if (a.width != b.width || a.height != b.height || a.channels != b.channels) {
    std::printf("size or channels differ\n");
    return 1;
  }
  uint64_t differ = 0, total = 0;
  int worst = 0, worst_x = 0, worst_y = 0;
  for (int y = 0; y < a.height; ++y)
    for (int x = 0; x < a.width; ++x)
      for (int c = 0; c < a.channels; ++c, ++total) {
        const int d = std::abs(int(a.at(x, y)[c]) - int(b.at(x, y)[c]));
        differ += d != 0;
        if (d > worst) worst = d, worst_x = x, worst_y = y;
      }
  const double fraction = total ? double(differ) / double(total) : 0.0;
  // At least one sample may differ: on a 2x3 image a single +-1 is 1/6 of it.
  const bool ok = worst <= max_diff && double(differ) <= std::ceil(max_fraction * double(total));
  std::printf("%s: %llu of %llu samples differ (%.4f %%), max |diff| %d%s (allowed %d on %g %%)\n",
              ok ? "close" : "NOT close", (unsigned long long)differ, (unsigned long long)total,
              100 * fraction, worst,
              worst ? (" at x " + std::to_string(worst_x) + " y " + std::to_string(worst_y)).c_str() : "",
              max_diff, 100 * max_fraction);
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 6 && std::strcmp(argv[1], "image-close") == 0)
    return image_close(argv[2], argv[3], std::atoi(argv[4]), std::atof(argv[5]));
  if (argc != 5 || std::strcmp(argv[1], "npy-close") != 0) {
    std::fprintf(stderr,
                 "usage: parvis-compare npy-close SEQ.npy OTHER.npy REL\n"
                 "       parvis-compare image-close SEQ OTHER MAXDIFF MAXFRACTION\n");
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
