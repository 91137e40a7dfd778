// The staged copier's piece plan (cuda/upload/plan.hpp), on the host: for many shapes, chunk
// sizes (dividing the image or not) and thread counts, every byte of the rows x width image is
// in exactly one piece, pieces lie inside the image, whole-row pieces hold whole rows, no piece
// is larger than the plan's piece_bytes (the slot size), and piece_bytes respects the chunk
// (or one row where whole rows are required). Also the tuning read from the environment
// (cuda/upload/tuning.hpp through src/common/config).
// Built and run by tests/gpu/match.sh (nvcc, no GPU needed):
//   nvcc -std=c++17 -Iinclude -Isrc -Ibmp -Icuda tests/cuda/upload_pieces.cu cuda/upload/plan.cu
//        cuda/upload/tuning.cu src/common/config.cpp -o x
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "upload/plan.hpp"

using parvis::cuda::PiecePlan;
using parvis::cuda::plan_pieces;

static int failures = 0, checks = 0;
#define EXPECT(cond, ...)                        \
  do {                                           \
    ++checks;                                    \
    if (!(cond)) {                               \
      ++failures;                                \
      std::printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      std::printf(__VA_ARGS__);                  \
      std::printf("\n");                         \
    }                                            \
  } while (0)

static void check(size_t width, size_t rows, size_t chunk, int threads, bool whole_rows) {
  const PiecePlan p = plan_pieces(width, rows, chunk, threads, whole_rows);
  std::vector<unsigned char> seen(width * rows, 0);
  size_t largest = 0;
  for (size_t i = 0; i < p.count; ++i) {
    const PiecePlan::Piece pc = p.at(i);
    EXPECT(pc.row0 + pc.nrows <= rows && pc.col0 + pc.ncols <= width && pc.nrows > 0 && pc.ncols > 0,
           "%zux%zu chunk %zu: piece %zu outside", width, rows, chunk, i);
    if (whole_rows) EXPECT(pc.col0 == 0 && pc.ncols == width, "piece %zu not whole rows", i);
    largest = std::max(largest, pc.nrows * pc.ncols);
    for (size_t r = 0; r < pc.nrows; ++r)
      for (size_t c = 0; c < pc.ncols; ++c) ++seen[(pc.row0 + r) * width + pc.col0 + c];
  }
  size_t bad = 0;
  for (unsigned char v : seen) bad += v != 1;
  EXPECT(bad == 0, "%zux%zu chunk %zu threads %d whole %d: %zu bytes not covered once", width, rows,
         chunk, threads, int(whole_rows), bad);
  EXPECT(largest <= p.piece_bytes, "%zux%zu chunk %zu: a piece of %zu > slot %zu", width, rows, chunk,
         largest, p.piece_bytes);
  const size_t limit = whole_rows ? std::max(chunk, width) : chunk;
  EXPECT(p.piece_bytes <= limit, "%zux%zu chunk %zu: piece_bytes %zu over %zu", width, rows, chunk,
         p.piece_bytes, limit);
}

int main() {
  const size_t widths[] = {1, 3, 7, 21, 1327, 3 * 1327, 3840, 3 * 3840, 65536, 300001};
  const size_t rows[] = {1, 2, 3, 5, 17, 1025, 2161};
  const size_t chunks[] = {4096, 5000, 65536, 100003, size_t(2) << 20, size_t(4) << 20};
  const int threads[] = {1, 2, 3, 4, 8};
  for (size_t w : widths)
    for (size_t r : rows) {
      if (w * r > (size_t(12) << 20)) continue;
      for (size_t c : chunks)
        for (int t : threads)
          for (bool whole : {false, true}) check(w, r, c, t, whole);
    }
  check(0, 5, 4096, 4, false);
  check(5, 0, 4096, 4, false);
  EXPECT(plan_pieces(0, 5, 4096, 4).count == 0, "an empty image has pieces");
  // Small images shrink their pieces so that every worker gets two (never below 64 KiB).
  const PiecePlan p = plan_pieces(3840, 2160, size_t(8) << 20, 4);
  EXPECT(p.count >= 8, "3840x2160 at 8 MiB, 4 threads: %zu pieces", p.count);

  // upload.pinned: threads x slots x piece within the cap (split rows, or whole rows that
  // fit), never below 4 KiB; no cap: the chunk.
  for (size_t cap : {size_t(0), size_t(4096), size_t(100000), size_t(1) << 20, size_t(4) << 20})
    for (int t : {1, 3, 4, 8})
      for (size_t w : {size_t(1327), size_t(3 * 3840), size_t(300001)}) {
        parvis::cuda::UploadTuning cfg;
        cfg.pinned = cap;
        const size_t limit = parvis::cuda::piece_limit(cfg, t);
        EXPECT(cap ? limit >= 4096 && limit <= cfg.chunk : limit == cfg.chunk, "cap %zu: limit %zu", cap, limit);
        const PiecePlan q = plan_pieces(w, 2161, limit, t);
        const size_t slots = parvis::cuda::UploadTuning::kSlots;
        const size_t pinned = size_t(t) * slots * q.piece_bytes;
        EXPECT(!cap || pinned <= std::max(cap, size_t(t) * slots * 4096),
               "cap %zu, %d threads, width %zu: %zu pinned bytes", cap, t, w, pinned);
        check(w, 5, limit, t, false);
      }

  // The defaults, then every upload.* key and PARVIS_UPLOAD set (config parses the environment
  // once per process: the defaults are checked against upload_defaults(), which reads none).
  using parvis::cuda::Transfer;
  using parvis::cuda::UploadTuning;
  const UploadTuning d = parvis::cuda::upload_defaults();
  EXPECT(d.mode == Transfer::Auto && d.threads >= 1 && d.threads <= 12 && d.staged_min == (size_t(1) << 20) &&
             d.piece == (size_t(32) << 10) && d.chunk == (size_t(2) << 20) && d.pinned == 0 &&
             d.read_ahead > 0 && d.hot_ms == 50 && d.nt && !d.trace,
         "upload_defaults: %s", d.describe().c_str());
  setenv("PARVIS_UPLOAD", "pageable", 1);
  setenv("PARVIS_TUNING",
         "upload.threads=8,upload.min=0,upload.piece=5000,upload.chunk=512K,upload.pinned=4M,"
         "upload.readahead=3M,upload.hot=7,upload.nt=0,upload.trace=1",
         1);
  EXPECT(parvis::config::check().ok(), "every upload.* key set: rejected");
  const UploadTuning& c = parvis::cuda::upload_tuning();
  EXPECT(c.mode == Transfer::Pageable && c.threads == 8 && c.staged_min == 0 && c.piece == 5000 &&
             c.chunk == (size_t(512) << 10) && c.pinned == (size_t(4) << 20) &&
             c.read_ahead == (size_t(3) << 20) && c.hot_ms == 7 && !c.nt && c.trace,
         "every upload.* key set: read as %s", c.describe().c_str());
  EXPECT(&parvis::cuda::upload_tuning() == &c, "the tuning is read more than once");
  std::printf("upload pieces: %d checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
