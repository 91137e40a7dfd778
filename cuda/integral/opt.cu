// Integral image, cuda-opt: a tiled scheme that reads the u8 input twice and writes the output
// once, never transposing through global memory. Tiles of 32 rows x 1024 columns, 256 threads,
// 4 adjacent columns a thread (4-byte loads of all 32 rows up front, 16-byte stores of the
// output when W % 4 == 0).
//   1. tile_sums (pass 1, a reduction): each tile's column totals (colsum) and its row totals
//      summed down the tile (rowcum[y] = the tile's pixels in rows y0..y). The row totals are a
//      reduce-scatter across the warp (31 shuffles: lane r ends with row r) and one barrier a
//      tile. tile_sums_wide (W % 16 == 0) reads 16 bytes a thread, 512 contiguous bytes a warp
//      a row, which brings the pass near the DRAM peak (4-byte loads reach less than half of it).
//   2. carries (one launch, three jobs by block index):
//      above:  per column, the exclusive sum over the tile rows above of colsum -> A(ty, x)
//      left:   per row, the exclusive sum over the tiles to the left of rowcum  -> L(tx, y)
//      corner: per tile, the sum of every tile above and to the left            -> C(ty, tx)
//   3. tiles (pass 2): top(x) = I(y0 - 1, x) = C + (the prefix of A along the tile's columns,
//      one block scan) + the previous band's last row; then per row a block scan of the running
//      column sums gives the tile-local S(y, x), and out(y, x) = top(x) + L(tx, y) + S(y, x),
//      widened to the output type.
// Traffic: 2 bytes read + sizeof(T) written a pixel, plus ~0.5 bytes of tile sums. S, rowcum
// and colsum fit u32 (32 * 1024 * 255^2 < 2^32); the rest is u64 until the store (exact).
// A single pass with a decoupled look-back down the columns lost to this scheme at every size
// measured (docs/decisions/019).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "integral/driver.cuh"

