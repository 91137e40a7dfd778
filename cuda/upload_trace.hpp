// PARVIS_UPLOAD_TRACE (staged_upload.cu): a staged upload's timeline, printed on stderr.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace parvis::cuda::upload {

// PARVIS_UPLOAD_TRACE=1: where a staged upload's time goes, on stderr (µs from the call's start):
// each piece's worker, when it began, when its slot was free, when its host copy ended and when
// its DMA was issued; then when the workers were done issuing and when the DMAs were done.
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
  double setup = 0, issued = 0;

  double now() const { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }
  void mark(size_t i, int step) {
    if (on) pieces[i].at[step] = now();
  }
  void print(size_t bytes, int n, double since_prepare_ms, double done) const {
    std::fprintf(stderr,
                 "upload trace: %zu bytes, %zu pieces, %d workers, %.1f ms after prepare: set-up "
                 "%.0f us, issued by %.0f us, DMAs done %.0f us (%.1f GB/s)\n",
                 bytes, pieces.size(), n, since_prepare_ms, setup, issued, done, bytes / done * 1e-3);
    for (size_t i = 0; i < pieces.size(); ++i) {
      const Piece& p = pieces[i];
      if (p.bytes == 0 && p.worker >= 0) {  // a later piece of a one-pass claim
        std::fprintf(stderr, "  piece %2zu worker %d: in piece %zu's claim  issue +%3.0f\n", i,
                     p.worker, p.claim, p.at[3] - p.at[2]);
        continue;
      }
      std::fprintf(stderr,
                   "  piece %2zu worker %d: began %6.0f  slot +%4.0f  copy +%5.0f (%4.1f GB/s)  "
                   "issue +%3.0f\n",
                   i, p.worker, p.at[0], p.at[1] - p.at[0], p.at[2] - p.at[1],
                   p.bytes / std::max(p.at[2] - p.at[1], 1e-3) * 1e-3, p.at[3] - p.at[2]);
    }
  }
};

}  // namespace parvis::cuda::upload
