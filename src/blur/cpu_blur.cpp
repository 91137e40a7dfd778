// The simd and omp versions' blur (cpu_blur.hpp): preparation, the scalar twin of the row
// kernel, and the per-ISA compilations of cpu_kernels.inc.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "blur/cpu_blur.hpp"
#include "cpu/simd.hpp"

namespace parvis::blur::cpu {

// What a row kernel reads and writes. The layers are copied into `padded`: R zero rows above
// and below, R zero columns on the left and at least row_taps on the right, so that every
// window row is one run of row_taps readable bytes starting at padded column x (image column
// x - R) and the pixels outside the image read as 0 (left out of the weighted sum; the weight
// comes from the prefix table).
struct Ctx {
  int width = 0, height = 0, layers = 0;
  int radius = 0, side = 0, k = 0;
  int row_taps = 0;  // taps per window row in the tables: side rounded up to 16
  bool split = false;  // k = 16: taps stored as hi (tap >> 1) and lo (tap & 1)
  const int16_t* hi = nullptr;  // 255 sets x side rows x row_taps; centre 0
  const int16_t* lo = nullptr;
  const uint32_t* prefix = nullptr;  // WeightTable
  size_t prefix_set = 0;             // (side + 1)^2
  const uint8_t* padded = nullptr;
  size_t stride = 0, layer_size = 0;  // of a padded row, of a padded layer
  const uint8_t* map = nullptr;
  size_t map_stride = 0;
  uint8_t* const* out = nullptr;  // per layer, rows of `width` bytes
};

namespace {

// The same arithmetic as cpu_kernels.inc in plain loops: off x86, under PARVIS_SIMD=scalar.
void scalar_row(const Ctx& c, int y) {
  const uint8_t* map_row = c.map + size_t(y) * c.map_stride;
  const size_t set_size = size_t(c.side) * size_t(c.row_taps);
  for (int x = 0; x < c.width; ++x) {
    const int v = map_row[x];
    const size_t centre = size_t(y + c.radius) * c.stride + size_t(x + c.radius);
    const uint32_t weight =
        v ? window_weight(c.prefix + size_t(v - 1) * c.prefix_set, c.radius, x, y, c.width, c.height) : 0;
    for (int l = 0; l < c.layers; ++l) {
      const uint8_t* src = c.padded + size_t(l) * c.layer_size;
      uint8_t* dst = c.out[l] + size_t(y) * size_t(c.width) + size_t(x);
      if (v == 0) {
        *dst = src[centre];
        continue;
      }
      uint32_t sum = 0, sum_lo = 0;
      for (int dy = 0; dy < c.side; ++dy) {
        const uint8_t* row = src + size_t(y + dy) * c.stride + size_t(x);
        const size_t t = size_t(v - 1) * set_size + size_t(dy) * size_t(c.row_taps);
        for (int dx = 0; dx < c.side; ++dx) {
          sum += uint32_t(c.hi[t + size_t(dx)]) * row[dx];
          if (c.split) sum_lo += uint32_t(c.lo[t + size_t(dx)]) * row[dx];
        }
      }
      if (c.split) sum = 2 * sum + sum_lo;
      *dst = divide_round(sum + (uint32_t(src[centre]) << c.k), weight);
    }
  }
}

}  // namespace

#if PARVIS_SIMD_X86
namespace sse2 {
using Ops = simd::sse2::Ops;
#include "blur/cpu_kernels.inc"
}  // namespace sse2
}  // namespace parvis::blur::cpu
PARVIS_AVX2_BEGIN
namespace parvis::blur::cpu::avx2 {
using Ops = simd::avx2::Ops;
#include "blur/cpu_kernels.inc"
}  // namespace parvis::blur::cpu::avx2
PARVIS_AVX2_END
namespace parvis::blur::cpu {
#endif

}  // namespace parvis::blur::cpu

namespace parvis::blur {
Status measure_peak(PeakRates*) { return Status::not_implemented("the peak-rate measurement"); }
}  // namespace parvis::blur

namespace parvis::blur::cpu {

Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings, const RowRunner& run_rows) {
  PARVIS_TRY(check_apply_inputs(layers, map, taps));
  const double t0 = now_ms();
  Ctx c;
  c.width = map.width;
  c.height = map.height;
  c.layers = int(layers.size());
  c.radius = taps.radius;
  c.side = taps.side;
  c.k = taps.k;
  c.row_taps = (c.side + 15) / 16 * 16;
  c.split = taps.k == 16;

  // Tap rows: every tap but the centre (blur.hpp: all < 2^k), as int16 (hi, and lo when split).
  const size_t set_size = size_t(c.side) * size_t(c.row_taps);
  std::vector<int16_t> hi(255 * set_size, 0), lo(c.split ? 255 * set_size : 0, 0);
  for (int v = 1; v <= 255; ++v)
    for (int dy = 0; dy < c.side; ++dy)
      for (int dx = 0; dx < c.side; ++dx) {
        if (dx == c.radius && dy == c.radius) continue;
        const int32_t t = taps.set(v)[dy * c.side + dx];
        if (t < 0 || t >= (int32_t(1) << c.k)) return Status::runtime("blur: a tap outside [0, 2^k)");
        const size_t i = size_t(v - 1) * set_size + size_t(dy) * size_t(c.row_taps) + size_t(dx);
        hi[i] = int16_t(c.split ? t >> 1 : t);
        if (c.split) lo[i] = int16_t(t & 1);
      }
  c.hi = hi.data();
  c.lo = c.split ? lo.data() : nullptr;
  WeightTable weights;
  make_weight_table(taps, &weights);
  c.prefix = weights.prefix.data();
  c.prefix_set = size_t(c.side + 1) * size_t(c.side + 1);

  // Zero-margined copies of the layers.
  c.stride = (size_t(c.width) + size_t(c.radius) + size_t(c.row_taps) + 15) / 16 * 16;
  c.layer_size = c.stride * size_t(c.height + 2 * c.radius);
  std::vector<uint8_t> padded;
  try {
    padded.assign(c.layer_size * layers.size(), 0);
  } catch (const std::bad_alloc&) {
    return Status::runtime("out of memory for the padded layers");
  }
  for (size_t l = 0; l < layers.size(); ++l)
    for (int y = 0; y < c.height; ++y)
      std::memcpy(padded.data() + l * c.layer_size + size_t(y + c.radius) * c.stride + size_t(c.radius),
                  layers[l].row(y), size_t(c.width));
  c.padded = padded.data();
  c.map = map.data();
  c.map_stride = map.stride;

  std::vector<Image> results(layers.size());
  std::vector<uint8_t*> out_rows(layers.size());
  for (size_t l = 0; l < layers.size(); ++l) {
    PARVIS_TRY(image_alloc(c.width, c.height, 1, &results[l]));
    out_rows[l] = results[l].data();
  }
  c.out = out_rows.data();

  void (*row)(const Ctx&, int) = scalar_row;
#if PARVIS_SIMD_X86
  switch (simd::best_isa()) {
    case simd::Isa::Avx2: row = avx2::blur_row; break;
    case simd::Isa::Sse2: row = sse2::blur_row; break;
    case simd::Isa::Scalar: break;
  }
#endif
  run_rows(c.height, [&](int y) { row(c, y); });
  *out = std::move(results);
  if (timings) timings->compute_ms = now_ms() - t0;
  return Status::Ok();
}

}  // namespace parvis::blur::cpu
