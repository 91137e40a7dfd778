// Integral image, cuda-opt: a tiled scheme that reads the u8 input twice and writes the output
// once, never transposing through global memory. Tiles of 32 rows x 1024 columns, 256 threads,
// 4 adjacent columns a thread (4-byte loads of all 32 rows up front, 16-byte stores of the
// output when W % 4 == 0).
//   1. tiles (pass 1): in each tile, each thread walks down its 4 columns keeping their running
//      sums; per row a block scan of those (warp shuffles, one __syncthreads a row) gives the
//      tile-local 2D integral S(y, x). Saved: each tile's column totals (colsum) and, per row,
//      S at the tile's last column (rowcum: the tile's rows summed up to this row).
//   2. left:  per row, the exclusive sum over the tiles to the left of rowcum  -> L(tile, y)
//   3. above: per column, the exclusive sum over the tile rows above of colsum -> V(ty, x)
//   4. top:   per tile row, `above` (the band's previous row) + the prefix along x of V
//             -> top(ty, x) = I(Y0 - 1, x), in place
//   5. tiles (pass 2): out(y, x) = top(ty, x) + L(tile, y) + S(y, x), widened to the output type.
// Traffic: 2 bytes read + sizeof(T) written a pixel, plus ~0.4 bytes of tile sums. S, rowcum
// and colsum fit u32 (32 * 1024 * 255^2 < 2^32); the rest is u64 until the store (exact).
//
// PARVIS_INTEGRAL_VARIANT picks the kernels: "tiles" (the default, above) or "lookback"
// (opt_lookback.cuh: one kernel, one pass, a decoupled look-back down the columns).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "integral/driver.cuh"
#include "integral/opt_lookback.cuh"

