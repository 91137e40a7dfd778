// GPU-side timing of template matching on a CUDA version (issue 5), beside `./main bench match`
// (which times whole matcher_run calls, host staging included). This one reports the CUDA
// event times of Result::timings: the source is uploaded (upload), the best match is computed
// on the device (compute), and the 32-byte result comes back (download); median and minimum
// over repeated runs of a prepared matcher. It also checks every answer (the template is cut
// from the source, so the best match is that place with score 0), measures the FFT map's
// rounding error against the exact map, and times cuFFT double transforms for a few sizes.
//
// Not built by the Makefile: bench/run_cuda_match_timing.sh links it with a CUDA version's
// objects (all but main.cpp.o). Usage: timing [REPS] [sizes|time|error] [WORKLOAD substring].
// Output: one line per measurement on stdout.
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/image.hpp"
#include "common/splitmix.hpp"
#include "match/match.hpp"

using namespace parvis;

namespace {

SplitMix64 rng{12345};
uint64_t next_u64() { return rng.next(); }

// Smooth value noise (3 octaves) plus fine noise: natural-looking, few exact ties.
Image scene(int w, int h) {
  Image img;
  img.width = w, img.height = h, img.channels = 1, img.stride = size_t(w);
  img.pixels.assign(size_t(w) * h, 0);
  std::vector<float> acc(size_t(w) * h, 0.f);
  float amp = 1.f;
  for (int cell = 128; cell >= 8; cell /= 4, amp *= 0.5f) {
    const int gw = w / cell + 2, gh = h / cell + 2;
    std::vector<float> g(size_t(gw) * gh);
    for (float& v : g) v = float(next_u64() >> 40) / float(1 << 24);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const float fx = float(x) / cell, fy = float(y) / cell;
        const int ix = int(fx), iy = int(fy);
        const float tx = fx - ix, ty = fy - iy;
        const float a = g[size_t(iy) * gw + ix], b = g[size_t(iy) * gw + ix + 1];
        const float c = g[size_t(iy + 1) * gw + ix], d = g[size_t(iy + 1) * gw + ix + 1];
        acc[size_t(y) * w + x] += amp * ((a * (1 - tx) + b * tx) * (1 - ty) + (c * (1 - tx) + d * tx) * ty);
      }
  }
  for (size_t i = 0; i < acc.size(); ++i) {
    const int v = int(acc[i] / 1.75f * 230.f) + int(next_u64() % 21) - 10 + 12;
    img.pixels[i] = uint8_t(std::min(255, std::max(0, v)));
  }
  return img;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Workload {
  int W, H, w, h;
  const char* methods;
};

void time_workload(const Workload& wl, int reps) {
  const Image src = scene(wl.W, wl.H);
  const int tx = (wl.W - wl.w) * 5 / 8, ty = (wl.H - wl.h) * 3 / 8;
  const Image tpl = crop(src, Rect{tx, ty, wl.w, wl.h});
  std::vector<std::string> methods(1);
  for (const char* c = wl.methods; *c; ++c) {
    if (*c == ' ') methods.emplace_back();
    else methods.back() += *c;
  }
  for (const std::string& m : methods) {
    const char* mname = m.c_str();
    match::Params p;
    p.metric = m == "sad-direct" ? match::Metric::SAD : match::Metric::SSD;
    p.method = m == "fft" ? match::Method::FFT : m == "auto" ? match::Method::Auto : match::Method::Direct;
    match::MatcherPtr mp;
    match::Result r;
    Status s = match::matcher_create(tpl, p, &mp);
    if (s.ok()) s = match::matcher_run(mp.get(), src, &r);  // warm-up: plans, buffers, graph
    if (!s.ok()) {
      std::printf("%dx%d/%dx%d %s ERROR %s\n", wl.W, wl.H, wl.w, wl.h, mname, s.message.c_str());
      continue;
    }
    std::vector<double> up, comp, down, wall;
    const int n = m == "direct" && double(wl.W) * wl.H * wl.w * wl.h > 5e10 ? 3 : reps;
    for (int i = 0; i < n && s.ok(); ++i) {
      const double t0 = now_ms();
      s = match::matcher_run(mp.get(), src, &r);
      wall.push_back(now_ms() - t0);
      up.push_back(r.timings.upload_ms);
      comp.push_back(r.timings.compute_ms);
      down.push_back(r.timings.download_ms);
    }
    if (!s.ok()) {
      std::printf("%dx%d/%dx%d %s ERROR %s\n", wl.W, wl.H, wl.w, wl.h, mname, s.message.c_str());
      continue;
    }
    const match::Position b = r.best.at(0);
    const bool right = b.x == tx && b.y == ty && b.score == 0;
    std::printf("%dx%d/%dx%d %-10s used=%-6s compute median %8.1f us min %8.1f us | upload %7.1f us "
                "download %5.1f us | wall %8.1f us | best (%d,%d) %llu %s | %s\n",
                wl.W, wl.H, wl.w, wl.h, mname, match::method_name(r.method_used),
                median(comp) * 1e3, *std::min_element(comp.begin(), comp.end()) * 1e3,
                median(up) * 1e3, median(down) * 1e3, median(wall) * 1e3, b.x, b.y,
                (unsigned long long)b.score, right ? "ok" : "WRONG", r.explain.c_str());
    std::fflush(stdout);
  }
}

// max |FFT map - exact map| on one workload.
void fft_error(int W, int H, int w, int h) {
  const Image src = scene(W, H);
  const Image tpl = crop(src, Rect{(W - w) / 3, (H - h) / 2, w, h});
  match::Params pf, pd;
  pf.method = match::Method::FFT;
  pd.method = match::Method::Direct;
  pf.want_map = pd.want_map = true;
  match::MatcherPtr mf, md;
  match::Result rf, rd;
  Status s = match::matcher_create(tpl, pf, &mf);
  if (s.ok()) s = match::matcher_run(mf.get(), src, &rf);
  if (s.ok()) s = match::matcher_create(tpl, pd, &md);
  if (s.ok()) s = match::matcher_run(md.get(), src, &rd);
  if (!s.ok()) {
    std::printf("fft-error %dx%d/%dx%d ERROR %s\n", W, H, w, h, s.message.c_str());
    return;
  }
  double worst = 0, biggest = 0;
  for (size_t i = 0; i < rd.map.size(); ++i) {
    worst = std::max(worst, std::fabs(rf.map[i] - rd.map[i]));
    biggest = std::max(biggest, std::fabs(rd.map[i]));
  }
  const bool same = rf.best.at(0).x == rd.best.at(0).x && rf.best.at(0).y == rd.best.at(0).y &&
                    rf.best.at(0).score == rd.best.at(0).score;
  std::printf("fft-error %dx%d/%dx%d: max |fft - exact| = %.3g (largest score %.3g, relative %.3g); "
              "best fft (%d,%d) %llu vs exact (%d,%d) %llu %s; %s\n",
              W, H, w, h, worst, biggest, worst / biggest, rf.best[0].x, rf.best[0].y,
              (unsigned long long)rf.best[0].score, rd.best[0].x, rd.best[0].y,
              (unsigned long long)rd.best[0].score, same ? "same" : "DIFFERENT", rf.explain.c_str());
  std::fflush(stdout);
}

// D2Z + Z2D time for a few padded sizes (what good_size chooses between).
void fft_sizes() {
  const int sizes[][2] = {{1344, 1029}, {1344, 1050}, {1344, 1080}, {1344, 1152}, {1350, 1080},
                          {1372, 1080}, {1400, 1080}, {1440, 1080}, {1536, 1080}, {1536, 1152},
                          {2048, 2048}, {3840, 2160}, {4096, 2304}, {3840, 2187}, {1920, 1080},
                          {2048, 1152}, {1200, 2000}, {1200, 2016}, {1280, 2048}, {640, 480},
                          {1029, 800}, {1152, 800}, {1050, 784}};
  for (const auto& sz : sizes) {
    const int P = sz[0], Q = sz[1];
    double* real = nullptr;
    cufftDoubleComplex* spec = nullptr;
    if (cudaMalloc(&real, sizeof(double) * P * Q) != cudaSuccess ||
        cudaMalloc(&spec, sizeof(cufftDoubleComplex) * (P / 2 + 1) * Q) != cudaSuccess) {
      std::printf("fft-size %dx%d: alloc failed\n", P, Q);
      return;
    }
    cudaMemset(real, 0, sizeof(double) * P * Q);
    cufftHandle f, i;
    if (cufftPlan2d(&f, Q, P, CUFFT_D2Z) != CUFFT_SUCCESS || cufftPlan2d(&i, Q, P, CUFFT_Z2D) != CUFFT_SUCCESS) {
      std::printf("fft-size %dx%d: plan failed\n", P, Q);
      return;
    }
    cudaEvent_t a, b, c;
    cudaEventCreate(&a), cudaEventCreate(&b), cudaEventCreate(&c);
    std::vector<double> tf, ti;
    for (int r = 0; r < 12; ++r) {
      cudaEventRecord(a);
      cufftExecD2Z(f, real, spec);
      cudaEventRecord(b);
      cufftExecZ2D(i, spec, real);
      cudaEventRecord(c);
      cudaEventSynchronize(c);
      float x = 0, y = 0;
      cudaEventElapsedTime(&x, a, b);
      cudaEventElapsedTime(&y, b, c);
      if (r >= 2) tf.push_back(x * 1e3), ti.push_back(y * 1e3);
    }
    // The same size in single precision, for comparison (cuda-opt does not use it: see
    // match/fft_common.cuh for why the bound needs double).
    cufftHandle ff, fi;
    std::vector<double> sf, si;
    if (cufftPlan2d(&ff, Q, P, CUFFT_R2C) == CUFFT_SUCCESS && cufftPlan2d(&fi, Q, P, CUFFT_C2R) == CUFFT_SUCCESS) {
      for (int r = 0; r < 12; ++r) {
        cudaEventRecord(a);
        cufftExecR2C(ff, reinterpret_cast<float*>(real), reinterpret_cast<cufftComplex*>(spec));
        cudaEventRecord(b);
        cufftExecC2R(fi, reinterpret_cast<cufftComplex*>(spec), reinterpret_cast<float*>(real));
        cudaEventRecord(c);
        cudaEventSynchronize(c);
        float x = 0, y = 0;
        cudaEventElapsedTime(&x, a, b);
        cudaEventElapsedTime(&y, b, c);
        if (r >= 2) sf.push_back(x * 1e3), si.push_back(y * 1e3);
      }
      cufftDestroy(ff), cufftDestroy(fi);
    }
    std::printf("fft-size %dx%d: D2Z %.1f us, Z2D %.1f us (double; %.1f MB real) | float R2C %.1f us, C2R %.1f us\n",
                P, Q, median(tf), median(ti), 8.0 * P * Q / 1e6, sf.empty() ? 0.0 : median(sf),
                si.empty() ? 0.0 : median(si));
    cufftDestroy(f), cufftDestroy(i);
    cudaFree(real), cudaFree(spec);
    cudaEventDestroy(a), cudaEventDestroy(b), cudaEventDestroy(c);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 30;
  const std::string only = argc > 2 ? argv[2] : "";
  const std::string filter = argc > 3 ? argv[3] : "";  // e.g. "1920x1080/16x16"
  if (only.empty() || only == "sizes") fft_sizes();
  const Workload wls[] = {
      {1326, 1025, 479, 432, "fft auto"},
      {3840, 2160, 128, 128, "fft auto direct"},
      {1920, 1080, 16, 16, "direct fft auto sad-direct"},
      {1200, 1983, 150, 150, "fft auto"},
      {640, 480, 64, 64, "direct fft auto sad-direct"},
      {1920, 1080, 32, 32, "direct fft auto"},
      {1920, 1080, 64, 64, "direct fft auto"},
      {800, 500, 100, 60, "direct fft auto"},
  };
  if (only.empty() || only == "time")
    for (const Workload& wl : wls) {
      char name[64];
      std::snprintf(name, sizeof name, "%dx%d/%dx%d", wl.W, wl.H, wl.w, wl.h);
      if (filter.empty() || std::string(name).find(filter) != std::string::npos) time_workload(wl, reps);
    }
  if (only.empty() || only == "error") {
    fft_error(640, 480, 64, 64);
    fft_error(1027, 769, 37, 23);
    fft_error(1326, 1025, 479, 432);
  }
  return 0;
}