namespace parvis::integral::opt {

constexpr int kThreads = 256, kCols = 4, kTileW = kThreads * kCols, kTileH = 32;
constexpr int kWarps = kThreads / 32;
constexpr int64_t kMaxGridY = 65535;

struct Scratch {
  uint64_t* above;   // nty x w:   A(ty, x)
  uint64_t* left;    // ntx x rows: L(tx, y)
  uint64_t* corner;  // nty x ntx: C(ty, tx)
  uint32_t* colsum;  // nty x w
  uint32_t* rowcum;  // ntx x rows
};

__host__ __device__ inline int64_t ntx_of(int64_t w) { return (w + kTileW - 1) / kTileW; }
__host__ __device__ inline int64_t nty_of(int64_t rows) { return (rows + kTileH - 1) / kTileH; }

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

// The thread's 4 columns of the tile's 32 rows, 4 pixels packed in a u32 a row (0 outside the
// image): 32 loads in flight per thread.
template <bool Vec>
__device__ __forceinline__ void load_tile_columns(const uint8_t* __restrict__ in, int64_t w, int64_t x,
                                                  int64_t y0, int64_t y_end, uint32_t packed[kTileH]) {
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
}

__device__ __forceinline__ uint32_t pixel_term(uint32_t packed, int j, bool squared) {
  const uint32_t p = (packed >> (8 * j)) & 0xffu;
  return squared ? p * p : p;
}

// Pass 1: colsum and rowcum of each tile.
template <bool Vec>
__global__ void __launch_bounds__(kThreads) tile_sums(const uint8_t* __restrict__ in, int64_t w, int64_t rows,
                                                      bool squared, Scratch s, int64_t tile_row0) {
  __shared__ uint32_t part[kWarps][kTileH];  // per warp, its 128 columns' total of each row
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t tx = blockIdx.x, ty = tile_row0 + blockIdx.y;
  const int64_t x = tx * kTileW + int64_t(threadIdx.x) * kCols;
  const int64_t y0 = ty * kTileH, y_end = min(rows, y0 + kTileH);
  uint32_t v[kTileH];
  load_tile_columns<Vec>(in, w, x, y0, y_end, v);
  uint32_t col[kCols] = {0, 0, 0, 0};
#pragma unroll
  for (int r = 0; r < kTileH; ++r) {
    uint32_t row = 0;
    for (int j = 0; j < kCols; ++j) {
      const uint32_t t = pixel_term(v[r], j, squared);
      col[j] += t;
      row += t;
    }
    v[r] = row;
  }
  // lane r gets the warp's total of row r (cuda/scan.cuh)
  cuda::warp_reduce_scatter<kTileH>(v);
  part[warp][lane] = v[0];
  __syncthreads();
  if (warp == 0) {
    uint32_t t = 0;
    for (int k = 0; k < kWarps; ++k) t += part[k][lane];
    t = cuda::warp_inclusive_sum(t);
    if (y0 + lane < y_end) s.rowcum[tx * rows + y0 + lane] = t;
  }
  for (int j = 0; j < kCols; ++j)
    if (x + j < w) s.colsum[ty * w + x + j] = col[j];
}

// Pass 1 with 16-byte loads (W % 16 == 0): warp w reads rows 8 * (w / 2) .. + 7 of columns
// 512 * (w % 2) + 16 * lane .. + 15, so a warp reads 512 contiguous bytes a row; the four row
// groups' column sums meet in shared memory, the row totals by a warp reduce-scatter of 8 rows.
__global__ void __launch_bounds__(kThreads, 4) tile_sums_wide(const uint8_t* __restrict__ in, int64_t w,
                                                           int64_t rows, bool squared, Scratch s,
                                                           int64_t tile_row0) {
  constexpr int kGroupRows = 8, kGroups = kTileH / kGroupRows, kLaneCols = 16;
  __shared__ uint4 colpart[kGroups][kTileW / 4];
  __shared__ uint32_t rowpart[kWarps][kGroupRows];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, group = warp >> 1;
  const int64_t tx = blockIdx.x, ty = tile_row0 + blockIdx.y;
  const int64_t c0 = (warp & 1) * (kTileW / 2) + lane * kLaneCols, x = tx * kTileW + c0;
  const int64_t y0 = ty * kTileH, y_end = min(rows, y0 + kTileH), yg = y0 + group * kGroupRows;
  uint4 q[kGroupRows];
#pragma unroll
  for (int r = 0; r < kGroupRows; ++r)
    q[r] = yg + r < y_end && x < w ? __ldg(reinterpret_cast<const uint4*>(in + (yg + r) * w + x))
                                   : make_uint4(0, 0, 0, 0);
  uint32_t col[kLaneCols] = {};
  uint32_t v[kGroupRows];
#pragma unroll
  for (int r = 0; r < kGroupRows; ++r) {
    const uint32_t word[4] = {q[r].x, q[r].y, q[r].z, q[r].w};
    uint32_t row = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      row = __dp4a(word[k], squared ? word[k] : 0x01010101u, row);
#pragma unroll
      for (int j = 0; j < 4; ++j) col[4 * k + j] += pixel_term(word[k], j, squared);
    }
    v[r] = row;
  }
  // lane l gets the warp's total of row warp_scatter_row<8>(l) = 4 bit4 + 2 bit3 + bit2 of l
  const uint32_t row_total = cuda::warp_reduce_scatter<kGroupRows>(v);
  if ((lane & 3) == 0) rowpart[warp][cuda::warp_scatter_row<kGroupRows>(lane)] = row_total;
#pragma unroll
  for (int k = 0; k < kLaneCols / 4; ++k)
    colpart[group][c0 / 4 + k] = make_uint4(col[4 * k], col[4 * k + 1], col[4 * k + 2], col[4 * k + 3]);
  __syncthreads();
  if (warp == 0) {
    const int g = lane / kGroupRows, r = lane % kGroupRows;
    const uint32_t t = cuda::warp_inclusive_sum(rowpart[2 * g][r] + rowpart[2 * g + 1][r]);
    if (y0 + lane < y_end) s.rowcum[tx * rows + y0 + lane] = t;
  }
  const int64_t xc = tx * kTileW + int64_t(threadIdx.x) * kCols;
  if (xc < w) {
    uint4 sum = colpart[0][threadIdx.x];
    for (int g = 1; g < kGroups; ++g) {
      const uint4 c = colpart[g][threadIdx.x];
      sum.x += c.x, sum.y += c.y, sum.z += c.z, sum.w += c.w;
    }
    *reinterpret_cast<uint4*>(s.colsum + ty * w + xc) = sum;
  }
}

