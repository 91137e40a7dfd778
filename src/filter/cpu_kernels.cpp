// The simd/omp filter's plan and row engine (cpu_kernels.hpp); the vector kernels are
// simd_kernels.inc, compiled here once for SSE2 and once for AVX2.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "filter/cpu_kernels.hpp"

namespace parvis::filter::cpu {
#if PARVIS_SIMD_X86
namespace sse2 {
using Ops = simd::sse2::Ops;
#include "filter/simd_kernels.inc"
}  // namespace sse2
#endif
}  // namespace parvis::filter::cpu

#if PARVIS_SIMD_X86
PARVIS_AVX2_BEGIN
namespace parvis::filter::cpu::avx2 {
using Ops = simd::avx2::Ops;
#include "filter/simd_kernels.inc"
}  // namespace parvis::filter::cpu::avx2
PARVIS_AVX2_END
#endif

namespace parvis::filter::cpu {

const std::vector<std::string>& vector_variant_names() {
  static const std::vector<std::string> names = {"auto", "2d", "generic", "sse2", "scalar"};
  return names;
}

namespace {

constexpr int kSlack = 64;  // values read past a padded row by the widest step (2 x 16 lanes)
// Outputs larger than this are written with non-temporal stores (they would not stay cached).
constexpr size_t kStreamBytes = size_t(8) << 20;

// Taps grouped by value, groups of at most `max_group` taps, in a fixed order.
void group_taps(const std::vector<TapRef>& taps, int max_group, std::vector<TapRef>* out,
                std::vector<TapGroup>* groups) {
  std::map<int32_t, std::vector<TapRef>> by_value;
  for (const TapRef& t : taps)
    if (t.value != 0) by_value[t.value].push_back(t);
  out->clear();
  groups->clear();
  for (auto& [value, list] : by_value)
    for (size_t first = 0; first < list.size(); first += size_t(max_group)) {
      const size_t count = std::min(list.size() - first, size_t(max_group));
      groups->push_back(TapGroup{value, int(out->size()), int(count)});
      out->insert(out->end(), list.begin() + std::ptrdiff_t(first),
                  list.begin() + std::ptrdiff_t(first + count));
    }
}

// The 16-bit finish for sums in [lo, hi], or false when 16 bits cannot hold it exactly.
bool make_finish16(int64_t lo, int64_t hi, int32_t d, Finish16* f) {
  if (hi - lo > 65535 || hi + d / 2 > 65535) return false;
  f->min_mod = uint16_t(lo & 0xFFFF);
  f->offset = int32_t(lo + d / 2);
  f->divide = d != 1;
  f->magic = 0;
  f->shift = 0;
  if (f->divide) {
    Divider div;
    if (!make_divider(d, std::max<int64_t>(hi + d / 2, 0), 16, &div)) return false;
    f->magic = uint16_t(div.magic);
    f->shift = div.shift;
  }
  return true;
}

// Symmetric under the 8 mirrors and rotations of the square: tap(y, x) = tap(x, y) =
// tap(K-1-y, x).
bool d4_symmetric(const Kernel& k) {
  const int n = k.size;
  auto tap = [&](int y, int x) { return k.taps[size_t(y) * n + x]; };
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x)
      if (tap(y, x) != tap(x, y) || tap(y, x) != tap(n - 1 - y, x)) return false;
  return true;
}

bool symmetric(const std::vector<int32_t>& v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != v[v.size() - 1 - i]) return false;
  return true;
}

bool fits_i16(int32_t t) { return t >= -32768 && t <= 32767; }

}  // namespace

