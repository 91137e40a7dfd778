// Integral image, cuda-naive: seed 004's pipeline as it describes it. (1) Each row scanned by the
// seed's shared-memory up-sweep / down-sweep (Blelloch) kernel, one element per thread, blocks of
// 1024; rows wider than one block save each block's total in `block_sums`, which are scanned the
// same way (recursively, for rows wider than 1024 blocks) and added back. (2) Transpose (32x33
// shared-memory tiles). (3) The same row scan on the transposed matrix (the columns), starting
// from the row above the band. (4) Transpose back. In the output type throughout (exact).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "integral/driver.cuh"

namespace parvis::integral::naive {

constexpr int kBlock = 1024;  // the seed's block: one element per thread
constexpr int64_t kMaxGridY = 65535;

template <typename T> __device__ __forceinline__ T load_value(const uint8_t* p, bool squared) {
  const uint32_t v = *p;
  return T(squared ? v * v : v);
}
template <typename T> __device__ __forceinline__ T load_value(const T* p, bool) { return *p; }

// The seed's scan_kernel: rows of m elements, row `row0 + blockIdx.y`, block blockIdx.x.
template <typename In, typename T>
__global__ void scan_kernel(const In* in, T* out, T* block_sums, int64_t m, int64_t nblocks,
                            int64_t row0, bool squared) {
  extern __shared__ unsigned char smem[];
  T* temp = reinterpret_cast<T*>(smem);
  const int tid = threadIdx.x;
  const int64_t row = row0 + blockIdx.y;
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + tid;
  temp[tid] = idx < m ? load_value<T>(in + row * m + idx, squared) : T(0);
  __syncthreads();
  for (int offset = 1; offset < blockDim.x; offset *= 2) {  // up-sweep
    const int index = (tid + 1) * offset * 2 - 1;
    __syncthreads();
    if (index < blockDim.x) temp[index] += temp[index - offset];
  }
  for (int offset = blockDim.x / 2; offset > 0; offset /= 2) {  // down-sweep
    const int index = (tid + 1) * offset * 2 - 1;
    __syncthreads();
    if (index + offset < blockDim.x) temp[index + offset] += temp[index];
  }
  __syncthreads();
  if (tid == blockDim.x - 1) block_sums[row * nblocks + blockIdx.x] = temp[tid];
  if (idx < m) out[row * m + idx] = temp[tid];
}

// out[row][idx] += the scanned sums of the blocks before idx's block (+ offset[row], if given).
template <typename T>
__global__ void add_offsets(T* out, const T* scanned_sums, const T* offset, int64_t m,
                            int64_t nblocks, int64_t row0) {
  const int64_t row = row0 + blockIdx.y;
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= m) return;
  T add = blockIdx.x > 0 ? scanned_sums[row * nblocks + blockIdx.x - 1] : T(0);
  if (offset) add += offset[row];
  out[row * m + idx] += add;
}

// 32x33 tiles: out (cols x rows) = in (rows x cols) transposed.
template <typename T>
__global__ void transpose(const T* in, T* out, int64_t rows, int64_t cols, int64_t tile_row0) {
  __shared__ T tile[32][33];
  const int64_t bx = int64_t(blockIdx.x) * 32, by = (tile_row0 + blockIdx.y) * 32;
  for (int j = threadIdx.y; j < 32; j += blockDim.y) {
    const int64_t y = by + j, x = bx + threadIdx.x;
    if (y < rows && x < cols) tile[j][threadIdx.x] = in[y * cols + x];
  }
  __syncthreads();
  for (int j = threadIdx.y; j < 32; j += blockDim.y) {
    const int64_t x = bx + j, y = by + threadIdx.x;  // out row x, column y
    if (x < cols && y < rows) out[x * rows + y] = tile[threadIdx.x][j];
  }
}

int64_t blocks_of(int64_t m) { return (m + kBlock - 1) / kBlock; }

// Elements of the block-sum levels for `rows` rows of m.
int64_t sums_elems(int64_t rows, int64_t m) {
  int64_t total = 0;
  for (int64_t nb = blocks_of(m); ; nb = blocks_of(nb)) {
    total += rows * nb;
    if (nb <= 1) break;
  }
  return total;
}

// Inclusive scan of each of `rows` rows of m elements: in -> out (may be the same for T),
// then + offset[row] when offset is given. `sums` holds sums_elems(rows, m) elements.
template <typename In, typename T>
Status scan_rows(const In* in, T* out, const T* offset, int64_t rows, int64_t m, bool squared, T* sums) {
  const int64_t nb = blocks_of(m);
  for (int64_t r0 = 0; r0 < rows; r0 += kMaxGridY) {
    const dim3 grid(unsigned(nb), unsigned(std::min(kMaxGridY, rows - r0)));
    scan_kernel<In, T><<<grid, kBlock, kBlock * sizeof(T)>>>(in, out, sums, m, nb, r0, squared);
    CUDA_CHECK_LAUNCH();
  }
  if (nb > 1) PARVIS_TRY((scan_rows<T, T>(sums, sums, nullptr, rows, nb, false, sums + rows * nb)));
  if (nb > 1 || offset) {
    for (int64_t r0 = 0; r0 < rows; r0 += kMaxGridY) {
      const dim3 grid(unsigned(nb), unsigned(std::min(kMaxGridY, rows - r0)));
      add_offsets<T><<<grid, kBlock>>>(out, sums, offset, m, nb, r0);
      CUDA_CHECK_LAUNCH();
    }
  }
  return Status::Ok();
}

template <typename T>
Status transpose_all(const T* in, T* out, int64_t rows, int64_t cols) {
  const int64_t tiles_y = (rows + 31) / 32;
  for (int64_t t0 = 0; t0 < tiles_y; t0 += kMaxGridY) {
    const dim3 grid(unsigned((cols + 31) / 32), unsigned(std::min(kMaxGridY, tiles_y - t0)));
    transpose<T><<<grid, dim3(32, 8)>>>(in, out, rows, cols, t0);
    CUDA_CHECK_LAUNCH();
  }
  return Status::Ok();
}

struct Kernels {
  static constexpr const char* kName = "cuda-naive: seed 004's row scans and transposes";
  static constexpr int64_t kMaxBandRows = int64_t(1) << 40;
  static uint64_t scratch_bytes(int64_t w, int64_t rows, size_t elem) {
    return uint64_t(w * rows + std::max(sums_elems(rows, w), sums_elems(w, rows))) * elem;
  }
  template <typename T>
  static Status band(const uint8_t* in, T* out, const T* above, int64_t w, int64_t rows, bool squared,
                     unsigned char* scratch, cudaStream_t) {
    T* tmp = reinterpret_cast<T*>(scratch);
    T* sums = tmp + w * rows;
    PARVIS_TRY((scan_rows<uint8_t, T>(in, tmp, nullptr, rows, w, squared, sums)));  // rows
    PARVIS_TRY(transpose_all(tmp, out, rows, w));                                  // -> w x rows
    PARVIS_TRY((scan_rows<T, T>(out, tmp, above, w, rows, false, sums)));           // columns
    return transpose_all(tmp, out, w, rows);                                       // -> rows x w
  }
};

}  // namespace parvis::integral::naive

PARVIS_INTEGRAL_DEVICE_ENTRY_POINTS(naive::Kernels)
