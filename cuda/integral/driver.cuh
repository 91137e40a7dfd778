// What cuda-naive and cuda-opt share for the integral image (included by naive.cu and opt.cu,
// which supply the band kernels as the class `K`): the noise made on the device (random_image's
// values), the band loop, the checksum on the device, the memory plan.
//
// Bands: the rows are cut into bands whose input, output and scratch fit the card's free memory
// less a reserve (tuning.hpp: integral_tuning), so 60000^2 u8 -> u64 (3.6 GB in, 28.8 GB out) is
// one band on an 80 GB card and several on a smaller one. Band b starts from the last row of band
// b-1's integral (`above`). Index arithmetic is 64-bit throughout.
//
// K provides:
//   static constexpr const char* kName;                                    what --explain calls it
//   static constexpr int64_t kMaxBandRows;
//   static uint64_t scratch_bytes(int64_t w, int64_t rows, size_t elem);   beyond input/output
//   template <typename T> static Status band(const uint8_t* in, T* out, const T* above,
//       int64_t w, int64_t rows, bool squared, unsigned char* scratch, cudaStream_t s);
//   out (rows x w) = above[x] (0 when null) + the integral of the band.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common.cuh"
#include "integral/checksum.hpp"
#include "integral/integral.hpp"
#include "integral/tuning.hpp"
#include "scan.cuh"

namespace parvis::integral::device {

// Pixels [first, first + count) of the --random noise of `seed` (global row-major indices).
// One thread per 64-bit noise word: byte j of word k is pixel 8(k-1) + j.
__global__ void noise_kernel(uint8_t* out, uint64_t first, uint64_t count, uint64_t seed) {
  const uint64_t word0 = first / 8;
  const uint64_t words = (first + count + 7) / 8 - word0;
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < words;
       k += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t word = word0 + k;
    const uint64_t bits = noise_word(seed, word + 1);
    for (int j = 0; j < 8; ++j) {
      const uint64_t i = word * 8 + j;
      if (i >= first && i < first + count) out[i - first] = uint8_t(bits >> (8 * j));
    }
  }
}

template <typename T>
__device__ __forceinline__ uint64_t as_u64(T v) {
  return uint64_t(v);
}

// *sum += checksum_term(first + i, v[i]) over the band (wrapping, order-free).
template <typename T>
__global__ void checksum_kernel(const T* v, uint64_t first, uint64_t count,
                                unsigned long long* sum) {
  uint64_t h = 0;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count;
       i += uint64_t(gridDim.x) * blockDim.x)
    h += checksum_term(first + i, as_u64(v[i]));
  h = cuda::warp_sum(h);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, static_cast<unsigned long long>(h));
}

inline int grid_for(uint64_t n, int threads) {
  return int(std::min<uint64_t>((n + threads - 1) / threads, 65536));
}