namespace parvis::integral::opt {

constexpr int kThreads = 256, kCols = 4, kTileW = kThreads * kCols, kTileH = 32;
constexpr int kWarps = kThreads / 32;
constexpr int64_t kMaxGridY = 65535;

struct Scratch {
  uint32_t* colsum;  // nty x w
  uint32_t* rowcum;  // ntx x rows
  uint64_t* left;    // ntx x rows
  uint64_t* top;     // nty x w
};

inline int64_t ntx_of(int64_t w) { return (w + kTileW - 1) / kTileW; }
inline int64_t nty_of(int64_t rows) { return (rows + kTileH - 1) / kTileH; }

template <typename T> __device__ __forceinline__ T to_out(uint64_t v) { return T(v); }

template <typename T, bool Vec>
__device__ __forceinline__ void store4(T* p, int64_t x, int64_t w, const uint64_t v[4]) {
  if (Vec) {  // w % 4 == 0, x % 4 == 0: the four lie in the row, 4 * sizeof(T)-aligned
    if constexpr (sizeof(T) == 4) {
      *reinterpret_cast<uint4*>(p) = make_uint4(uint32_t(v[0]), uint32_t(v[1]), uint32_t(v[2]), uint32_t(v[3]));
    } else if constexpr (std::is_same<T, double>::value) {
      reinterpret_cast<double2*>(p)[0] = make_double2(double(v[0]), double(v[1]));
      reinterpret_cast<double2*>(p)[1] = make_double2(double(v[2]), double(v[3]));
    } else {
      reinterpret_cast<ulonglong2*>(p)[0] = make_ulonglong2(v[0], v[1]);
      reinterpret_cast<ulonglong2*>(p)[1] = make_ulonglong2(v[2], v[3]);
    }
  } else {
    for (int j = 0; j < kCols; ++j)
      if (x + j < w) p[j] = to_out<T>(v[j]);
  }
}

// Pass 1 (Final false): colsum and rowcum. Pass 2 (Final true): the output.
template <typename T, bool Vec, bool Final>
__global__ void __launch_bounds__(kThreads) tiles(const uint8_t* __restrict__ in, int64_t w, int64_t rows,
                                                  bool squared, Scratch s, T* __restrict__ out,
                                                  int64_t tile_row0) {
  __shared__ uint32_t warp_total[2][kWarps];
  __shared__ uint64_t left[kTileH];  // Final: L(tile, y) of the tile's rows
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t tx = blockIdx.x, ty = tile_row0 + blockIdx.y;
  const int64_t x = tx * kTileW + int64_t(threadIdx.x) * kCols;
  const int64_t y0 = ty * kTileH, y_end = min(rows, y0 + kTileH);
  uint32_t col[kCols] = {0, 0, 0, 0};
  uint64_t top[kCols] = {0, 0, 0, 0};
  if (Final) {
    for (int j = 0; j < kCols; ++j) top[j] = x + j < w ? s.top[ty * w + x + j] : 0;
    if (threadIdx.x < kTileH && y0 + threadIdx.x < y_end) left[threadIdx.x] = s.left[tx * rows + y0 + threadIdx.x];
  }  // (read after the first row's barrier)
  // All 32 rows' pixels first (4 packed in a u32 a row): 32 loads in flight per thread.
  uint32_t packed[kTileH];
#pragma unroll
  for (int r = 0; r < kTileH; ++r) {
    const int64_t y = y0 + r;
    uint32_t q = 0;
    if (y < y_end && x < w) {
      const uint8_t* px = in + y * w + x;
      if (Vec) {
        q = __ldg(reinterpret_cast<const unsigned int*>(px));
      } else {
        for (int j = 0; j < kCols; ++j)
          if (x + j < w) q |= uint32_t(__ldg(px + j)) << (8 * j);
      }
    }
    packed[r] = q;
  }
#pragma unroll
  for (int r = 0; r < kTileH; ++r) {
    const int64_t y = y0 + r;
    if (y >= y_end) break;  // the same for the whole block
    uint32_t p[kCols];
    for (int j = 0; j < kCols; ++j) p[j] = (packed[r] >> (8 * j)) & 0xffu;
    uint32_t run[kCols];
    uint32_t acc = 0;
    for (int j = 0; j < kCols; ++j) {
      col[j] += squared ? p[j] * p[j] : p[j];
      acc += col[j];
      run[j] = acc;  // S within this thread's columns
    }
    const uint32_t incl = cuda::warp_inclusive_sum(acc);
    const int buf = int(y & 1);  // double-buffered: one barrier a row
    if (lane == 31) warp_total[buf][warp] = incl;
    __syncthreads();
    uint32_t offset = incl - acc;
    for (int k = 0; k < warp; ++k) offset += warp_total[buf][k];
    if (!Final) {
      if (threadIdx.x == kThreads - 1) s.rowcum[tx * rows + y] = offset + acc;
    } else {
      const uint64_t base = left[r] + offset;
      uint64_t v[kCols];
      for (int j = 0; j < kCols; ++j) v[j] = top[j] + base + run[j];
      if (x < w) store4<T, Vec>(out + y * w + x, x, w, v);
    }
  }
  if (!Final)
    for (int j = 0; j < kCols; ++j)
      if (x + j < w) s.colsum[ty * w + x + j] = col[j];
}

// left[tx][y] = sum over tx' < tx of rowcum[tx'][y].
__global__ void left_kernel(Scratch s, int64_t rows, int64_t ntx) {
  for (int64_t y = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; y < rows; y += int64_t(gridDim.x) * blockDim.x) {
    uint64_t acc = 0;
    for (int64_t t = 0; t < ntx; ++t) {
      const uint32_t v = s.rowcum[t * rows + y];
      s.left[t * rows + y] = acc;
      acc += v;
    }
  }
}

// top[ty][x] = sum over ty' < ty of colsum[ty'][x] (the prefix along x comes next).
__global__ void above_kernel(Scratch s, int64_t w, int64_t nty) {
  for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < w; x += int64_t(gridDim.x) * blockDim.x) {
    uint64_t acc = 0;
    int64_t t = 0;
    for (; t + 8 <= nty; t += 8) {  // eight independent loads in flight
      uint32_t v[8];
      for (int k = 0; k < 8; ++k) v[k] = s.colsum[(t + k) * w + x];
      for (int k = 0; k < 8; ++k) {
        s.top[(t + k) * w + x] = acc;
        acc += v[k];
      }
    }
    for (; t < nty; ++t) {
      const uint32_t v = s.colsum[t * w + x];
      s.top[t * w + x] = acc;
      acc += v;
    }
  }
}

