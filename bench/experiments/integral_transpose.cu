// Experiment (issue 5): seed 000's optimized integral image — row prefix sums with the
// warp-shuffle block scan and block offsets, a 32x33 shared-memory transpose, the same row
// scan again, and the transpose back — timed alone on the bench sizes, to compare with
// cuda-opt's "integral of the source" stage (prepare_rows + col_tile_sums + col_scan_tiles,
// which also writes the padded FFT input) from ./main bench match on the same GPU.
// The result is checked against a host integral image.
// Build and run: nvcc -O3 -arch=native -Icuda -Isrc bench/experiments/integral_transpose.cu -o /tmp/it
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "scan.cuh"

#define CK(x)                                                                            \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));   \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

using parvis::cuda::BlockScratch;
using parvis::cuda::block_exclusive_sum;

constexpr int kThreads = 1024;

// One block per row: squares of the pixels (first pass) or the values (second pass), scanned
// in chunks of kThreads with the running total carried (the seed's block offsets).
template <typename In>
__global__ void row_scan(const In* in, int w, int h, bool square, uint32_t* out) {
  __shared__ BlockScratch<uint32_t> scratch;
  const int y = blockIdx.x;
  uint32_t carry = 0;
  for (int x0 = 0; x0 < w; x0 += kThreads) {
    const int x = x0 + threadIdx.x;
    uint32_t v = 0;
    if (x < w) {
      v = uint32_t(in[size_t(y) * w + x]);
      if (square) v *= v;
    }
    uint32_t total;
    const uint32_t ex = block_exclusive_sum(v, scratch, &total);
    if (x < w) out[size_t(y) * w + x] = carry + ex + v;
    carry += total;
  }
}

// 32x32 tiles through a 32x33 shared array (no bank conflicts): out (w x h) = in (h x w)^T.
__global__ void transpose(const uint32_t* in, int w, int h, uint32_t* out) {
  __shared__ uint32_t tile[32][33];
  const int x = blockIdx.x * 32 + threadIdx.x;
  for (int j = threadIdx.y; j < 32; j += blockDim.y) {
    const int y = blockIdx.y * 32 + j;
    if (x < w && y < h) tile[j][threadIdx.x] = in[size_t(y) * w + x];
  }
  __syncthreads();
  const int ox = blockIdx.y * 32 + threadIdx.x;
  for (int j = threadIdx.y; j < 32; j += blockDim.y) {
    const int oy = blockIdx.x * 32 + j;
    if (ox < h && oy < w) out[size_t(oy) * h + ox] = tile[threadIdx.x][j];
  }
}

int main() {
  const int sizes[][2] = {{1326, 1025}, {1200, 1983}, {1920, 1080}, {640, 480}, {3840, 2160}};
  std::printf("seed 000's integral image of squares (row scan, transpose, row scan, transpose), u32, median us of 21\n");
  for (const auto& s : sizes) {
    const int W = s[0], H = s[1];
    std::vector<uint8_t> img(size_t(W) * H);
    uint64_t r = 88172645463325252ull;
    for (auto& p : img) r ^= r << 13, r ^= r >> 7, r ^= r << 17, p = uint8_t(r);
    uint8_t* d_img;
    uint32_t *a, *b;
    CK(cudaMalloc(&d_img, img.size()));
    CK(cudaMalloc(&a, img.size() * 4));
    CK(cudaMalloc(&b, img.size() * 4));
    CK(cudaMemcpy(d_img, img.data(), img.size(), cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> t;
    const dim3 tb(32, 8);
    for (int rep = 0; rep < 23; ++rep) {
      CK(cudaEventRecord(e0));
      row_scan<uint8_t><<<H, kThreads>>>(d_img, W, H, true, a);
      transpose<<<dim3((W + 31) / 32, (H + 31) / 32), tb>>>(a, W, H, b);
      row_scan<uint32_t><<<W, kThreads>>>(b, H, W, false, a);
      transpose<<<dim3((H + 31) / 32, (W + 31) / 32), tb>>>(a, H, W, b);
      CK(cudaGetLastError());
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (rep >= 2) t.push_back(ms * 1000.f);
    }
    std::sort(t.begin(), t.end());
    // Check: b holds the inclusive integral (mod 2^32) of the squares, W x H row-major.
    std::vector<uint32_t> got(img.size()), want(img.size());
    CK(cudaMemcpy(got.data(), b, got.size() * 4, cudaMemcpyDeviceToHost));
    for (int y = 0; y < H; ++y) {
      uint32_t row = 0;
      for (int x = 0; x < W; ++x) {
        row += uint32_t(img[size_t(y) * W + x]) * img[size_t(y) * W + x];
        want[size_t(y) * W + x] = row + (y ? want[size_t(y - 1) * W + x] : 0u);
      }
    }
    std::printf("%dx%d: %.1f us (%s)\n", W, H, t[t.size() / 2], got == want ? "exact" : "WRONG");
    cudaFree(d_img);
    cudaFree(a);
    cudaFree(b);
  }
  return 0;
}