template <class K, typename T>
Status run(const Source& src, int w64, int h64, bool squared, bool keep, Result* res) {
  const int64_t w = w64, h = h64;
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const IntegralTuning tuning =
      integral_tuning(w, h, sizeof(T), free_b, total_b, K::kMaxBandRows, &K::scratch_bytes);
  const int64_t rows = tuning.band_rows;
  if (rows < 1)
    return Status::runtime("not enough GPU memory for one row of a " + std::to_string(w) + "-wide integral (" +
                           std::to_string(free_b >> 20) + " MiB free)");
  res->explain = std::string(K::kName) + "; " + tuning.describe();

  cuda::DeviceBuffer<uint8_t> d_in;
  cuda::DeviceBuffer<T> d_out, d_above;
  cuda::DeviceBuffer<unsigned char> d_scratch;
  cuda::DeviceBuffer<unsigned long long> d_sum;
  PARVIS_TRY(d_in.alloc(size_t(w * rows)));
  PARVIS_TRY(d_out.alloc(size_t(w * rows)));
  PARVIS_TRY(d_above.alloc(size_t(w)));
  PARVIS_TRY(d_scratch.alloc(std::max<size_t>(1, K::scratch_bytes(w, rows, sizeof(T)))));
  PARVIS_TRY(d_sum.alloc(1));
  CUDA_CHECK(cudaMemset(d_sum.get(), 0, sizeof(unsigned long long)));
  T* host = nullptr;
  if (keep) host = res->type == Type::U32 ? reinterpret_cast<T*>(res->u32.data())
                   : res->type == Type::U64 ? reinterpret_cast<T*>(res->u64.data())
                                            : reinterpret_cast<T*>(res->f64.data());
  cuda::EventTimer timer;
  double compute = 0, upload = 0, download = 0;
  int64_t last_rows = 0;
  for (int64_t y0 = 0; y0 < h; y0 += rows) {
    const int64_t n = std::min(rows, h - y0);
    const uint64_t first = uint64_t(y0) * uint64_t(w), count = uint64_t(n) * uint64_t(w);
    float ms = 0;
    if (src.image) {
      PARVIS_TRY(timer.start());
      CUDA_CHECK(cudaMemcpy2D(d_in.get(), size_t(w), src.image->row(int(y0)), src.image->stride,
                              size_t(w), size_t(n), cudaMemcpyHostToDevice));
      PARVIS_TRY(timer.stop(&ms));
      upload += ms;
    } else {
      noise_kernel<<<grid_for((count + 7) / 8 + 1, 256), 256>>>(d_in.get(), first, count, src.seed);
      CUDA_CHECK_LAUNCH();
    }
    const int repeat = n == h ? std::max(1, src.repeat) : 1;
    if (repeat > 1)  // the first run outside the timing: the loop's runs all find warm buffers
      PARVIS_TRY(K::template band<T>(d_in.get(), d_out.get(), nullptr, w, n, squared, d_scratch.get(), 0));
    PARVIS_TRY(timer.start());
    for (int k = 0; k < repeat; ++k)
      PARVIS_TRY(K::template band<T>(d_in.get(), d_out.get(), y0 > 0 ? d_above.get() : nullptr, w,
                                     n, squared, d_scratch.get(), 0));
    PARVIS_TRY(timer.stop(&ms));
    compute += ms / repeat;
    checksum_kernel<T><<<grid_for(count, 256), 256>>>(d_out.get(), first, count, d_sum.get());
    CUDA_CHECK_LAUNCH();
    if (keep) {
      PARVIS_TRY(timer.start());
      CUDA_CHECK(cudaMemcpy(host + first, d_out.get(), count * sizeof(T), cudaMemcpyDeviceToHost));
      PARVIS_TRY(timer.stop(&ms));
      download += ms;
    }
    if (y0 + n < h)
      CUDA_CHECK(cudaMemcpy(d_above.get(), d_out.get() + (n - 1) * w, size_t(w) * sizeof(T),
                            cudaMemcpyDeviceToDevice));
    last_rows = n;
  }
  T last = 0;
  unsigned long long sum = 0;
  CUDA_CHECK(cudaMemcpy(&last, d_out.get() + last_rows * w - 1, sizeof(T), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&sum, d_sum.get(), sizeof sum, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaDeviceSynchronize());
  res->last = uint64_t(last);
  res->sum = sum;
  res->timings.compute_ms = compute;
  res->timings.upload_ms = src.image ? upload : -1;
  res->timings.download_ms = keep ? download : -1;
  return Status::Ok();
}

template <class K>
Status compute_source(const Source& src, Type type, bool squared, bool keep, Result* out) {
  if (src.image && src.image->channels != 1) return Status::bad_input("the integral image needs a grey input");
  const int w = src.image ? src.image->width : src.width, h = src.image ? src.image->height : src.height;
  type = resolve_type(type, w, h, squared);
  PARVIS_TRY(check_type(type, w, h, squared));
  Result r;
  r.type = type;
  r.width = w;
  r.height = h;
  r.kept = keep;
  if (keep) {
    PARVIS_TRY(check_memory(uint64_t(w) * uint64_t(h) * type_size(type),
                            "the integral image of " + std::to_string(w) + "x" + std::to_string(h)));
    PARVIS_TRY(allocate(type, w, h, &r));
  }
  if (type == Type::U32) PARVIS_TRY((run<K, uint32_t>(src, w, h, squared, keep, &r)));
  if (type == Type::U64) PARVIS_TRY((run<K, uint64_t>(src, w, h, squared, keep, &r)));
  if (type == Type::F64) PARVIS_TRY((run<K, double>(src, w, h, squared, keep, &r)));
  *out = std::move(r);
  return Status::Ok();
}

}  // namespace parvis::integral::device

// The two entry points of integral.hpp, for a version file that defines `Kernels`.
#define PARVIS_INTEGRAL_DEVICE_ENTRY_POINTS(Kernels)                                               \
  namespace parvis::integral {                                                                     \
  Status compute_source(const Source& src, Type type, bool squared, bool keep, Result* out) {      \
    return device::compute_source<Kernels>(src, type, squared, keep, out);                         \
  }                                                                                                \
  Status compute(const Image& gray, Type type, bool squared, Result* out) {                        \
    Source src;                                                                                    \
    src.image = &gray;                                                                             \
    return device::compute_source<Kernels>(src, type, squared, true, out);                         \
  }                                                                                                \
  }
