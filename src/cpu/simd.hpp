// SIMD for the simd and omp versions: each kernel is written ONCE, as a template over an ISA
// "ops" struct, and compiled once per instruction set. Run-time dispatch picks the widest the
// CPU has; PARVIS_SIMD=sse2 or =scalar (common/config.hpp) caps it, so tests and benchmarks can
// run the narrower paths on an AVX2 machine.
//
// How (no special compiler flags, g++ and clang++ alike): the kernel templates live in a file
// without include guards, included by a version file twice — once inside namespace `sse2`, once
// inside namespace `avx2` between PARVIS_AVX2_BEGIN / PARVIS_AVX2_END, which give every function
// defined there (the ops and the kernels) target("avx2"). Standard headers must be included
// before the first region, so that nothing from them is compiled for AVX2 and picked by the
// linker for the SSE2 path.
//
//   // src/<op>/simd_kernels.inc  (no #pragma once)
//   template <class Ops> void blur_row(...) { auto v = Ops::load(p); ... }
//
//   // src/<op>/cpu_kernels.cpp
//   #include <vector>                      // every standard header first
//   #include "cpu/simd.hpp"
//   namespace parvis::op::sse2 {
//   using Ops = simd::sse2::Ops;
//   #include "op/simd_kernels.inc"
//   }
//   PARVIS_AVX2_BEGIN
//   namespace parvis::op::avx2 {
//   using Ops = simd::avx2::Ops;
//   #include "op/simd_kernels.inc"
//   }
//   PARVIS_AVX2_END
//
// The ops below are the common ground (integer lanes, what the exact integer kernels of the
// ladders need); an operation may define more in its own .inc, inside the same regions.
#pragma once
#include <cstdint>
#include <cstring>

#include "common/config.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PARVIS_SIMD_X86 1
#else
#define PARVIS_SIMD_X86 0
#endif

#define PARVIS_SIMD_PRAGMA(x) _Pragma(#x)
#if PARVIS_SIMD_X86 && defined(__clang__)
#define PARVIS_AVX2_BEGIN \
  PARVIS_SIMD_PRAGMA(clang attribute push(__attribute__((target("avx2,bmi,bmi2,popcnt"))), apply_to = function))
#define PARVIS_AVX2_END PARVIS_SIMD_PRAGMA(clang attribute pop)
#elif PARVIS_SIMD_X86
#define PARVIS_AVX2_BEGIN PARVIS_SIMD_PRAGMA(GCC push_options) PARVIS_SIMD_PRAGMA(GCC target("avx2,bmi,bmi2,popcnt"))
#define PARVIS_AVX2_END PARVIS_SIMD_PRAGMA(GCC pop_options)
#else
#define PARVIS_AVX2_BEGIN
#define PARVIS_AVX2_END
#endif

