// The simd and omp versions' filter: a plan made once per call from the kernel (which path, taps
// grouped by value, the constants of the exact finish), and a row engine that filters a band of
// output rows with it. Rows are copied once into padded buffers of u16 (the border applied to R
// pixels on each side, a zero row for the zero border above and below), so every kernel below is
// free of border tests and loads its lanes without widening them per tap (a widening load is a
// shuffle: per tap it was the bottleneck, 1.4x on sharpen 5x5); the kernels (simd_kernels.inc)
// are written once and compiled for SSE2 and AVX2.
//
// Arithmetic (DESIGN.md "Convolution filters": the int32 sum, then round_clamp), exact on every
// path. An image row of W pixels x C channels is a row of W*C bytes; a tap at column kx reads the
// byte (kx - R) * C away, so grey and RGB are the same loop.
//  - vec16: when the sums' range max - min <= 65535 (sum |tap| <= 257: the whole bank but unsharp
//    5x5), 16-bit lanes with wrap-around arithmetic hold S mod 2^16, and S = min + ((S - min) mod
//    2^16) is recovered exactly. Taps of equal value are summed first (one add per tap), then
//    multiplied once per value. The finish stays in 16 bits: t = max(S + d/2, 0) by a saturating
//    subtract (or an add when min + d/2 > 0), floor(t / d) by a 16-bit multiply-high with a
//    magic number proven exact for every t that can occur (make_divider), min(q, 255), pack.
//  - sep16: the same 16-bit arithmetic for kernels that are an outer product col^T row (gaussian,
//    box, identity, custom): a vertical pass into a row of u16, then a horizontal pass. Wrap-
//    around is a ring homomorphism, so the two passes give S mod 2^16 as well: the same bits.
//  - vec32: other kernels with |tap| <= 32767 (unsharp 5x5, large custom taps): groups of equal
//    taps summed in 16 bits (at most 128 taps a group, so a sum <= 32640 fits i16), then pairs of
//    groups through pmaddwd into int32 lanes. Finish: t = S + d/2; d = 2^k: arithmetic shift,
//    signed then unsigned saturating packs (negative -> 0, > 255 -> 255); other d < 2^16: clamp t to
//    [0, 256 d] in float (exact: both ends < 2^24) and an IEEE division, whose correctly rounded
//    quotient truncates to floor(t / d) exactly for t < 2^24.
//  - compile-time shapes: for K = 3, 5 and C = 1, 3, sep16 of symmetric kernels (gaussian, box:
//    1.3-1.6x faster than the run-time loops) and vec16 / vec32 of kernels symmetric under the
//    square's 8 mirrors and rotations (sharpen, edge, unsharp: 1.2-1.5x) also exist with every
//    offset a constant, the pixels of each symmetry orbit summed before its one multiply: no loops
//    over taps or pointers at run time.
//  - scalar: everything else (taps beyond i16, divisors >= 2^16 that are not powers of two,
//    PARVIS_SIMD=scalar, non-x86): int32 sums and round_clamp per byte.
#pragma once
#include <cstdint>
#include <vector>

#include "cpu/simd.hpp"
#include "filter/filter.hpp"
#include "filter/kernel_math.hpp"

namespace parvis::filter::cpu {

enum class Path { Scalar, Vec16, Sep16, Vec32 };

// sep16 filters a row in tiles of this many outputs, so its vertical sums stay in L1.
constexpr int kSepTile = 1024;

// One tap: the window row it reads (0..K-1) and its byte offset from the output, (kx - R) * C.
struct TapRef {
  int row;
  int offset;
  int32_t value;
};
// taps[first, first + count) share `value` (non-zero).
struct TapGroup {
  int32_t value;
  int first;
  int count;
};

// The constants of the exact 16-bit finish (vec16, sep16).
struct Finish16 {
  uint16_t min_mod;   // (smallest sum) mod 2^16: v = acc - min_mod = S - min, exactly
  int32_t offset;     // min + d/2: t = v + offset, or max(v - (-offset), 0) when offset <= 0
  bool divide;        // false when d == 1
  uint16_t magic;     // floor(t / d) = mulhi(t, magic) >> shift for every t that occurs
  int shift;
};

// The constants of the 32-bit finish (vec32).
struct Finish32 {
  int32_t half;      // d / 2
  int pow2_shift;    // d = 2^pow2_shift, or -1: float division by d (< 2^16)
  float divisor;
  float t_max;       // 256 d: clamping there still gives q >= 256 -> 255
};

struct Plan {
  int width = 0, height = 0, channels = 0, size = 0, radius = 0;
  Border border = Border::Zero;
  int32_t divisor = 1;
  Path path = Path::Scalar;
  int variant = 0;  // index into vector_variant_names()
  simd::Isa isa = simd::Isa::Scalar;
  bool stream = false;  // large outputs: non-temporal stores
  std::vector<TapRef> taps;        // 2-D paths, in group order (scalar: every non-zero tap)
  std::vector<TapGroup> groups;
  std::vector<TapRef> vtaps, htaps;  // sep16: vertical (offset 0), horizontal (row 0)
  std::vector<TapGroup> vgroups, hgroups;
  Finish16 f16{};
  Finish32 f32{};
  // Compile-time shapes (K = 3 or 5, C = 1 or 3; every bank kernel): vec16 and vec32 for kernels
  // symmetric under the square's mirrors and rotations take d4_taps[orbit]; sep16 for symmetric
  // rank-1 kernels takes vtap[d], htap[d] (the taps at distance d from the centre).
  bool fixed = false;
  int16_t d4_taps[6] = {};
  int16_t vtap[3] = {}, htap[3] = {};
};

// The names of the simd/omp variants, in Tuning::variant order: "auto" (the widest ISA, sep16
// where it applies, compile-time shapes where they apply), "2d" (no separable passes), "generic"
// (no compile-time shapes), "sse2", "scalar".
const std::vector<std::string>& vector_variant_names();

// The plan for `kernel` (passed check_kernel) on images of this shape.
Plan make_plan(const Kernel& kernel, Border border, int width, int height, int channels,
               int variant);
// Filters output rows [y0, y1) of `out` (same shape as `in`). Disjoint ranges may run at once.
void convolve_rows(const Plan& plan, const Image& in, Image* out, int y0, int y1);
// The variant and what make_plan chose for it, e.g. "auto: sep16/avx2".
std::string describe(const Plan& plan);

}  // namespace parvis::filter::cpu
