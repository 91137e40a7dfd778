// The staged copier's configuration (PARVIS_UPLOAD*), its report and its piece plan
// (staged_upload.cuh): host code only, tested without a GPU by tests/cuda/upload_pieces.cu.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#if __has_include(<unistd.h>)
#include <unistd.h>  // sysconf: the L2 size, for read_ahead
#endif

#include "staged_upload.cuh"

namespace parvis::cuda {

const char* transfer_name(Transfer t) {
  switch (t) {
    case Transfer::Auto: return "auto";
    case Transfer::Pageable: return "pageable";
    case Transfer::Staged: return "staged";
    case Transfer::Register: return "register";
    case Transfer::Linear: return "linear";
  }
  return "?";
}

namespace {

// "123", "64K", "2M" -> bytes; false when malformed or out of [lo, hi].
bool parse_bytes(const char* v, size_t lo, size_t hi, size_t* out) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (end == v) return false;
  unsigned long long mul = 1;
  if (*end == 'K' || *end == 'k') mul = 1ull << 10, ++end;
  else if (*end == 'M' || *end == 'm') mul = 1ull << 20, ++end;
  if (*end != '\0' || n > (~0ull) / mul) return false;
  const unsigned long long b = n * mul;
  if (b < lo || b > hi) return false;
  *out = size_t(b);
  return true;
}

// The variable `name`: unset or empty leaves *out as it is; else bytes (K or M suffix) in
// [lo, hi] (`range` says which in the usage error).
Status read_bytes(const char* name, size_t lo, size_t hi, const char* range, size_t* out) {
  const char* v = std::getenv(name);
  if (!v || !*v || parse_bytes(v, lo, hi, out)) return Status::Ok();
  return Status::usage(std::string(name) + " must be " + range + ", not '" + v + "'");
}
// A 0-or-1 variable.
Status read_flag(const char* name, bool* out) {
  size_t n = *out ? 1 : 0;
  PARVIS_TRY(read_bytes(name, 0, 1, "0 or 1", &n));
  *out = n == 1;
  return Status::Ok();
}

}  // namespace

Status transfer_config_from_env(TransferConfig* out) {
  TransferConfig c;
  if (const unsigned hw = std::thread::hardware_concurrency(); hw > 0) c.threads = std::min(c.threads, int(hw));
#if defined(_SC_LEVEL2_CACHE_SIZE)
  if (const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE); l2 > 0) c.read_ahead = size_t(l2) / 4 * 3;
