// Experiment (issue 5, the 3840x2160/128x128 target): does fusing cuda-opt's separate passes
// into cuFFT through LTO load callbacks pay? Times, per size, median us of 15:
//   A  fill (u8 -> zero-padded double) + D2Z + product kernel + Z2D   (cuda-opt's passes today)
//   B  D2Z reading the u8 source through a load callback + product + Z2D
//   C  fill + D2Z + Z2D multiplying by the template spectrum in its load callback
//   D  both callbacks
// and checks that B, C, D give A's output (max |difference|), plus the plan (JIT link) time.
// Build and run: see bench/README.md, "Experiments" (needs cb.fatbin from fft_callbacks_lto.cu).
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

#define CK(x)                                                                            \
  do {                                                                                   \
    long long e_ = (long long)(x);                                                       \
    if (e_ != 0) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s failed (%lld)\n", __FILE__, __LINE__, #x, e_);    \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

struct SourceInfo {
  const unsigned char* src;
  unsigned pitch, P, W, H;
};

__global__ void fill(const unsigned char* src, unsigned pitch, int W, int H, int P, int Q, double* out) {
  const size_t n = size_t(P) * Q;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const int y = int(i / P), x = int(i - size_t(y) * P);
    out[i] = (x < W && y < H) ? double(src[size_t(y) * pitch + x]) : 0.0;
  }
}

__global__ void mul(double2* a, const double2* b, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const double2 x = a[i], y = b[i];
    a[i] = make_double2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
  }
}

std::vector<char> g_fatbin;

cufftHandle make_plan(int Q, int P, cufftType type, const char* cb, cufftXtCallbackType cbt, void* info_dev, double* plan_ms) {
  cufftHandle h;
  CK(cufftCreate(&h));
  const auto t0 = std::chrono::steady_clock::now();
  if (cb) {
    void* info = info_dev;
    CK(cufftXtSetJITCallback(h, cb, g_fatbin.data(), g_fatbin.size(), cbt, &info));
  }
  size_t ws = 0;
  const cufftResult made = cufftMakePlan2d(h, Q, P, type, &ws);
  if (made != CUFFT_SUCCESS) {
    std::printf("  plan %s with callback %s: cufftMakePlan2d failed (%d)\n",
                type == CUFFT_D2Z ? "D2Z" : "Z2D", cb ? cb : "-", int(made));
    cufftDestroy(h);
    return 0;
  }
  *plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return h;
}

int main(int argc, char** argv) {
  std::ifstream f(argc > 1 ? argv[1] : "cb.fatbin", std::ios::binary);
  g_fatbin.assign(std::istreambuf_iterator<char>(f), {});
  if (g_fatbin.empty()) { std::fprintf(stderr, "no fatbin\n"); return 1; }
  const int cases[][4] = {{3840, 2160, 4096, 2304}, {1326, 1025, 1344, 1152}};
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (const auto& c : cases) {
    const int W = c[0], H = c[1], P = c[2], Q = c[3];
    const unsigned pitch = (W + 31) / 32 * 32;
    const size_t nr = size_t(P) * Q, nc = size_t(P / 2 + 1) * Q;
    std::vector<unsigned char> h_src(size_t(pitch) * H);
    unsigned r = 12345;
    for (auto& v : h_src) r = r * 1103515245u + 12345u, v = (unsigned char)(r >> 24);
    std::vector<double2> h_t(nc);
    for (auto& v : h_t) r = r * 1103515245u + 12345u, v.x = (r >> 8) * 1e-9, r = r * 1103515245u + 12345u, v.y = (r >> 8) * 1e-9;
    unsigned char* src; double* real; double2 *spec, *tspec; SourceInfo* info;
    CK(cudaMalloc(&src, h_src.size()));
    CK(cudaMalloc(&real, nr * 8));
    CK(cudaMalloc(&spec, nc * 16));
    CK(cudaMalloc(&tspec, nc * 16));
    CK(cudaMalloc(&info, sizeof(SourceInfo)));
    CK(cudaMemcpy(src, h_src.data(), h_src.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(tspec, h_t.data(), nc * 16, cudaMemcpyHostToDevice));
    const SourceInfo hi{src, pitch, unsigned(P), unsigned(W), unsigned(H)};
    CK(cudaMemcpy(info, &hi, sizeof hi, cudaMemcpyHostToDevice));
    double t_f, t_i, t_fcb, t_icb;
    cufftHandle f0 = make_plan(Q, P, CUFFT_D2Z, nullptr, CUFFT_CB_UNDEFINED, nullptr, &t_f);
    cufftHandle i0 = make_plan(Q, P, CUFFT_Z2D, nullptr, CUFFT_CB_UNDEFINED, nullptr, &t_i);
    cufftHandle f1 = make_plan(Q, P, CUFFT_D2Z, "load_source_u8", CUFFT_CB_LD_REAL_DOUBLE, info, &t_fcb);
    cufftHandle i1 = make_plan(Q, P, CUFFT_Z2D, "load_times_template", CUFFT_CB_LD_COMPLEX_DOUBLE, tspec, &t_icb);
    std::printf("%dx%d (FFT %dx%d): plans D2Z %.1f ms, Z2D %.1f ms; with JIT callbacks %.1f ms, %.1f ms\n", W, H, P, Q, t_f, t_i, t_fcb, t_icb);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<double> ref;
    for (int variant = 0; variant < 4; ++variant) {
      const bool cb_fwd = variant & 1, cb_inv = variant & 2;
      if ((cb_fwd && !f1) || (cb_inv && !i1)) continue;  // that plan could not be made
      std::vector<float> t;
      for (int rep = 0; rep < 17; ++rep) {
        CK(cudaEventRecord(a));
        if (!cb_fwd) fill<<<sms * 8, 256>>>(src, pitch, W, H, P, Q, real);
        CK(cufftExecD2Z(cb_fwd ? f1 : f0, real, reinterpret_cast<cufftDoubleComplex*>(spec)));
        if (!cb_inv) mul<<<sms * 8, 256>>>(spec, tspec, nc);
        CK(cufftExecZ2D(cb_inv ? i1 : i0, reinterpret_cast<cufftDoubleComplex*>(spec), real));
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (rep >= 2) t.push_back(ms * 1000.f);
      }
      CK(cudaGetLastError());
      std::sort(t.begin(), t.end());
      std::vector<double> out(nr);
      CK(cudaMemcpy(out.data(), real, nr * 8, cudaMemcpyDeviceToHost));
      double diff = 0, mag = 0;
      if (variant == 0) ref = out;
      for (size_t k = 0; k < nr; ++k) diff = std::max(diff, std::fabs(out[k] - ref[k])), mag = std::max(mag, std::fabs(ref[k]));
      std::printf("  %c %-40s %7.1f us   max |diff| vs A %.3g (of %.3g)\n", 'A' + variant,
                  variant == 0 ? "fill + D2Z + product + Z2D" : variant == 1 ? "D2Z(u8 callback) + product + Z2D"
                  : variant == 2 ? "fill + D2Z + Z2D(product callback)" : "D2Z(u8 callback) + Z2D(product callback)",
                  t[t.size() / 2], diff, mag);
    }
    cufftDestroy(f0); cufftDestroy(i0);
    if (f1) cufftDestroy(f1);
    if (i1) cufftDestroy(i1);
    cudaFree(src); cudaFree(real); cudaFree(spec); cudaFree(tspec); cudaFree(info);
  }
  return 0;
}