namespace parvis::simd {

enum class Isa { Scalar, Sse2, Avx2 };

inline const char* isa_name(Isa isa) {
  return isa == Isa::Avx2 ? "avx2" : isa == Isa::Sse2 ? "sse2" : "scalar";
}

// The widest instruction set this CPU runs, capped by PARVIS_SIMD=scalar|sse2|avx2.
inline Isa best_isa() {
  const char* cap = config::get(config::Var::Simd);
  if (cap && std::strcmp(cap, "scalar") == 0) return Isa::Scalar;
#if PARVIS_SIMD_X86
  if (__builtin_cpu_supports("avx2") && !(cap && std::strcmp(cap, "sse2") == 0)) return Isa::Avx2;
  return Isa::Sse2;
#else
  return Isa::Scalar;
#endif
}

#if PARVIS_SIMD_X86
// ------------------------------------------------------------------------------- SSE2
namespace sse2 {
struct Ops {
  using V = __m128i;
  static constexpr int kBytes = 16;  // u8 lanes; kBytes / 2 i16 lanes, kBytes / 4 i32 lanes
  static constexpr Isa kIsa = Isa::Sse2;
  static inline V zero() { return _mm_setzero_si128(); }
  static inline V load(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
  static inline void store(void* p, V v) { _mm_storeu_si128(static_cast<__m128i*>(p), v); }
  static inline V set1_8(int8_t x) { return _mm_set1_epi8(x); }
  static inline V set1_16(int16_t x) { return _mm_set1_epi16(x); }
  static inline V set1_32(int32_t x) { return _mm_set1_epi32(x); }
  static inline V add8(V a, V b) { return _mm_add_epi8(a, b); }
  static inline V add16(V a, V b) { return _mm_add_epi16(a, b); }
  static inline V sub16(V a, V b) { return _mm_sub_epi16(a, b); }
  static inline V add32(V a, V b) { return _mm_add_epi32(a, b); }
  static inline V sub32(V a, V b) { return _mm_sub_epi32(a, b); }
  static inline V add64(V a, V b) { return _mm_add_epi64(a, b); }
  static inline V mullo16(V a, V b) { return _mm_mullo_epi16(a, b); }
  // (a0 b0 + a1 b1) per pair of i16 lanes -> i32 lanes (pmaddwd).
  static inline V madd16(V a, V b) { return _mm_madd_epi16(a, b); }
  // u8 lanes widened to u16: the low and the high half of `a` (within 128-bit lanes).
  static inline V widen8_lo(V a) { return _mm_unpacklo_epi8(a, _mm_setzero_si128()); }
  static inline V widen8_hi(V a) { return _mm_unpackhi_epi8(a, _mm_setzero_si128()); }
  // i32 -> i16 with signed saturation, i16 -> u8 with unsigned saturation (within 128-bit lanes).
  static inline V pack32_16(V a, V b) { return _mm_packs_epi32(a, b); }
  static inline V pack16_u8(V a, V b) { return _mm_packus_epi16(a, b); }
  static inline V and_(V a, V b) { return _mm_and_si128(a, b); }
  static inline V or_(V a, V b) { return _mm_or_si128(a, b); }
  static inline V cmpgt32(V a, V b) { return _mm_cmpgt_epi32(a, b); }
  template <int N> static inline V srli32(V a) { return _mm_srli_epi32(a, N); }
  template <int N> static inline V srai32(V a) { return _mm_srai_epi32(a, N); }
  template <int N> static inline V slli32(V a) { return _mm_slli_epi32(a, N); }
  // kBytes / 2 bytes from p, zero-extended to u16 lanes.
  static inline V load_u8_16(const void* p) {
    return _mm_unpacklo_epi8(_mm_loadl_epi64(static_cast<const __m128i*>(p)), _mm_setzero_si128());
  }
  // The sum of the i32 lanes (wrapping).
  static inline int32_t hsum32(V a) {
    a = _mm_add_epi32(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(1, 0, 3, 2)));
    a = _mm_add_epi32(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(a);
  }
  // -- added for the filter: u16 lanes in natural order, saturating u16 arithmetic, shifts by a
  //    run-time count, interleaving, and f32 lanes (exact integer division, see filter/).
  // Two vectors of i16 lanes -> kBytes u8 lanes in order (unsigned saturation).
  static inline V narrow16_u8(V a, V b) { return _mm_packus_epi16(a, b); }
  static inline V adds_u16(V a, V b) { return _mm_adds_epu16(a, b); }
  static inline V subs_u16(V a, V b) { return _mm_subs_epu16(a, b); }
  static inline V mulhi_u16(V a, V b) { return _mm_mulhi_epu16(a, b); }
  static inline V srl16(V a, int n) { return _mm_srl_epi16(a, _mm_cvtsi32_si128(n)); }
  static inline V sra32(V a, int n) { return _mm_sra_epi32(a, _mm_cvtsi32_si128(n)); }
  // (a0 b0 a1 b1 ...) of the low / high half of the i16 lanes (within 128-bit lanes).
  static inline V interleave16_lo(V a, V b) { return _mm_unpacklo_epi16(a, b); }
  static inline V interleave16_hi(V a, V b) { return _mm_unpackhi_epi16(a, b); }
  using F = __m128;
  static inline F set1_f32(float x) { return _mm_set1_ps(x); }
  static inline F to_f32(V a) { return _mm_cvtepi32_ps(a); }
  static inline V trunc_i32(F a) { return _mm_cvttps_epi32(a); }
  static inline F min_f32(F a, F b) { return _mm_min_ps(a, b); }
  static inline F max_f32(F a, F b) { return _mm_max_ps(a, b); }
  static inline F div_f32(F a, F b) { return _mm_div_ps(a, b); }
  // A non-temporal store (p aligned to kBytes): large outputs skip the read-for-ownership and
  // the cache; fence() orders them before the data is handed to other threads.
  static inline void stream(void* p, V v) { _mm_stream_si128(static_cast<__m128i*>(p), v); }
  static inline void fence() { _mm_sfence(); }
  // -- added for match: 64-bit sums of 32-bit lanes, psadbw, several 16-byte rows per vector.
  // u32 lanes -> u64 lanes: the low / high half of the lanes, in order.
  static inline V widen32_lo(V a) { return _mm_unpacklo_epi32(a, _mm_setzero_si128()); }
  static inline V widen32_hi(V a) { return _mm_unpackhi_epi32(a, _mm_setzero_si128()); }
  // The sum of the u64 lanes (wrapping).
  static inline uint64_t hsum64(V a) {
    return uint64_t(_mm_cvtsi128_si64(a)) + uint64_t(_mm_cvtsi128_si64(_mm_unpackhi_epi64(a, a)));
  }
  // Sums of |a - b| over each 8 u8 lanes, in the u64 lanes (psadbw).
  static inline V sad8(V a, V b) { return _mm_sad_epu8(a, b); }
  // kBytes / 16 rows of 16 bytes: p, p + stride, ... (one row here).
  static inline V load_rows16(const void* p, size_t /*stride*/) { return load(p); }
  // -- added for the colour filter: i32 lanes. SSE2 lacks pmaxsd/pminsd/pmulld/pmovzx (SSE4.1)
  //    and gathers: they are built from SSE2 instructions, with the same results.
  static inline V cmpeq32(V a, V b) { return _mm_cmpeq_epi32(a, b); }
  static inline V andnot_(V a, V b) { return _mm_andnot_si128(a, b); }  // ~a & b
  static inline V select(V mask, V a, V b) { return _mm_or_si128(_mm_and_si128(mask, a), _mm_andnot_si128(mask, b)); }
  static inline V max32(V a, V b) { return select(_mm_cmpgt_epi32(a, b), a, b); }
  static inline V min32(V a, V b) { return select(_mm_cmpgt_epi32(a, b), b, a); }
  // The low 32 bits of each product (the same for signed and unsigned lanes).
  static inline V mullo32(V a, V b) {
    const __m128i even = _mm_mul_epu32(a, b);
    const __m128i odd = _mm_mul_epu32(_mm_srli_epi64(a, 32), _mm_srli_epi64(b, 32));
    return _mm_unpacklo_epi32(_mm_shuffle_epi32(even, _MM_SHUFFLE(0, 0, 2, 0)),
                              _mm_shuffle_epi32(odd, _MM_SHUFFLE(0, 0, 2, 0)));
  }
  // table[idx] per i32 lane (idx in range).
  static inline V gather32(const int32_t* table, V idx) {
    alignas(16) int32_t i[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(i), idx);
    return _mm_set_epi32(table[i[3]], table[i[2]], table[i[1]], table[i[0]]);
  }
  // kBytes / 4 bytes from p, zero-extended to i32 lanes.
  static inline V load_u8_32(const void* p) {
    int32_t w;
    std::memcpy(&w, p, sizeof w);
    const __m128i z = _mm_setzero_si128();
    return _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(w), z), z);
  }
};
}  // namespace sse2
#endif

}  // namespace parvis::simd