// One block per tile row: top[ty][x] = above[x] + the inclusive prefix along x of top[ty][.].
template <typename T>
__global__ void top_kernel(Scratch s, const T* above, int64_t w, int64_t ty0) {
  __shared__ cuda::BlockScratch<uint64_t> scratch;
  uint64_t* row = s.top + (ty0 + blockIdx.x) * w;
  uint64_t carry = 0;
  for (int64_t x0 = 0; x0 < w; x0 += blockDim.x) {
    const int64_t x = x0 + threadIdx.x;
    const uint64_t v = x < w ? row[x] : 0;
    uint64_t total;
    const uint64_t excl = cuda::block_exclusive_sum(v, scratch, &total);
    if (x < w) row[x] = carry + excl + v + (above ? uint64_t(above[x]) : 0);
    carry += total;
  }
}

template <typename T, bool Vec, bool Final>
Status launch_tiles(const uint8_t* in, int64_t w, int64_t rows, bool squared, const Scratch& s, T* out) {
  const int64_t ntx = ntx_of(w), nty = nty_of(rows);
  for (int64_t t0 = 0; t0 < nty; t0 += kMaxGridY) {
    const dim3 grid(unsigned(ntx), unsigned(std::min(kMaxGridY, nty - t0)));
    tiles<T, Vec, Final><<<grid, kThreads>>>(in, w, rows, squared, s, out, t0);
    CUDA_CHECK_LAUNCH();
  }
  return Status::Ok();
}

enum class Variant { Tiles, Lookback, Unknown };
inline Variant variant_from_env() {
  const char* e = std::getenv("PARVIS_INTEGRAL_VARIANT");
  if (!e || !*e || std::strcmp(e, "tiles") == 0) return Variant::Tiles;
  return std::strcmp(e, "lookback") == 0 ? Variant::Lookback : Variant::Unknown;
}

struct Kernels {
  static constexpr int64_t kMaxBandRows = int64_t(1) << 40;
  static uint64_t scratch_bytes(int64_t w, int64_t rows, size_t) {
    if (variant_from_env() == Variant::Lookback) {
      const int h = lookback::band_rows_from_env();
      return lookback::scratch_bytes(lookback::make_geom(w, rows, h ? h : 16));
    }
    return uint64_t(nty_of(rows) * w) * 12 + uint64_t(ntx_of(w) * rows) * 12 + 64;
  }
  template <typename T>
  static Status band(const uint8_t* in, T* out, const T* above, int64_t w, int64_t rows, bool squared,
                     unsigned char* scratch, cudaStream_t stream) {
    const Variant v = variant_from_env();
    if (v == Variant::Unknown) return Status::bad_input("PARVIS_INTEGRAL_VARIANT must be tiles or lookback");
    if (v == Variant::Lookback) {
      const int h = lookback::band_rows_from_env();
      if (h == 16) return lookback::run<T, 16>(in, out, above, w, rows, squared, scratch, stream);
      if (h == 32) return lookback::run<T, 32>(in, out, above, w, rows, squared, scratch, stream);
      return Status::bad_input("PARVIS_INTEGRAL_LB_ROWS must be 16 or 32");
    }
    const int64_t ntx = ntx_of(w), nty = nty_of(rows);
    Scratch s;
    s.top = reinterpret_cast<uint64_t*>(scratch);
    s.left = s.top + nty * w;
    s.colsum = reinterpret_cast<uint32_t*>(s.left + ntx * rows);
    s.rowcum = s.colsum + nty * w;
    const bool vec = w % 4 == 0;
    PARVIS_TRY((vec ? launch_tiles<T, true, false>(in, w, rows, squared, s, out)
                    : launch_tiles<T, false, false>(in, w, rows, squared, s, out)));
    left_kernel<<<int(std::min<int64_t>((rows + 255) / 256, 4096)), 256>>>(s, rows, ntx);
    CUDA_CHECK_LAUNCH();
    above_kernel<<<int(std::min<int64_t>((w + 127) / 128, 4096)), 128>>>(s, w, nty);
    CUDA_CHECK_LAUNCH();
    for (int64_t t0 = 0; t0 < nty; t0 += kMaxGridY) {
      top_kernel<T><<<unsigned(std::min(kMaxGridY, nty - t0)), 1024>>>(s, above, w, t0);
      CUDA_CHECK_LAUNCH();
    }
    return vec ? launch_tiles<T, true, true>(in, w, rows, squared, s, out)
               : launch_tiles<T, false, true>(in, w, rows, squared, s, out);
  }
};

}  // namespace parvis::integral::opt

PARVIS_INTEGRAL_DEVICE_ENTRY_POINTS(opt::Kernels)