Plan make_plan(const Kernel& kernel, Border border, int width, int height, int channels,
               int variant) {
  Plan p;
  p.width = width;
  p.height = height;
  p.channels = channels;
  p.size = kernel.size;
  p.radius = kernel.size / 2;
  p.border = border;
  p.divisor = kernel.divisor;
  p.variant = variant;
  p.stream = size_t(width) * size_t(height) * size_t(channels) >= kStreamBytes;
  const std::string& name = vector_variant_names()[size_t(variant)];
  p.isa = name == "scalar" ? simd::Isa::Scalar : simd::best_isa();
  if (name == "sse2" && p.isa == simd::Isa::Avx2) p.isa = simd::Isa::Sse2;

  std::vector<TapRef> all;
  for (int ky = 0; ky < p.size; ++ky)
    for (int kx = 0; kx < p.size; ++kx)
      all.push_back(TapRef{ky, (kx - p.radius) * channels, kernel.taps[size_t(ky) * p.size + kx]});
  int64_t lo = 0, hi = 0;
  sum_range(kernel, &lo, &hi);
  bool all_i16 = true;
  for (int32_t t : kernel.taps) all_i16 = all_i16 && fits_i16(t);
  const bool shape = name != "generic" && (p.size == 3 || p.size == 5) &&
                     (channels == 1 || channels == 3) && all_i16;
  const bool d4 = shape && d4_symmetric(kernel);
  if (d4)
    for (int b = 0; b <= p.radius; ++b)
      for (int a = 0; a <= b; ++a)
        p.d4_taps[b * (b + 1) / 2 + a] = int16_t(kernel.taps[size_t(p.radius + a) * p.size + p.radius + b]);
  const int32_t d = kernel.divisor;
  const bool d_pow2 = (d & (d - 1)) == 0;

  std::vector<int32_t> col, row;
  if (p.isa != simd::Isa::Scalar && make_finish16(lo, hi, d, &p.f16)) {
    if (name != "2d" && separate(kernel, &col, &row)) {
      p.path = Path::Sep16;
      p.fixed = shape && symmetric(col) && symmetric(row) && fits_i16(col[size_t(p.radius)]) &&
                fits_i16(row[size_t(p.radius)]);
      for (int d = 0; d <= p.radius && p.fixed; ++d) {
        p.fixed = fits_i16(col[size_t(p.radius + d)]) && fits_i16(row[size_t(p.radius + d)]);
        p.vtap[d] = int16_t(col[size_t(p.radius + d)]);
        p.htap[d] = int16_t(row[size_t(p.radius + d)]);
      }
      std::vector<TapRef> v, h;
      for (int k = 0; k < p.size; ++k) {
        v.push_back(TapRef{k, 0, col[size_t(k)]});
        h.push_back(TapRef{0, (k - p.radius) * channels, row[size_t(k)]});
      }
      group_taps(v, 1 << 20, &p.vtaps, &p.vgroups);
      group_taps(h, 1 << 20, &p.htaps, &p.hgroups);
    } else {
      p.path = Path::Vec16;
      p.fixed = d4;
      group_taps(all, 1 << 20, &p.taps, &p.groups);
    }
  } else if (p.isa != simd::Isa::Scalar && all_i16 && (d_pow2 || d < 65536)) {
    p.path = Path::Vec32;
    p.fixed = d4;
    group_taps(all, 128, &p.taps, &p.groups);
    p.f32.half = d / 2;
    p.f32.pow2_shift = -1;
    if (d_pow2) {
      p.f32.pow2_shift = 0;
      while ((int32_t(1) << p.f32.pow2_shift) != d) ++p.f32.pow2_shift;
    }
    p.f32.divisor = float(d);
    p.f32.t_max = 256.0f * float(d);
  } else {
    p.path = Path::Scalar;
    group_taps(all, 1 << 20, &p.taps, &p.groups);
  }
  return p;
}

std::string describe(const Plan& p) {
  const std::string& variant = vector_variant_names()[size_t(p.variant)];
  const char* path = p.path == Path::Vec16 ? "vec16" : p.path == Path::Sep16 ? "sep16"
                     : p.path == Path::Vec32 ? "vec32" : "scalar";
  return variant + ": " + path + (p.fixed ? "-k" + std::to_string(p.size) : std::string()) +
         (p.path == Path::Scalar ? "" : std::string("/") + simd::isa_name(p.isa));
}

namespace {

// Source rows copied once into buffers of margin + W*C + margin + slack u16 values (widened once
// here, not once per tap: the kernels then load u16 lanes as they are), the border applied to the
// margins (R pixels a side); a zero row stands for rows outside under the zero border.
// Holds K rows: a window never needs more distinct ones.
class RowCache {
 public:
  RowCache(const Plan& p, const Image& in)
      : p_(p), in_(in), margin_(p.radius * p.channels),
        len_(p.width * p.channels + 2 * margin_ + kSlack),
        store_(size_t(len_) * size_t(p.size) + size_t(len_), 0),
        tag_(size_t(p.size), -1), stamp_(size_t(p.size), -1) {}

  int margin() const { return margin_; }

  // rows[ky] = the first data value of source row y + ky - R (border applied).
  void window(int y, const uint16_t** rows) {
    const int k = p_.size;
    std::vector<int>& src = scratch_;
    src.assign(size_t(k), -1);
    for (int ky = 0; ky < k; ++ky) {
      src[size_t(ky)] = border_index(y + ky - p_.radius, p_.height, p_.border);
      rows[ky] = nullptr;
      if (src[size_t(ky)] < 0) {
        rows[ky] = zero_row() + margin_;
        continue;
      }
      for (int s = 0; s < k; ++s)
        if (tag_[size_t(s)] == src[size_t(ky)]) {
          stamp_[size_t(s)] = y;
          rows[ky] = slot(s) + margin_;
        }
    }
    for (int ky = 0; ky < k; ++ky) {
      if (rows[ky]) continue;
      int s = 0;
      while (stamp_[size_t(s)] == y) ++s;  // a slot this window does not use (K slots suffice)
      fill(s, src[size_t(ky)]);
      stamp_[size_t(s)] = y;
      for (int other = ky; other < k; ++other)
        if (!rows[other] && src[size_t(other)] == src[size_t(ky)]) rows[other] = slot(s) + margin_;
    }
  }

