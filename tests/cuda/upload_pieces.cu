// The staged copier's piece plan (cuda/staged_upload.cuh), on the host: for many shapes, chunk
// sizes (dividing the image or not) and thread counts, every byte of the rows x width image is
// in exactly one piece, pieces lie inside the image, whole-row pieces hold whole rows, no piece
// is larger than the plan's piece_bytes (the slot size), and piece_bytes respects the chunk
// (or one row where whole rows are required). Also the PARVIS_UPLOAD* parsing.
// Built and run by tests/gpu/match.sh (nvcc, no GPU needed):
//   nvcc -std=c++17 -Isrc -Ibmp -Icuda tests/cuda/upload_pieces.cu cuda/staged_upload_plan.cu -o x
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "staged_upload.cuh"

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

  // PARVIS_UPLOAD_PINNED: threads x slots x piece within the cap (split rows, or whole rows that
  // fit), never below 4 KiB; no cap: the chunk.
  for (size_t cap : {size_t(0), size_t(4096), size_t(100000), size_t(1) << 20, size_t(4) << 20})
    for (int t : {1, 3, 4, 8})
      for (size_t w : {size_t(1327), size_t(3 * 3840), size_t(300001)}) {
        parvis::cuda::TransferConfig cfg;
        cfg.pinned = cap;
        const size_t limit = parvis::cuda::piece_limit(cfg, t);
        EXPECT(cap ? limit >= 4096 && limit <= cfg.chunk : limit == cfg.chunk, "cap %zu: limit %zu", cap, limit);
        const PiecePlan q = plan_pieces(w, 2161, limit, t);
        const size_t pinned = size_t(t) * size_t(cfg.slots) * q.piece_bytes;
        EXPECT(!cap || pinned <= std::max(cap, size_t(t) * cfg.slots * 4096),
               "cap %zu, %d threads, width %zu: %zu pinned bytes", cap, t, w, pinned);
        check(w, 5, limit, t, false);
      }

  // PARVIS_UPLOAD* parsing: every variable set, then each malformed in turn.
  const char* const good[][2] = {
      {"PARVIS_UPLOAD", "linear"},       {"PARVIS_UPLOAD_CHUNK", "512K"}, {"PARVIS_UPLOAD_THREADS", "8"},
      {"PARVIS_UPLOAD_SLOTS", "3"},      {"PARVIS_UPLOAD_MIN", "0"},      {"PARVIS_UPLOAD_PINNED", "4M"},
      {"PARVIS_UPLOAD_LINEAR", "1M"},    {"PARVIS_UPLOAD_2D", "1"},       {"PARVIS_UPLOAD_WARM", "0"},
      {"PARVIS_UPLOAD_AHEAD", "1"},      {"PARVIS_UPLOAD_NT", "0"},      {"PARVIS_UPLOAD_SPIN", "20000"},
      {"PARVIS_UPLOAD_TRACE", "1"},      {"PARVIS_UPLOAD_ONEPASS", "0"}, {"PARVIS_UPLOAD_HOT", "7"},
      {"PARVIS_UPLOAD_PIECE", "5000"},   {"PARVIS_UPLOAD_BATCH", "0"},   {"PARVIS_UPLOAD_PULL", "0"},
      {"PARVIS_UPLOAD_READAHEAD", "3M"}, {"PARVIS_UPLOAD_TOUCH", "0"}};
  for (const auto& kv : good) setenv(kv[0], kv[1], 1);
  parvis::cuda::TransferConfig c;
  EXPECT(parvis::cuda::transfer_config_from_env(&c).ok() && c.mode == parvis::cuda::Transfer::Linear &&
             c.chunk == (size_t(512) << 10) && c.threads == 8 && c.slots == 3 && c.staged_min == 0 &&
             c.pinned == (size_t(4) << 20) && c.linear_max == (size_t(1) << 20) && c.copy_2d &&
             !c.warm && c.ahead && c.spin_us == 20000 && c.trace && !c.nt && !c.one_pass &&
             c.hot_ms == 7 && c.piece == 5000 && c.batch == 0 && !c.pull &&
             c.read_ahead == (size_t(3) << 20) && !c.touch,
         "every PARVIS_UPLOAD* variable set: parsed wrong");
  const char* const bad[][2] = {
      {"PARVIS_UPLOAD", "fast"},        {"PARVIS_UPLOAD_THREADS", "0"}, {"PARVIS_UPLOAD_CHUNK", "2Q"},
      {"PARVIS_UPLOAD_SLOTS", "9"},     {"PARVIS_UPLOAD_PINNED", "-1"}, {"PARVIS_UPLOAD_LINEAR", "4G"},
      {"PARVIS_UPLOAD_WARM", "2"},      {"PARVIS_UPLOAD_AHEAD", "yes"}, {"PARVIS_UPLOAD_2D", "01x"},
      {"PARVIS_UPLOAD_SPIN", "1000001"}, {"PARVIS_UPLOAD_TRACE", "on"}, {"PARVIS_UPLOAD_NT", "2"},
      {"PARVIS_UPLOAD_ONEPASS", "x"},    {"PARVIS_UPLOAD_HOT", "1001"},  {"PARVIS_UPLOAD_PIECE", "4095"},
      {"PARVIS_UPLOAD_BATCH", "2G"},    {"PARVIS_UPLOAD_PULL", "y"},    {"PARVIS_UPLOAD_READAHEAD", "1K5"},
      {"PARVIS_UPLOAD_TOUCH", "off"}};
  for (const auto& kv : bad) {
    const std::string keep = std::getenv(kv[0]);
    setenv(kv[0], kv[1], 1);
    EXPECT(!parvis::cuda::transfer_config_from_env(&c).ok(), "%s=%s accepted", kv[0], kv[1]);
    setenv(kv[0], keep.c_str(), 1);
  }
  for (const auto& kv : good) unsetenv(kv[0]);
  EXPECT(parvis::cuda::transfer_config_from_env(&c).ok() && c.mode == parvis::cuda::Transfer::Auto &&
             c.pinned == 0 && c.warm && !c.ahead && c.linear_max == 0 && c.spin_us == 300 && !c.trace &&
             c.nt && c.one_pass && c.hot_ms == 50 && c.piece == (size_t(32) << 10) &&
             c.batch == (size_t(256) << 10) && c.pull && c.read_ahead > 0 && c.touch,
         "no PARVIS_UPLOAD* variable: not the defaults");
  std::printf("upload pieces: %d checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
