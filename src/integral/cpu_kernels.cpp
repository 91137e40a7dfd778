// The integral's CPU kernels for the simd and omp versions: simd_kernels.inc compiled for SSE2
// and for AVX2 (chosen at run time, cpu/simd.hpp), a scalar path elsewhere. IOps adds to
// simd.hpp's Ops what a scan needs: u16 -> u32 and u32 -> u64 / f64 widening in lane order, the
// in-register prefix sum of u32 lanes, broadcasts of the last lane, and f64 vectors.
#include <cstdint>
#include <type_traits>

#include "cpu/simd.hpp"
#include "integral/cpu_kernels.hpp"

namespace parvis::integral::cpu {

namespace scalar {

template <typename T>
void band_rows(const Image& gray, bool squared, int y0, int y1, T* col, T* out) {
  const int w = gray.width;
  for (int y = y0; y < y1; ++y) {
    const uint8_t* px = gray.row(y);
    T* o = out + size_t(y) * size_t(w);
    T carry = 0;
    for (int x = 0; x < w; ++x) {
      carry += squared ? T(uint32_t(px[x]) * px[x]) : T(px[x]);
      col[x] += carry;
      o[x] = col[x];
    }
  }
}

template <typename T>
void column_sums(const Image& gray, bool squared, int y0, int y1, T* sums) {
  for (int y = y0; y < y1; ++y) {
    const uint8_t* px = gray.row(y);
    for (int x = 0; x < gray.width; ++x) sums[x] += squared ? T(uint32_t(px[x]) * px[x]) : T(px[x]);
  }
}

}  // namespace scalar

#if PARVIS_SIMD_X86
namespace sse2 {
struct IOps : simd::sse2::Ops {
  using D = __m128d;
  static inline void widen16_32(V v, V* lo, V* hi) {
    *lo = _mm_unpacklo_epi16(v, _mm_setzero_si128());
    *hi = _mm_unpackhi_epi16(v, _mm_setzero_si128());
  }
  static inline V prefix32(V v) {
    v = _mm_add_epi32(v, _mm_slli_si128(v, 4));
    return _mm_add_epi32(v, _mm_slli_si128(v, 8));
  }
  static inline V bcast_last32(V v) { return _mm_shuffle_epi32(v, 0xFF); }
  static inline uint32_t last32(V v) { return uint32_t(_mm_cvtsi128_si32(v)); }
  static inline V set1_64(uint64_t x) { return _mm_set1_epi64x(int64_t(x)); }
  static inline V widen32_64_lo(V v) { return _mm_unpacklo_epi32(v, _mm_setzero_si128()); }
  static inline V widen32_64_hi(V v) { return _mm_unpackhi_epi32(v, _mm_setzero_si128()); }
  static inline V bcast_last64(V v) { return _mm_unpackhi_epi64(v, v); }
  static inline uint64_t last64(V v) { return uint64_t(_mm_cvtsi128_si64(v)); }
  static inline D cvt_lo_f64(V v) { return _mm_cvtepi32_pd(v); }
  static inline D cvt_hi_f64(V v) { return _mm_cvtepi32_pd(_mm_srli_si128(v, 8)); }
  static inline D set1d(double x) { return _mm_set1_pd(x); }
  static inline D addd(D a, D b) { return _mm_add_pd(a, b); }
  static inline D loadd(const double* p) { return _mm_loadu_pd(p); }
  static inline void stored(double* p, D v) { _mm_storeu_pd(p, v); }
  static inline void streamd(double* p, D v) { _mm_stream_pd(p, v); }
  static inline D bcast_lastd(D v) { return _mm_unpackhi_pd(v, v); }
  static inline double lastd(D v) { return _mm_cvtsd_f64(v); }
};
#include "integral/simd_kernels.inc"
}  // namespace sse2
#endif

}  // namespace parvis::integral::cpu

