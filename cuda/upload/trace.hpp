// upload.trace (copier.cu): a staged upload's timeline, printed on stderr.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "upload/kernels.cuh"

namespace parvis::cuda::upload {

// PARVIS_TUNING=upload.trace=1: where a staged upload's time goes, on stderr (µs from the call's start):
// the caller's steps; each piece's worker, when it began, when its slot was free, when its host
// copy ended and when its DMA was issued (or its flag set); each worker's span; then when the
// workers were done and when the stream was. The GPU's side by timed events: gpu[0] recorded at
// the call's start, gpu[1] by gpu_step (before a launch), gpu[2] at the end, so that the GPU's
// times read on the host's clock, give or take the first record's latency.
struct UploadTrace {
  using Clock = std::chrono::steady_clock;
  struct Piece {
    int worker = -1;
    size_t claim = 0;  // the first piece of the claim it was copied in
    size_t bytes = 0;  // the claim's bytes (0 on its later pieces)
    double at[4] = {};  // began, slot free, copied, issued
  };
  bool on = false;
  Clock::time_point t0 = Clock::now();
  std::vector<Piece> pieces;
  std::vector<std::pair<const char*, double>> steps;  // the caller's, in order
  cudaEvent_t gpu[3] = {};                             // owned by the copier; null: no GPU times
  cudaStream_t stream = nullptr;
  bool gpu_marked = false;  // gpu[1] recorded in this upload
  // The pull's times of each piece (mapped; host and device addresses): PullTime's, ns on the
  // GPU's clock.
  const unsigned long long* pull_times = nullptr;
  unsigned long long* pull_times_dev = nullptr;
  double setup = 0, issued = 0;

  unsigned long long pull_at(size_t piece, PullTime t) const {
    return pull_times[kPullTimes * piece + t];
  }
  double now() const { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }
  void mark(size_t i, int step) {
    if (on) pieces[i].at[step] = now();
  }
  void step(const char* name) {
    if (on) steps.emplace_back(name, now());
  }
  void gpu_step(const char* name) {
    step(name);
    if (on && gpu[1]) gpu_marked = cudaEventRecord(gpu[1], stream) == cudaSuccess;
  }
  void print(size_t bytes, int n, double since_prepare_ms, double done) const {
    std::fprintf(stderr,
                 "upload trace: %zu bytes, %zu pieces, %d workers, %.1f ms after prepare: set-up "
                 "%.0f us, issued by %.0f us, DMAs done %.0f us (%.1f GB/s)\n",
                 bytes, pieces.size(), n, since_prepare_ms, setup, issued, done, bytes / done * 1e-3);
    std::fprintf(stderr, "  steps:");
    for (const auto& s : steps) std::fprintf(stderr, " %s %.1f", s.first, s.second);
    float g1 = -1, g2 = -1;
    if (gpu[0] && cudaEventElapsedTime(&g2, gpu[0], gpu[2]) == cudaSuccess) {
      if (gpu_marked && cudaEventElapsedTime(&g1, gpu[0], gpu[1]) == cudaSuccess)
        std::fprintf(stderr, "  | GPU: launch %.1f", g1 * 1e3);
      std::fprintf(stderr, "  | GPU: end %.1f", g2 * 1e3);
    }
    (void)cudaGetLastError();
    std::fprintf(stderr, "\n");
    for (int w = 0; w < n; ++w) {  // each worker's first and last piece, its bytes
      double first = 1e30, last = 0;
      size_t b = 0;
      for (const Piece& p : pieces)
        if (p.worker == w) first = std::min(first, p.at[0]), last = std::max(last, p.at[2]), b += p.bytes;
      if (b) std::fprintf(stderr, "  worker %d: %7zu bytes from %6.1f to %6.1f us (%.1f GB/s)\n", w, b,
                          first, last, b / std::max(last - first, 1e-3) * 1e-3);
    }
    unsigned long long g0 = ~0ull;  // the pull's first flag seen, its times from there
    double h0 = 1e30;               // and the host's first flag
    if (pull_times)
      for (size_t i = 0; i < pieces.size(); ++i) g0 = std::min(g0, pull_at(i, kPullSeen)), h0 = std::min(h0, pieces[i].at[3]);
    for (size_t i = 0; i < pieces.size(); ++i) {
      const Piece& p = pieces[i];
      if (pull_times)
        std::fprintf(stderr, "  piece %2zu flag %6.1f (+%5.1f)  GPU polled %+5.1f seen +%5.1f copied +%4.1f\n",
                     i, p.at[3], p.at[3] - h0, (double(pull_at(i, kPullPolled)) - double(g0)) * 1e-3,
                     (pull_at(i, kPullSeen) - g0) * 1e-3,
                     (pull_at(i, kPullCopied) - pull_at(i, kPullSeen)) * 1e-3);
      if (p.bytes == 0 && p.worker >= 0) {  // a later piece of a one-pass claim
        std::fprintf(stderr, "  piece %2zu worker %d: in piece %zu's claim  issue +%3.0f\n", i,
                     p.worker, p.claim, p.at[3] - p.at[2]);
        continue;
      }
      std::fprintf(stderr,
                   "  piece %2zu worker %d: began %6.1f  slot +%4.0f  copy +%5.1f (%4.1f GB/s)  "
                   "issue +%3.0f\n",
                   i, p.worker, p.at[0], p.at[1] - p.at[0], p.at[2] - p.at[1],
                   p.bytes / std::max(p.at[2] - p.at[1], 1e-3) * 1e-3, p.at[3] - p.at[2]);
    }
  }
};

}  // namespace parvis::cuda::upload