// Pass 2: the output.
template <typename T, bool Vec>
__global__ void __launch_bounds__(kThreads) tiles(const uint8_t* __restrict__ in, int64_t w, int64_t rows,
                                                  bool squared, Scratch s, const T* __restrict__ band_above,
                                                  T* __restrict__ out, int64_t tile_row0) {
  __shared__ uint32_t warp_total[2][kWarps];
  __shared__ uint64_t warp_above[kWarps];
  __shared__ uint64_t left[kTileH];  // L(tx, y) of the tile's rows
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t tx = blockIdx.x, ty = tile_row0 + blockIdx.y, ntx = gridDim.x;
  const int64_t x = tx * kTileW + int64_t(threadIdx.x) * kCols;
  const int64_t y0 = ty * kTileH, y_end = min(rows, y0 + kTileH);
  if (threadIdx.x < kTileH && y0 + threadIdx.x < y_end) left[threadIdx.x] = s.left[tx * rows + y0 + threadIdx.x];
  uint32_t packed[kTileH];
  load_tile_columns<Vec>(in, w, x, y0, y_end, packed);
  // top(x) = I(y0 - 1, x): the corner, the prefix of A over the tile's columns up to x, and
  // the previous band's last row.
  uint64_t top[kCols];
  uint64_t acc = 0;
  for (int j = 0; j < kCols; ++j) {
    acc += x + j < w ? s.above[ty * w + x + j] : 0;
    top[j] = acc;
  }
  const uint64_t incl = cuda::warp_inclusive_sum(acc);
  if (lane == 31) warp_above[warp] = incl;
  __syncthreads();
  uint64_t base = s.corner[ty * ntx + tx] + incl - acc;
  for (int k = 0; k < warp; ++k) base += warp_above[k];
  for (int j = 0; j < kCols; ++j) top[j] += base + (band_above && x + j < w ? uint64_t(band_above[x + j]) : 0);

  uint32_t col[kCols] = {0, 0, 0, 0};
#pragma unroll
  for (int r = 0; r < kTileH; ++r) {
    const int64_t y = y0 + r;
    if (y >= y_end) break;  // the same for the whole block
    uint32_t run[kCols];
    uint32_t acc_row = 0;
    for (int j = 0; j < kCols; ++j) {
      col[j] += pixel_term(packed[r], j, squared);
      acc_row += col[j];
      run[j] = acc_row;  // S within this thread's columns
    }
    const uint32_t incl_row = cuda::warp_inclusive_sum(acc_row);
    const int buf = int(y & 1);  // double-buffered: one barrier a row
    if (lane == 31) warp_total[buf][warp] = incl_row;
    __syncthreads();
    uint32_t offset = incl_row - acc_row;
    for (int k = 0; k < warp; ++k) offset += warp_total[buf][k];
    const uint64_t row_base = left[r] + offset;
    uint64_t v[kCols];
    for (int j = 0; j < kCols; ++j) v[j] = top[j] + row_base + run[j];
    if (x < w) store4<T, Vec>(out + y * w + x, x, w, v);
  }
}

// dst[t * stride] = acc + the sum of src[t' * stride] for t0 <= t' < t, for t in [t0, t1): the
// loads go out 16 at a time before their stores (src and dst never overlap), so a thread waits
// on memory once per 8 elements, not once per element.
__device__ __forceinline__ void exclusive_scan_strided(const uint32_t* src, uint64_t* dst, int64_t t0,
                                                       int64_t t1, int64_t stride, uint64_t acc) {
  constexpr int kBatch = 8;
  for (int64_t t = t0; t < t1; t += kBatch) {
    uint32_t c[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) c[k] = t + k < t1 ? __ldg(src + (t + k) * stride) : 0;
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if (t + k < t1) dst[(t + k) * stride] = acc;
      acc += c[k];
    }
  }
}

// The three carry jobs in one launch (256 threads a block):
//   blocks [0, n_above):       16 columns each; 16 threads a column, each scanning a chunk of
//                              the tile rows (one round trip to memory per 8 tile rows)
//   blocks [n_above, +n_left): one row a thread, the exclusive sum of rowcum over the tiles
//   blocks [.., +ntx):         one tile column each; C(ty, tx) = exclusive sum over ty of the
//                              row part sum_{tx' < tx} (tile total of (ty, tx'))
constexpr int kCarryCols = 16, kCarryParts = kThreads / kCarryCols;
__global__ void __launch_bounds__(kThreads, 4) carries(Scratch s, int64_t w, int64_t rows, int64_t n_above,
                                                    int64_t n_left) {
  __shared__ uint64_t chunk_sum[kCarryParts][kCarryCols];
  __shared__ cuda::BlockScratch<uint64_t> scan;
  const int64_t ntx = ntx_of(w), nty = nty_of(rows);
  const int64_t b = blockIdx.x;
  if (b < n_above) {
    const int col = threadIdx.x % kCarryCols, part = threadIdx.x / kCarryCols;
    const int64_t x = b * kCarryCols + col;
    const int64_t chunk = (nty + kCarryParts - 1) / kCarryParts, t0 = part * chunk, t1 = min(nty, t0 + chunk);
    uint64_t sum = 0;
    if (x < w) {
#pragma unroll 8
      for (int64_t t = t0; t < t1; ++t) sum += __ldg(s.colsum + t * w + x);
    }
    chunk_sum[part][col] = sum;
    __syncthreads();
    uint64_t acc = 0;
    for (int k = 0; k < part; ++k) acc += chunk_sum[k][col];
    if (x < w) exclusive_scan_strided(s.colsum + x, s.above + x, t0, t1, w, acc);
  } else if (b < n_above + n_left) {
    const int64_t y = (b - n_above) * kThreads + threadIdx.x;
    if (y < rows) exclusive_scan_strided(s.rowcum + y, s.left + y, 0, ntx, rows, 0);
  } else {
    const int64_t tx = b - n_above - n_left;
    uint64_t carry = 0;
    for (int64_t t0 = 0; t0 < nty; t0 += kThreads) {
      const int64_t ty = t0 + threadIdx.x;
      uint64_t part = 0;
      if (ty < nty) {
        const int64_t last = min(rows, (ty + 1) * kTileH) - 1;  // rowcum there = the tile's total
#pragma unroll 8
        for (int64_t t = 0; t < tx; ++t) part += s.rowcum[t * rows + last];
      }
      uint64_t total;
      const uint64_t excl = cuda::block_exclusive_sum(part, scan, &total);
      if (ty < nty) s.corner[ty * ntx + tx] = carry + excl;
      carry += total;
    }
  }
}

