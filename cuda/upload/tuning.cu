// The upload's tuning (tuning.hpp): this host's defaults, the environment's overrides, and the
// descriptions of a tuning and of one copy. Host code only (tests/cuda/upload_pieces.cu).
#include "upload/tuning.hpp"

#include <algorithm>
#include <string>
#include <thread>
#if __has_include(<unistd.h>)
#include <unistd.h>  // sysconf: the L2 size, for read_ahead
#endif

#include "common/config.hpp"
#include "upload/upload.hpp"

namespace parvis::cuda {

const char* transfer_name(Transfer t) {
  switch (t) {
    case Transfer::Auto: return "auto";
    case Transfer::Pageable: return "pageable";
    case Transfer::Staged: return "staged";
  }
  return "?";
}

namespace {

std::string bytes_text(size_t b) {
  if (b >= (size_t(1) << 20) && b % (size_t(1) << 20) == 0) return std::to_string(b >> 20) + " MiB";
  if (b >= (size_t(1) << 10) && b % (size_t(1) << 10) == 0) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " bytes";
}

}  // namespace

UploadTuning upload_defaults() {
  UploadTuning c;
  if (const unsigned hw = std::thread::hardware_concurrency(); hw > 0) c.threads = std::min(c.threads, int(hw));
#if defined(_SC_LEVEL2_CACHE_SIZE)
  if (const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE); l2 > 0) c.read_ahead = size_t(l2) / 4 * 3;
#endif
  return c;
}

const UploadTuning& upload_tuning() {
  static const UploadTuning tuning = [] {
    UploadTuning c = upload_defaults();
    if (const char* m = config::get(config::Var::Upload); m && *m) {
      const std::string s(m);
      c.mode = s == "pageable" ? Transfer::Pageable : s == "staged" ? Transfer::Staged : Transfer::Auto;
    }
    c.threads = int(config::tuning_int("upload.threads", c.threads));
    c.staged_min = size_t(config::tuning_int("upload.min", (long long)c.staged_min));
    c.piece = size_t(config::tuning_int("upload.piece", (long long)c.piece));
    c.chunk = size_t(config::tuning_int("upload.chunk", (long long)c.chunk));
    c.pinned = size_t(config::tuning_int("upload.pinned", (long long)c.pinned));
    c.read_ahead = size_t(config::tuning_int("upload.readahead", (long long)c.read_ahead));
    c.hot_ms = unsigned(config::tuning_int("upload.hot", c.hot_ms));
    c.nt = config::tuning_flag("upload.nt", c.nt);
    c.trace = config::tuning_flag("upload.trace", c.trace);
    return c;
  }();
  return tuning;
}

std::string UploadTuning::describe() const {
  std::string s = transfer_name(mode);
  if (mode == Transfer::Pageable) return s;
  if (mode == Transfer::Auto) s += " (staged from " + bytes_text(staged_min) + ")";
  s += ", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads") + ", pieces " +
       bytes_text(piece) + " (one pass) / " + bytes_text(chunk) + " (slots), pinned " +
       (pinned ? "at most " + bytes_text(pinned) : std::string("uncapped")) + ", read-ahead " +
       (read_ahead ? bytes_text(read_ahead) : std::string("off")) + ", pool awake " +
       std::to_string(hot_ms) + " ms, " + (nt ? "streamed stores" : "memcpy") +
       (trace ? ", traced" : "");
  return s;
}

std::string TransferInfo::describe() const {
  std::string s = transfer_name(used);
  if (used == Transfer::Staged) {
    const bool kib = piece < (size_t(1) << 20);
    s += std::string(one_pass ? " one pass, " : " ") + std::to_string(threads) +
         (threads == 1 ? " thread" : " threads") + " x " +
         std::to_string(kib ? piece >> 10 : piece >> 20) + (kib ? " KiB" : " MiB") +
         (padded ? ", padded rows" : ", 2-D") + (one_pass ? ", pulled by the GPU" : "");
  }
  return s;
}

}  // namespace parvis::cuda
