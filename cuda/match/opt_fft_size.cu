// cuda-opt template matching: the cuFFT pipeline's padded size (opt_fft.cu), timed once per
// source size and process.
#include <algorithm>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "match/opt_matcher.cuh"

namespace parvis::match::opt {

namespace {

// ---- FFT sizes: measured once per source size and process ---------------------------------------
// cuFFT's speed depends on the factors of each length more than a simple model says (a larger
// power-of-two-rich size can be a third faster than the smallest 7-smooth one; numbers in
// docs/decisions/021). So a few candidate sizes per dimension are timed (one forward +
// inverse pair after a warm-up, best of two) and the fastest kept: the smallest 7-smooth length,
// the smallest 2^a x {1, 3, 9}, the next power of two; pairs over 1.8x the smallest area are not
// tried. match.fft_tune=0 takes the smallest 7-smooth sizes without timing.
std::vector<int> length_candidates(int n) {
  std::vector<int> c{cuda::fft::good_size(n)};
  int best23 = 0, pow2 = 1;
  while (pow2 < n) pow2 *= 2;
  for (int f : {1, 3, 9})
    for (int64_t v = f; v < int64_t(4) * n + 16; v *= 2)
      if (v >= n) {
        if (!best23 || v < best23) best23 = int(v);
        break;
      }
  for (int v : {best23, pow2})
    if (std::find(c.begin(), c.end(), v) == c.end()) c.push_back(v);
  return c;
}

}  // namespace

Status tune_fft_size(Matcher& m, int W, int H, int* P, int* Q) {
  static std::mutex lock;
  static std::map<std::pair<int, int>, std::pair<int, int>> cache;
  std::lock_guard<std::mutex> guard(lock);
  const auto key = std::make_pair(W, H);
  if (auto it = cache.find(key); it != cache.end()) {
    *P = it->second.first, *Q = it->second.second;
    return Status::Ok();
  }
  *P = cuda::fft::good_size(W), *Q = cuda::fft::good_size(H);
  std::vector<std::pair<int, int>> pairs;
  const double min_area = double(*P) * *Q;
  for (int p : length_candidates(W))
    for (int q : length_candidates(H))
      if (double(p) * q <= 1.8 * min_area) pairs.emplace_back(p, q);
  if (pairs.size() > 1 && m.tuning.fft_tune) {
    size_t max_real = 0, max_spec = 0;
    for (auto [p, q] : pairs) {
      max_real = std::max(max_real, size_t(p) * q);
      max_spec = std::max(max_spec, size_t(p / 2 + 1) * q);
    }
    DeviceBuffer<double> real;
    DeviceBuffer<double2> spec;
    PARVIS_TRY(real.alloc(max_real));
    PARVIS_TRY(spec.alloc(max_spec));
    CUDA_CHECK(cudaMemsetAsync(real.get(), 0, max_real * sizeof(double), m.stream));
    float best_ms = 1e30f;
    for (auto [p, q] : pairs) {
      cuda::fft::Plan f, i;
      PARVIS_TRY(f.make_2d(q, p, CUFFT_D2Z));
      PARVIS_TRY(i.make_2d(q, p, CUFFT_Z2D));
      CUFFT_CHECK(cufftSetStream(f.get(), m.stream));
      CUFFT_CHECK(cufftSetStream(i.get(), m.stream));
      float ms = 1e30f;
      for (int rep = 0; rep < 3; ++rep) {
        CUDA_CHECK(cudaEventRecord(m.ev[0], m.stream));
        CUFFT_CHECK(cufftExecD2Z(f.get(), real.get(), spec.get()));
        CUFFT_CHECK(cufftExecZ2D(i.get(), spec.get(), real.get()));
        CUDA_CHECK(cudaEventRecord(m.ev[1], m.stream));
        CUDA_CHECK(cudaEventSynchronize(m.ev[1]));
        float t = 0;
        CUDA_CHECK(cudaEventElapsedTime(&t, m.ev[0], m.ev[1]));
        if (rep > 0) ms = std::min(ms, t);  // rep 0 warms up
      }
      if (ms < best_ms) best_ms = ms, *P = p, *Q = q;
    }
  }
  cache[key] = std::make_pair(*P, *Q);
  return Status::Ok();
}

}  // namespace parvis::match::opt