 private:
  uint16_t* slot(int s) { return store_.data() + size_t(s) * size_t(len_); }
  uint16_t* zero_row() { return store_.data() + size_t(p_.size) * size_t(len_); }
  void fill(int s, int sy) {
    tag_[size_t(s)] = sy;
    uint16_t* dst = slot(s);
    const uint8_t* src = in_.row(sy);
    const int c = p_.channels, w = p_.width;
    uint16_t* data = dst + margin_;
    for (int j = 0; j < w * c; ++j) data[j] = src[j];
    for (int j = 1; j <= p_.radius; ++j) {
      const int left = border_index(-j, w, p_.border), right = border_index(w - 1 + j, w, p_.border);
      for (int ch = 0; ch < c; ++ch) {
        dst[margin_ - j * c + ch] = left < 0 ? 0 : src[size_t(left) * c + ch];
        dst[margin_ + (w - 1 + j) * c + ch] = right < 0 ? 0 : src[size_t(right) * c + ch];
      }
    }
  }
  const Plan& p_;
  const Image& in_;
  int margin_, len_;
  std::vector<uint16_t> store_;
  std::vector<int> tag_, stamp_, scratch_;
};

void scalar_row(const Plan& p, const uint16_t* const* ptrs, uint8_t* out, int n) {
  const size_t taps = p.taps.size();
  for (int i = 0; i < n; ++i) {
    int32_t sum = 0;  // exact: check_kernel bounds |sum| by 2^30
    for (size_t t = 0; t < taps; ++t) sum += p.taps[t].value * ptrs[t][i];
    out[i] = round_clamp(sum, p.divisor);
  }
}

}  // namespace

void convolve_rows(const Plan& p, const Image& in, Image* out, int y0, int y1) {
  if (y0 >= y1) return;
  RowCache cache(p, in);
  const int n = p.width * p.channels, margin = cache.margin();
  std::vector<const uint16_t*> rows(size_t(p.size)), prows(size_t(p.size)), ptrs(p.taps.size()),
      vrows(p.vtaps.size());
  std::vector<uint16_t> vtile;
  if (p.path == Path::Sep16) vtile.assign(size_t(kSepTile + 2 * margin + kSlack), 0);
  const bool avx2 = p.isa == simd::Isa::Avx2;
  (void)avx2;
  for (int y = y0; y < y1; ++y) {
    cache.window(y, rows.data());
    uint8_t* dst = out->row(y);
    for (size_t t = 0; t < p.taps.size(); ++t) ptrs[t] = rows[size_t(p.taps[t].row)] + p.taps[t].offset;
    switch (p.path) {
      case Path::Scalar:
        scalar_row(p, ptrs.data(), dst, n);
        break;
#if PARVIS_SIMD_X86
      case Path::Vec16:
        if (p.fixed)
          (avx2 ? avx2::pick_shape<avx2::PickD4Row16>(p.size, p.channels)
                : sse2::pick_shape<sse2::PickD4Row16>(p.size, p.channels))(rows.data(), p.d4_taps, p.f16, dst, n, p.stream);
        else if (avx2) avx2::row16(p.groups.data(), int(p.groups.size()), ptrs.data(), p.f16, dst, n, p.stream);
        else sse2::row16(p.groups.data(), int(p.groups.size()), ptrs.data(), p.f16, dst, n, p.stream);
        break;
      case Path::Vec32:
        if (p.fixed)
          (avx2 ? avx2::pick_shape<avx2::PickD4Row32>(p.size, p.channels)
                : sse2::pick_shape<sse2::PickD4Row32>(p.size, p.channels))(rows.data(), p.d4_taps, p.f32, dst, n, p.stream);
        else if (avx2) avx2::row32(p.groups.data(), int(p.groups.size()), ptrs.data(), p.f32, dst, n, p.stream);
        else sse2::row32(p.groups.data(), int(p.groups.size()), ptrs.data(), p.f32, dst, n, p.stream);
        break;
      case Path::Sep16: {
        // The vertical pass covers the margins too: they hold the border's pixels already.
        if (p.fixed) {
          for (int ky = 0; ky < p.size; ++ky) prows[size_t(ky)] = rows[size_t(ky)] - margin;
          (avx2 ? avx2::pick_shape<avx2::PickSymSep16>(p.size, p.channels)
                : sse2::pick_shape<sse2::PickSymSep16>(p.size, p.channels))(
              prows.data(), p.vtap, p.htap, p.f16, margin, vtile.data(), dst, n, p.stream);
          break;
        }
        for (size_t t = 0; t < p.vtaps.size(); ++t) vrows[t] = rows[size_t(p.vtaps[t].row)] - margin;
        auto* sep = avx2 ? &avx2::sep_row16 : &sse2::sep_row16;
        sep(p.vgroups.data(), int(p.vgroups.size()), vrows.data(), int(vrows.size()),
            p.hgroups.data(), int(p.hgroups.size()), p.htaps.data(), int(p.htaps.size()), p.f16,
            margin, vtile.data(), dst, n, p.stream);
        break;
      }
#else
      default:
        break;  // make_plan chooses Scalar without x86
#endif
    }
  }
#if PARVIS_SIMD_X86
  if (p.stream) _mm_sfence();
#endif
}

}  // namespace parvis::filter::cpu
