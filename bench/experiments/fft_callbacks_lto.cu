// cuFFT LTO load callbacks for bench/experiments/fft_callbacks.cu, compiled to LTO-IR:
//   nvcc -gencode=arch=compute_90,code=lto_90 -dc -fatbin fft_callbacks_lto.cu -o cb.fatbin
// C++ linkage on purpose: cuFFT looks the callback up by its plain name with the signature of
// its type (with extern "C" planning failed with CUFFT_INTERNAL_ERROR).
#include <cufftXt.h>

struct SourceInfo {
  const unsigned char* src;
  unsigned pitch, P, W, H;
};

// Forward transform input: the u8 source, zero-padded to P x Q, read directly.
__device__ cufftDoubleReal load_source_u8(void*, unsigned long long offset, void* info, void*) {
  const SourceInfo* s = static_cast<const SourceInfo*>(info);
  const unsigned i = unsigned(offset), y = i / s->P, x = i - y * s->P;
  return (x < s->W && y < s->H) ? cufftDoubleReal(s->src[size_t(y) * s->pitch + x]) : 0.0;
}

// Inverse transform input: the source spectrum times the template's (conjugated, scaled).
__device__ cufftDoubleComplex load_times_template(void* in, unsigned long long offset, void* info, void*) {
  const cufftDoubleComplex a = static_cast<const cufftDoubleComplex*>(in)[offset];
  const cufftDoubleComplex b = static_cast<const cufftDoubleComplex*>(info)[offset];
  return make_cuDoubleComplex(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