template <typename T, bool Vec>
Status launch_passes(const uint8_t* in, int64_t w, int64_t rows, bool squared, const Scratch& s,
                     const T* band_above, T* out, cudaStream_t stream) {
  const int64_t ntx = ntx_of(w), nty = nty_of(rows);
  for (int64_t t0 = 0; t0 < nty; t0 += kMaxGridY) {
    const dim3 grid(unsigned(ntx), unsigned(std::min(kMaxGridY, nty - t0)));
    if (Vec && w % 16 == 0)
      tile_sums_wide<<<grid, kThreads, 0, stream>>>(in, w, rows, squared, s, t0);
    else
      tile_sums<Vec><<<grid, kThreads, 0, stream>>>(in, w, rows, squared, s, t0);
    CUDA_CHECK_LAUNCH();
  }
  const int64_t n_above = (w + kCarryCols - 1) / kCarryCols, n_left = (rows + kThreads - 1) / kThreads;
  carries<<<unsigned(n_above + n_left + ntx), kThreads, 0, stream>>>(s, w, rows, n_above, n_left);
  CUDA_CHECK_LAUNCH();
  for (int64_t t0 = 0; t0 < nty; t0 += kMaxGridY) {
    const dim3 grid(unsigned(ntx), unsigned(std::min(kMaxGridY, nty - t0)));
    tiles<T, Vec><<<grid, kThreads, 0, stream>>>(in, w, rows, squared, s, band_above, out, t0);
    CUDA_CHECK_LAUNCH();
  }
  return Status::Ok();
}

struct Kernels {
  static constexpr const char* kName = "cuda-opt: tiles of 32 x 1024 (tile_sums, carries, tiles)";
  static constexpr int64_t kMaxBandRows = int64_t(1) << 40;
  static uint64_t scratch_bytes(int64_t w, int64_t rows, size_t) {
    return uint64_t(nty_of(rows) * w) * 12 + uint64_t(ntx_of(w) * rows) * 12 + uint64_t(nty_of(rows) * ntx_of(w)) * 8 + 64;
  }
  template <typename T>
  static Status band(const uint8_t* in, T* out, const T* above, int64_t w, int64_t rows, bool squared,
                     unsigned char* scratch, cudaStream_t stream) {
    const int64_t ntx = ntx_of(w), nty = nty_of(rows);
    Scratch s;
    s.above = reinterpret_cast<uint64_t*>(scratch);
    s.left = s.above + nty * w;
    s.corner = s.left + ntx * rows;
    // colsum 16-byte aligned (tile_sums_wide stores a uint4 a thread): one u64 of padding when
    // the u64 arrays before it count odd (e.g. 32x32: 32 + 32 + 1); the 64 spare bytes of
    // scratch_bytes hold it.
    s.colsum = reinterpret_cast<uint32_t*>(s.corner + nty * ntx + ((nty * w + ntx * rows + nty * ntx) & 1));
    s.rowcum = s.colsum + nty * w;
    return w % 4 == 0 ? launch_passes<T, true>(in, w, rows, squared, s, above, out, stream)
                      : launch_passes<T, false>(in, w, rows, squared, s, above, out, stream);
  }
};

}  // namespace parvis::integral::opt

PARVIS_INTEGRAL_DEVICE_ENTRY_POINTS(opt::Kernels)