#if PARVIS_SIMD_X86
PARVIS_AVX2_BEGIN
namespace parvis::simd::avx2 {
// ------------------------------------------------------------------------------- AVX2
// Same names as sse2::Ops; lane-crossing is as the instructions do it (unpack, pack work
// within each 128-bit half), so kernels that widen and pack in pairs stay lane-consistent.
struct Ops {
  using V = __m256i;
  static constexpr int kBytes = 32;
  static constexpr Isa kIsa = Isa::Avx2;
  static inline V zero() { return _mm256_setzero_si256(); }
  static inline V load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  static inline void store(void* p, V v) { _mm256_storeu_si256(static_cast<__m256i*>(p), v); }
  static inline V set1_8(int8_t x) { return _mm256_set1_epi8(x); }
  static inline V set1_16(int16_t x) { return _mm256_set1_epi16(x); }
  static inline V set1_32(int32_t x) { return _mm256_set1_epi32(x); }
  static inline V add8(V a, V b) { return _mm256_add_epi8(a, b); }
  static inline V add16(V a, V b) { return _mm256_add_epi16(a, b); }
  static inline V sub16(V a, V b) { return _mm256_sub_epi16(a, b); }
  static inline V add32(V a, V b) { return _mm256_add_epi32(a, b); }
  static inline V sub32(V a, V b) { return _mm256_sub_epi32(a, b); }
  static inline V add64(V a, V b) { return _mm256_add_epi64(a, b); }
  static inline V mullo16(V a, V b) { return _mm256_mullo_epi16(a, b); }
  static inline V madd16(V a, V b) { return _mm256_madd_epi16(a, b); }
  static inline V widen8_lo(V a) { return _mm256_unpacklo_epi8(a, _mm256_setzero_si256()); }
  static inline V widen8_hi(V a) { return _mm256_unpackhi_epi8(a, _mm256_setzero_si256()); }
  static inline V pack32_16(V a, V b) { return _mm256_packs_epi32(a, b); }
  static inline V pack16_u8(V a, V b) { return _mm256_packus_epi16(a, b); }
  static inline V and_(V a, V b) { return _mm256_and_si256(a, b); }
  static inline V or_(V a, V b) { return _mm256_or_si256(a, b); }
  static inline V cmpgt32(V a, V b) { return _mm256_cmpgt_epi32(a, b); }
  template <int N> static inline V srli32(V a) { return _mm256_srli_epi32(a, N); }
  template <int N> static inline V srai32(V a) { return _mm256_srai_epi32(a, N); }
  template <int N> static inline V slli32(V a) { return _mm256_slli_epi32(a, N); }
  static inline V load_u8_16(const void* p) {
    return _mm256_cvtepu8_epi16(_mm_loadu_si128(static_cast<const __m128i*>(p)));
  }
  static inline int32_t hsum32(V a) {
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 0, 3, 2)));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(h);
  }
  // packus works within 128-bit lanes: the permute puts the four 8-byte pieces back in order.
  static inline V narrow16_u8(V a, V b) {
    return _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8);
  }
  static inline V adds_u16(V a, V b) { return _mm256_adds_epu16(a, b); }
  static inline V subs_u16(V a, V b) { return _mm256_subs_epu16(a, b); }
  static inline V mulhi_u16(V a, V b) { return _mm256_mulhi_epu16(a, b); }
  static inline V srl16(V a, int n) { return _mm256_srl_epi16(a, _mm_cvtsi32_si128(n)); }
  static inline V sra32(V a, int n) { return _mm256_sra_epi32(a, _mm_cvtsi32_si128(n)); }
  static inline V interleave16_lo(V a, V b) { return _mm256_unpacklo_epi16(a, b); }
  static inline V interleave16_hi(V a, V b) { return _mm256_unpackhi_epi16(a, b); }
  using F = __m256;
  static inline F set1_f32(float x) { return _mm256_set1_ps(x); }
  static inline F to_f32(V a) { return _mm256_cvtepi32_ps(a); }
  static inline V trunc_i32(F a) { return _mm256_cvttps_epi32(a); }
  static inline F min_f32(F a, F b) { return _mm256_min_ps(a, b); }
  static inline F max_f32(F a, F b) { return _mm256_max_ps(a, b); }
  static inline F div_f32(F a, F b) { return _mm256_div_ps(a, b); }
  static inline void stream(void* p, V v) { _mm256_stream_si256(static_cast<__m256i*>(p), v); }
  static inline void fence() { _mm_sfence(); }
  static inline V widen32_lo(V a) { return _mm256_cvtepu32_epi64(_mm256_castsi256_si128(a)); }
  static inline V widen32_hi(V a) { return _mm256_cvtepu32_epi64(_mm256_extracti128_si256(a, 1)); }
  static inline uint64_t hsum64(V a) {
    const __m128i h = _mm_add_epi64(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    return uint64_t(_mm_cvtsi128_si64(h)) + uint64_t(_mm_cvtsi128_si64(_mm_unpackhi_epi64(h, h)));
  }
  static inline V sad8(V a, V b) { return _mm256_sad_epu8(a, b); }
  static inline V load_rows16(const void* p, size_t stride) {
    const char* c = static_cast<const char*>(p);
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i*)c)),
                                   _mm_loadu_si128((const __m128i*)(c + stride)), 1);
  }
  static inline V cmpeq32(V a, V b) { return _mm256_cmpeq_epi32(a, b); }
  static inline V andnot_(V a, V b) { return _mm256_andnot_si256(a, b); }
  static inline V select(V mask, V a, V b) { return _mm256_blendv_epi8(b, a, mask); }
  static inline V max32(V a, V b) { return _mm256_max_epi32(a, b); }
  static inline V min32(V a, V b) { return _mm256_min_epi32(a, b); }
  static inline V mullo32(V a, V b) { return _mm256_mullo_epi32(a, b); }
  static inline V gather32(const int32_t* table, V idx) { return _mm256_i32gather_epi32(table, idx, 4); }
  static inline V load_u8_32(const void* p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(static_cast<const __m128i*>(p))); }
};
}  // namespace parvis::simd::avx2
PARVIS_AVX2_END
#endif