#if PARVIS_SIMD_X86
PARVIS_AVX2_BEGIN
namespace parvis::integral::cpu::avx2 {
struct IOps : simd::avx2::Ops {
  using D = __m256d;
  static inline void widen16_32(V v, V* lo, V* hi) {
    *lo = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(v));
    *hi = _mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1));
  }
  static inline V prefix32(V v) {  // within each 128-bit half, then the low half's sum upwards
    v = _mm256_add_epi32(v, _mm256_slli_si256(v, 4));
    v = _mm256_add_epi32(v, _mm256_slli_si256(v, 8));
    const V low_total = _mm256_shuffle_epi32(v, 0xFF);
    return _mm256_add_epi32(v, _mm256_permute2x128_si256(low_total, low_total, 0x08));
  }
  static inline V bcast_last32(V v) { return _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(7)); }
  static inline uint32_t last32(V v) { return uint32_t(_mm256_cvtsi256_si32(v)); }
  static inline V set1_64(uint64_t x) { return _mm256_set1_epi64x(int64_t(x)); }
  static inline V widen32_64_lo(V v) { return _mm256_cvtepu32_epi64(_mm256_castsi256_si128(v)); }
  static inline V widen32_64_hi(V v) { return _mm256_cvtepu32_epi64(_mm256_extracti128_si256(v, 1)); }
  static inline V bcast_last64(V v) { return _mm256_permute4x64_epi64(v, 0xFF); }
  static inline uint64_t last64(V v) { return uint64_t(_mm_cvtsi128_si64(_mm256_castsi256_si128(v))); }
  static inline D cvt_lo_f64(V v) { return _mm256_cvtepi32_pd(_mm256_castsi256_si128(v)); }
  static inline D cvt_hi_f64(V v) { return _mm256_cvtepi32_pd(_mm256_extracti128_si256(v, 1)); }
  static inline D set1d(double x) { return _mm256_set1_pd(x); }
  static inline D addd(D a, D b) { return _mm256_add_pd(a, b); }
  static inline D loadd(const double* p) { return _mm256_loadu_pd(p); }
  static inline void stored(double* p, D v) { _mm256_storeu_pd(p, v); }
  static inline void streamd(double* p, D v) { _mm256_stream_pd(p, v); }
  static inline D bcast_lastd(D v) { return _mm256_permute4x64_pd(v, 0xFF); }
  static inline double lastd(D v) { return _mm256_cvtsd_f64(v); }
};
#include "integral/simd_kernels.inc"
}  // namespace parvis::integral::cpu::avx2
PARVIS_AVX2_END
#endif

namespace parvis::integral::cpu {

const char* isa() { return simd::isa_name(simd::best_isa()); }

template <typename T>
void band(const Image& gray, bool squared, int y0, int y1, T* col, T* out, bool stream) {
#if PARVIS_SIMD_X86
  switch (simd::best_isa()) {
    case simd::Isa::Avx2:
      return stream ? avx2::band_rows<T, true>(gray, squared, y0, y1, col, out)
                    : avx2::band_rows<T, false>(gray, squared, y0, y1, col, out);
    case simd::Isa::Sse2:
      return stream ? sse2::band_rows<T, true>(gray, squared, y0, y1, col, out)
                    : sse2::band_rows<T, false>(gray, squared, y0, y1, col, out);
    case simd::Isa::Scalar: break;
  }
#else
  (void)stream;
#endif
  scalar::band_rows(gray, squared, y0, y1, col, out);
}

template <typename T>
void column_sums(const Image& gray, bool squared, int y0, int y1, T* sums) {
#if PARVIS_SIMD_X86
  switch (simd::best_isa()) {
    case simd::Isa::Avx2: return avx2::column_sums(gray, squared, y0, y1, sums);
    case simd::Isa::Sse2: return sse2::column_sums(gray, squared, y0, y1, sums);
    case simd::Isa::Scalar: break;
  }
#endif
  scalar::column_sums(gray, squared, y0, y1, sums);
}

#define PARVIS_INTEGRAL_INSTANTIATE(T)                                                   \
  template void band<T>(const Image&, bool, int, int, T*, T*, bool);                    \
  template void column_sums<T>(const Image&, bool, int, int, T*);
PARVIS_INTEGRAL_INSTANTIATE(uint32_t)
PARVIS_INTEGRAL_INSTANTIATE(uint64_t)
PARVIS_INTEGRAL_INSTANTIATE(double)

}  // namespace parvis::integral::cpu