#endif
  if (const char* v = std::getenv("PARVIS_UPLOAD"); v && *v) {
    const std::string s(v);
    if (s == "auto") c.mode = Transfer::Auto;
    else if (s == "pageable" || s == "direct") c.mode = Transfer::Pageable;
    else if (s == "staged" || s == "chunked" || s == "whole") c.mode = Transfer::Staged;
    else if (s == "register") c.mode = Transfer::Register;
    else if (s == "linear") c.mode = Transfer::Linear;
    else
      return Status::usage("PARVIS_UPLOAD must be auto, pageable, staged, register or linear, not '" +
                           s + "'");
  }
  PARVIS_TRY(read_bytes("PARVIS_UPLOAD_CHUNK", 4096, size_t(1) << 30, "4K..1024M bytes", &c.chunk));
  PARVIS_TRY(read_bytes("PARVIS_UPLOAD_MIN", 0, ~size_t(0) >> 1, "a byte count", &c.staged_min));
  PARVIS_TRY(read_bytes("PARVIS_UPLOAD_LINEAR", 0, ~size_t(0) >> 1, "a byte count", &c.linear_max));
  PARVIS_TRY(read_bytes("PARVIS_UPLOAD_PINNED", 0, size_t(1) << 32, "0..4096M bytes", &c.pinned));
  PARVIS_TRY(read_flag("PARVIS_UPLOAD_2D", &c.copy_2d));
  PARVIS_TRY(read_flag("PARVIS_UPLOAD_WARM", &c.warm));
  PARVIS_TRY(read_flag("PARVIS_UPLOAD_AHEAD", &c.ahead));
  PARVIS_TRY(read_flag("PARVIS_UPLOAD_TRACE", &c.trace));
  PARVIS_TRY(read_flag("PARVIS_UPLOAD_NT", &c.nt));
  PARVIS_TRY(read_flag("PARVIS_UPLOAD_ONEPASS", &c.one_pass));
  PARVIS_TRY(read_flag("PARVIS_UPLOAD_PULL", &c.pull));
  PARVIS_TRY(read_flag("PARVIS_UPLOAD_TOUCH", &c.touch));
  PARVIS_TRY(read_bytes("PARVIS_UPLOAD_PIECE", 4096, size_t(1) << 30, "4K..1024M bytes", &c.piece));
  PARVIS_TRY(read_bytes("PARVIS_UPLOAD_BATCH", 0, size_t(1) << 30, "0..1024M bytes", &c.batch));
  PARVIS_TRY(read_bytes("PARVIS_UPLOAD_READAHEAD", 0, size_t(1) << 30, "0..1024M bytes", &c.read_ahead));
  size_t hot = c.hot_ms;
  PARVIS_TRY(read_bytes("PARVIS_UPLOAD_HOT", 0, 1000, "0..1000 (ms)", &hot));
  c.hot_ms = unsigned(hot);
  size_t spin = c.spin_us;
  PARVIS_TRY(read_bytes("PARVIS_UPLOAD_SPIN", 0, 1000000, "0..1000000 (µs)", &spin));
  c.spin_us = unsigned(spin);
  size_t n = size_t(c.threads);
  PARVIS_TRY(read_bytes("PARVIS_UPLOAD_THREADS", 1, 64, "1..64", &n));
  c.threads = int(n);
  n = size_t(c.slots);
  PARVIS_TRY(read_bytes("PARVIS_UPLOAD_SLOTS", 1, 8, "1..8", &n));
  c.slots = int(n);
  *out = c;
  return Status::Ok();
}

std::string TransferInfo::describe() const {
  std::string s = transfer_name(used);
  if (used == Transfer::Staged) {
    const bool kib = piece < (size_t(1) << 20);
    s += std::string(one_pass ? " one pass, " : " ") + std::to_string(threads) +
         (threads == 1 ? " thread" : " threads") + " x " +
         std::to_string(kib ? piece >> 10 : piece >> 20) + (kib ? " KiB" : " MiB") +
         (padded ? ", padded rows" : ", 2-D") + (pulled ? ", pulled by the GPU" : "");
  }
  return s;
}

// ---- the piece plan ------------------------------------------------------------------------------
PiecePlan plan_pieces(size_t width, size_t rows, size_t chunk, int threads, bool whole_rows) {
  PiecePlan p;
  p.width = width;
  p.rows = rows;
  if (width == 0 || rows == 0) return p;
  const size_t total = width * rows, per = 2 * size_t(std::max(threads, 1));
  const size_t target = std::min(std::max(chunk, size_t(1)),
                                 std::max(size_t(64) << 10, (total + per - 1) / per));
  if (whole_rows || width <= target) {
    p.rows_per_piece = std::max(size_t(1), target / width);
    p.count = (rows + p.rows_per_piece - 1) / p.rows_per_piece;
    p.piece_bytes = std::min(p.rows_per_piece, rows) * width;
  } else {
    p.cols_per_piece = target;
    const size_t per_row = (width + target - 1) / target;
    p.count = rows * per_row;
    p.piece_bytes = target;
  }
  return p;
}

size_t piece_limit(const TransferConfig& c, int threads) {
  if (!c.pinned) return c.chunk;
  const size_t per = c.pinned / (size_t(std::max(threads, 1)) * size_t(std::max(c.slots, 1)));
  return std::min(c.chunk, std::max(size_t(4096), per));
}

PiecePlan::Piece PiecePlan::at(size_t i) const {
  if (rows_per_piece) {
    const size_t r0 = i * rows_per_piece;
    return Piece{r0, std::min(rows_per_piece, rows - r0), 0, width};
  }
  const size_t per_row = (width + cols_per_piece - 1) / cols_per_piece;
  const size_t r = i / per_row, c0 = (i % per_row) * cols_per_piece;
  return Piece{r, 1, c0, std::min(cols_per_piece, width - c0)};
}

}  // namespace parvis::cuda
