// Template-matching masks on the CUDA versions (--mask, src/match/mask.hpp; DESIGN.md "Masks"):
// the exact direct method, one thread per position, shared by cuda-naive and cuda-opt (one
// definition, included by both). The template is stored as 16-bit words T & b | b << 8 (b =
// 0xFF where the mask counts, 0 elsewhere): one load gives a pixel of the masked template and
// its mask, the source byte is ANDed with b, and every sum is the unmasked sum of the ANDed
// pixels — exact 64-bit integers; the normed metrics then evaluate ncc::score on the device
// (explicit-rounding intrinsics: the host's bits).
//
// `window` is __host__ __device__: tests/cuda/mask_emulate.cu runs it on the host, position by
// position, against seq's definition (nvcc, no GPU).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "common.cuh"
#include "match/map_download.cuh"
#include "match/mask.hpp"
#include "match/match_common.hpp"
#include "match/ncc.hpp"

namespace parvis::match::cuda_mask {

// What one position computes: 0 SSD, 1 SAD, 2 NCC, 3 ccorr-normed.
inline int kind_of(Metric m) {
  return m == Metric::SSD ? 0 : m == Metric::SAD ? 1 : m == Metric::NCC ? 2 : 3;
}

// The packed template: T & b | b << 8 per pixel, w per row.
inline std::vector<uint16_t> pack(const Image& tpl, const Image& mask) {
  std::vector<uint16_t> out(size_t(tpl.width) * size_t(tpl.height));
  for (int j = 0; j < tpl.height; ++j)
    for (int i = 0; i < tpl.width; ++i) {
      const uint16_t b = mask.row(j)[i] ? 0xFF : 0x00;
      out[size_t(j) * tpl.width + i] = uint16_t((tpl.row(j)[i] & b) | (b << 8));
    }
  return out;
}

// The score word of one position from its exact masked sums: the SSD / SAD (`cost`) itself,
// or the normed double's bits (ncc::score; `cost` unused). Also cuda-opt's masked FFT / NTT
// method (opt_mask_fft.cuh), which gets the same sums another way.
__host__ __device__ inline uint64_t score_word(int kind, uint64_t cost, uint64_t n, uint64_t si,
                                               uint64_t sii, uint64_t sit, uint64_t st,
                                               uint64_t stt) {
  if (kind < 2) return cost;
  const double r = ncc::score(kind == 2, n, si, sii, sit, st, stt);
  uint64_t bits;
  memcpy(&bits, &r, sizeof bits);
  return bits;
}

// The rank (Position::score) of a score word: the SSD / SAD itself, the normed double's key.
__host__ __device__ inline uint64_t rank_of_word(bool normed, uint64_t word) {
  if (!normed) return word;
  double r;
  memcpy(&r, &word, sizeof r);
  return ncc::key_of(r);
}

// The score of the window at (x, y) of a tight W-wide source: the exact SSD / SAD, or the
// normed double's bits (n, st, stt: the template's masked sums).
__host__ __device__ inline uint64_t window(const uint8_t* src, int width, const uint16_t* tm, int w,
                                           int h, int x, int y, int kind, uint64_t n, uint64_t st,
                                           uint64_t stt) {
  uint64_t cost = 0, si = 0, sii = 0, sit = 0;
  for (int j = 0; j < h; ++j) {
    const uint8_t* s = src + size_t(y + j) * size_t(width) + x;
    const uint16_t* t = tm + size_t(j) * size_t(w);
    uint32_t row = 0, row_i = 0;  // < 2^32 for w < 66052 (255^2 each); wider rows: 64 bits
    const bool narrow = w < 66052;
    for (int i = 0; i < w; ++i) {
      const uint32_t p = t[i];
      const uint32_t a = s[i] & (p >> 8), b = p & 0xFF;
      if (kind == 0) {
        const int d = int(a) - int(b);
        if (narrow) row += uint32_t(d * d);
        else cost += uint64_t(d * d);
      } else if (kind == 1) {
        const uint32_t d = a > b ? a - b : b - a;
        if (narrow) row += d;
        else cost += d;
      } else {
        row_i += a;  // < 2^32: w * 255
        sii += a * a;
        sit += a * b;
      }
    }
    cost += row;
    si += row_i;
  }
  return score_word(kind, cost, n, si, sii, sit, st, stt);
}

#ifdef __CUDACC__
// One thread per position (32 x 8 blocks; neighbouring threads read neighbouring source bytes
// and the same template word). The grid's rows stride down the map: gridDim.y is at most 65535
// (8 map rows each), and a tall source has more map rows than that. Static: each file that
// includes this header (naive.cu, opt.cu, opt_mask_fft.cu) has its own.
static __global__ void maskedScore(const uint8_t* src, int width, const uint16_t* tm, int w, int h,
                            int map_w, int map_h, int kind, uint64_t n, uint64_t st, uint64_t stt,
                            uint64_t* out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= map_w) return;
  for (int64_t y = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; y < map_h;
       y += int64_t(gridDim.y) * blockDim.y)
    out[size_t(y) * map_w + x] = window(src, width, tm, w, h, x, int(y), kind, n, st, stt);
}

// The masked direct method, whole: upload, every position's score on the device, the map back,
// the best positions (and the map when asked) on the host. Fills res's map size, best, map,
// timings and method.
inline Status run(const Image& src, const Image& tpl, const Params& params, Result* res) {
  using cuda::DeviceBuffer;
  const int map_w = map_width_of(src.width, tpl.width), map_h = map_height_of(src.height, tpl.height);
  const size_t n = size_t(map_w) * size_t(map_h);
  res->map_width = map_w;
  res->map_height = map_h;
  const int kind = kind_of(params.metric);
  const TemplateSums ts = mask::template_sums(tpl, params.mask);
  std::vector<uint16_t> packed = pack(tpl, params.mask);
  cuda::EventTimer timer;
  float ms = 0;
  DeviceBuffer<uint8_t> d_src;
  DeviceBuffer<uint16_t> d_tm;
  DeviceBuffer<uint64_t> d_map;
  PARVIS_TRY(d_src.alloc(size_t(src.width) * size_t(src.height)));
  PARVIS_TRY(d_tm.alloc(packed.size()));
  PARVIS_TRY(d_map.alloc(n));
  PARVIS_TRY(timer.start());
  CUDA_CHECK(cudaMemcpy2D(d_src.get(), size_t(src.width), src.data(), src.stride,
                          size_t(src.width), size_t(src.height), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_tm.get(), packed.data(), packed.size() * sizeof(uint16_t),
                        cudaMemcpyHostToDevice));
  PARVIS_TRY(timer.stop(&ms));
  res->timings.upload_ms = ms;

  PARVIS_TRY(timer.start());
  const dim3 block(32, 8);
  const dim3 grid(cuda::div_up(size_t(map_w), block.x),
                  unsigned(std::min<size_t>(cuda::div_up(size_t(map_h), block.y), 65535)));
  maskedScore<<<grid, block>>>(d_src.get(), src.width, d_tm.get(), tpl.width, tpl.height, map_w,
                               map_h, kind, ts.n, ts.st, ts.stt, d_map.get());
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(timer.stop(&ms));
  res->timings.compute_ms = ms;

  PARVIS_TRY(cuda_direct::download_and_rank(d_map.get(), map_w, map_h, kind >= 2, params, &timer,
                                             res));
  res->method_used = Method::Direct;
  return Status::Ok();
}
#endif

}  // namespace parvis::match::cuda_mask
