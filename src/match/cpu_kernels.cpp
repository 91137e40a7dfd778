// The direct method's vector kernels (simd_kernels.inc), compiled here once for SSE2 and once
// for AVX2 (cpu/simd.hpp explains the two regions); simd_kernels.hpp picks one at run time.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cpu/simd.hpp"
#include "match/simd_kernels.hpp"

#if PARVIS_SIMD_X86
namespace parvis::match::kernels::sse2 {
using Ops = simd::sse2::Ops;
#include "match/simd_kernels.inc"
}  // namespace parvis::match::kernels::sse2

PARVIS_AVX2_BEGIN
namespace parvis::match::kernels::avx2 {
using Ops = simd::avx2::Ops;
#include "match/simd_kernels.inc"
}  // namespace parvis::match::kernels::avx2
PARVIS_AVX2_END
#endif

namespace parvis::match::kernels {

Kernels pick_kernels() {
  switch (simd::best_isa()) {
#if PARVIS_SIMD_X86
    case simd::Isa::Avx2:
      return {"avx2", avx2::ssd_at, avx2::sad_at, avx2::ssd_row, avx2::sad_row,
              avx2::ssd_row_masked, avx2::sad_row_masked};
    case simd::Isa::Sse2:
      return {"sse2", sse2::ssd_at, sse2::sad_at, sse2::ssd_row, sse2::sad_row,
              sse2::ssd_row_masked, sse2::sad_row_masked};
#endif
    // The scalar loops read the mask bytes either way (TemplateRows): one function for both.
    default:
      return {"scalar", ssd_at_scalar, sad_at_scalar, ssd_row_scalar, sad_row_scalar,
              ssd_row_scalar, sad_row_scalar};
  }
}

}  // namespace parvis::match::kernels
