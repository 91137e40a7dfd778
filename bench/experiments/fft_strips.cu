// Experiment (issue 5, the 3840x2160/128x128 target): is the FFT cross-correlation faster when
// the frame is cut into horizontal strips whose spectra stay in the L2 cache (overlap-save in y:
// a strip of Qs rows gives Qs - h + 1 valid map rows)? Times, for a 3840x2160 frame and a
// 128-row template: forward D2Z + spectrum product + inverse Z2D, on the whole padded frame and
// on strips, in place and out of place. No correctness here: the kernels' data are zeros.
// Build and run: nvcc -O3 -arch=native bench/experiments/fft_strips.cu -lcufft -o /tmp/fft_strips
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define CK(x)                                                                              \
  do {                                                                                     \
    auto e_ = (x);                                                                         \
    if (e_ != 0) {                                                                         \
      std::fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #x, int(e_));   \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

__global__ void mul(double2* a, const double2* b, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const double2 x = a[i], y = b[i];
    a[i] = make_double2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
  }
}

// One configuration: `strips` transforms of P x Qs, in place or not. Median of reps (us).
double time_config(int P, int Qs, int strips, bool in_place, int reps) {
  const size_t nc = size_t(P / 2 + 1) * Qs;
  const size_t nr = in_place ? 2 * nc : size_t(P) * Qs;
  std::vector<double*> real(strips);
  std::vector<double2*> spec(strips);
  double2* tspec;
  for (int s = 0; s < strips; ++s) {
    CK(cudaMalloc(&real[s], nr * sizeof(double)));
    CK(cudaMemset(real[s], 0, nr * sizeof(double)));
    if (in_place) spec[s] = reinterpret_cast<double2*>(real[s]);
    else CK(cudaMalloc(&spec[s], nc * sizeof(double2)));
  }
  CK(cudaMalloc(&tspec, nc * sizeof(double2)));
  CK(cudaMemset(tspec, 0, nc * sizeof(double2)));
  cufftHandle f, i;
  CK(cufftPlan2d(&f, Qs, P, CUFFT_D2Z));
  CK(cufftPlan2d(&i, Qs, P, CUFFT_Z2D));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < reps + 2; ++r) {
    CK(cudaEventRecord(a));
    for (int s = 0; s < strips; ++s) {
      CK(cufftExecD2Z(f, real[s], reinterpret_cast<cufftDoubleComplex*>(spec[s])));
      mul<<<sms * 8, 256>>>(spec[s], tspec, nc);
      CK(cudaGetLastError());
      CK(cufftExecZ2D(i, reinterpret_cast<cufftDoubleComplex*>(spec[s]), real[s]));
    }
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (r >= 2) t.push_back(ms * 1000.f);
  }
  std::sort(t.begin(), t.end());
  cufftDestroy(f);
  cufftDestroy(i);
  for (int s = 0; s < strips; ++s) {
    cudaFree(real[s]);
    if (!in_place) cudaFree(spec[s]);
  }
  cudaFree(tspec);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t[t.size() / 2];
}

int main() {
  const int H = 2160, h = 128, map_h = H - h + 1;
  std::printf("3840x2160 frame, 128-row template (map 2033 rows): D2Z + product + Z2D, median us\n");
  for (int P : {3840, 4096}) {
    for (int Qs : {2160, 2304, 1152, 1280, 768, 640, 576, 512, 384}) {
      const int valid = Qs - h + 1;
      const int strips = Qs >= H ? 1 : (map_h + valid - 1) / valid;
      for (bool in_place : {false, true}) {
        const double us = time_config(P, Qs, strips, in_place, 15);
        std::printf("P %4d  strip %4d x %d (%5.1f M points)  %-12s %7.1f us\n", P, Qs, strips,
                    double(P) * Qs * strips / 1e6, in_place ? "in place" : "out of place", us);
      }
    }
  }
  return 0;
}
