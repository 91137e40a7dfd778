// Host <-> device copies of a user's pageable image at PCIe speed (issue 14): the uploader of
// cuda-opt's match and filter. Three ways, chosen per copy by size or by PARVIS_UPLOAD:
//   pageable  one cudaMemcpy2DAsync from / to the pageable rows (the driver stages them itself:
//             a fraction of the link's rate, less back);
//   staged    pieces of rows copied by PARVIS_UPLOAD_THREADS host threads (a pool owned by the
//             copier; the calling thread is worker 0) into pinned memory, allocated once per
//             shape, never per call. Uploads whose rows fit in the pinned bytes the slots may
//             take go in one pass: pieces of <= 256 KiB each to its own place in one block, the
//             calling thread issuing the DMAs (runs of ready pieces) on the caller's stream.
//             Else slots (PARVIS_UPLOAD_SLOTS per worker, pieces <= PARVIS_UPLOAD_CHUNK): each
//             worker issues its piece's DMA on its own stream and copies its next piece while
//             that DMA runs (an event per slot says when the slot may be refilled). Back to the
//             host the same in reverse: a worker keeps its slots' DMAs in flight and copies out
//             the oldest. Pinned memory is written with streamed stores (SlotWriter);
//   register  cudaHostRegister the rows, one copy, wait, cudaHostUnregister (pays the pinning
//             on every call: for comparison);
//   linear    one 1-D cudaMemcpyAsync of the rows' whole span (host pitch kept) from pageable
//             memory into a device scratch, then a kernel that repacks them into the device
//             pitch (or makes them grey): no pinned memory at all, the driver's own staging,
//             which a 2-D pageable copy of short rows does not use well; a candidate for a
//             process's first copy (issue 14). Downloads: the reverse
//             where the host rows are tight, else as pageable.
// `auto` (the default) is staged: on the calling thread alone below PARVIS_UPLOAD_MIN bytes
// (default 1 MiB), else on all its threads in one pass; through the slots on up to 4 threads
// below 16 MiB and on all of them from there (TransferConfig: staged_min, staged_all; waking the
// pool costs more than it saves on small copies; the pageable 2-D copy of short rows is slow,
// docs/decisions/005); copies of at
// most PARVIS_UPLOAD_LINEAR bytes (default 0: none) go linear instead. Where the device
// rows are at most 256 bytes wider than the image's, a staged piece is packed in the slot with
// the device pitch (the bytes past `width` zeroed) and goes in one 1-D DMA: the bytes between
// width and dpitch of each device row are written as zeros (the matcher needs them zero; the
// filter does not read them). The RGB -> grey path uploads the RGB bytes and converts them on the GPU with gray_of
// (common/gray.hpp: the host's bits): once after the last DMA in one pass, piece by piece on the
// worker streams through the slots.
// All workers' pinned slots are one cudaMallocHost block (and the device slots one cudaMalloc):
// a fresh copier pays one allocation, not one per worker. PARVIS_UPLOAD_PINNED caps that block:
// pieces shrink so that threads x slots x piece fits (a process's first copy pays the pinning,
// ~the image's bytes by default; bench rows *-fresh measure it).
// Every CUDA call is checked (file:line); a failure in a worker is returned by the call.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.hpp"

namespace parvis::cuda {

enum class Transfer { Auto, Pageable, Staged, Register, Linear };
const char* transfer_name(Transfer t);

struct TransferConfig {
  Transfer mode = Transfer::Auto;
  size_t chunk = size_t(2) << 20;      // the largest piece, bytes
  int threads = 12;                    // host threads of a staged copy (the caller included;
                                       // at most the host's hardware threads by default;
                                       // docs/decisions/010)
  int slots = 2;                       // pinned slots per thread
  size_t staged_min = size_t(1) << 20; // auto: one thread below this many bytes,
  size_t linear_max = 0;               // auto: copies of at most this many bytes go linear
                                       // (PARVIS_UPLOAD_LINEAR; 0: none)
  size_t staged_all = size_t(16) << 20;  // 4 below this many, all `threads` from it on (the
                                         // slots' best thread count by size, decision 006)
  bool copy_2d = false;  // staged: one 2-D DMA per piece (tight slot rows) instead of whole
                         // padded rows in one 1-D DMA (PARVIS_UPLOAD_2D=1)
  size_t pinned = 0;     // staged: the most pinned bytes of all slots together, 0: no cap
                         // (PARVIS_UPLOAD_PINNED); pieces shrink to fit (>= 4 KiB, or one row
                         // where pieces are whole rows)
  bool warm = true;      // staged: prepare() also has the pool's threads make each worker's
                         // first DMA from its slots, in the background (the first copy then
                         // does not pay it; PARVIS_UPLOAD_WARM=0: not)
  bool nt = true;        // staged uploads write the slots with non-temporal stores where the
                         // host has them (PARVIS_UPLOAD_NT=0: memcpy)
  bool ahead = false;    // upload_ahead_start does its work (PARVIS_UPLOAD_AHEAD=1)
  bool one_pass = true;  // staged uploads of whole-row pieces that fit in the pinned bytes the
                         // slots may take (threads x slots x chunk, or `pinned`) go in one pass:
                         // each piece to its own place in one pinned block, the calling thread
                         // issuing the DMAs as pieces are ready (PARVIS_UPLOAD_ONEPASS=0: slots)
  size_t piece = size_t(32) << 10;  // one pass: the largest piece, bytes (PARVIS_UPLOAD_PIECE;
                                    // a worker claims up to 256 KiB of them at once)
  size_t batch = size_t(256) << 10;  // one pass by DMAs: a DMA waits until this many bytes in a
                                     // row are ready, but the last (PARVIS_UPLOAD_BATCH; 0: each
                                     // run of ready pieces at once)
  bool pull = true;       // one pass, padded or RGB rows: a kernel copies each piece from the
                         // pinned block (mapped) as soon as a flag says it is ready, instead of
                         // DMAs (PARVIS_UPLOAD_PULL=0: the DMAs)
  size_t read_ahead = size_t(1) << 20;  // staged: the bytes of prepare's `next` rows each of
                         // the copy's workers keeps in its cache until the copy: all the rows
                         // where they fit, else a slice each, where the slices fit
                         // (PARVIS_UPLOAD_READAHEAD, 0: none). transfer_config_from_env: 3/4 of
                         // the host's per-core L2, where it says
  unsigned hot_ms = 50;  // after prepare's warm-up the pool's threads stay awake (spinning) up to
                         // this long for the first copy (PARVIS_UPLOAD_HOT, 0..1000 ms)
  unsigned spin_us = 300;  // how long an idle worker spins before it sleeps, µs
                           // (PARVIS_UPLOAD_SPIN, 0..1000000; also from its start)
  bool touch = true;     // pulled: prepare has the GPU read a byte of each 4 KiB of the pinned
                         // block and of the flags, so that its address translations of them are
                         // made before the copy (PARVIS_UPLOAD_TOUCH=0: not)
  bool trace = false;    // each staged upload prints its workers' and pieces' times on stderr
                         // (PARVIS_UPLOAD_TRACE=1; a diagnosis of a process's first copy)
};

// The defaults above, overridden by PARVIS_UPLOAD=auto|pageable|staged|register|linear (direct,
// chunked and whole, the names of the first experiment, stand for pageable, staged and staged),
// PARVIS_UPLOAD_CHUNK (bytes, or with a K or M suffix), PARVIS_UPLOAD_THREADS (1..64),
// PARVIS_UPLOAD_SLOTS (1..8), PARVIS_UPLOAD_MIN (bytes, K or M), PARVIS_UPLOAD_2D (0 or 1),
// PARVIS_UPLOAD_PINNED (bytes, K or M; 0: no cap), PARVIS_UPLOAD_WARM (0 or 1),
// PARVIS_UPLOAD_LINEAR (bytes, K or M: auto's copies up to that size go linear),
// PARVIS_UPLOAD_AHEAD (0 or 1), PARVIS_UPLOAD_ONEPASS (0 or 1), PARVIS_UPLOAD_HOT (ms),
// PARVIS_UPLOAD_SPIN (µs), PARVIS_UPLOAD_PIECE and PARVIS_UPLOAD_BATCH (bytes, K or M),
// PARVIS_UPLOAD_PULL (0 or 1), PARVIS_UPLOAD_TOUCH (0 or 1), PARVIS_UPLOAD_TRACE (0 or 1),
// PARVIS_UPLOAD_READAHEAD (bytes, K or M). A malformed value is a usage error.
Status transfer_config_from_env(TransferConfig* out);

// How one copy went (for the timing line and the bench).
struct TransferInfo {
  Transfer used = Transfer::Pageable;
  size_t bytes = 0;   // bytes that crossed the link
  int threads = 1;    // host threads that took part
  size_t piece = 0;   // staged: bytes per piece
  size_t pinned = 0;  // staged: the copier's pinned bytes (all slots) after the copy
  bool padded = false;  // staged: padded rows in 1-D DMAs
  bool one_pass = false;  // staged: in one pass (TransferConfig::one_pass)
  bool pulled = false;    // one pass: the GPU pulled the pieces (TransferConfig::pull)
  std::string describe() const;  // e.g. "staged 4 threads x 512 KiB"
};

class StagedCopier {
 public:
  StagedCopier();
  ~StagedCopier();
  StagedCopier(const StagedCopier&) = delete;
  StagedCopier& operator=(const StagedCopier&) = delete;

  // Streams, events and the thread pool for `config` (once; again only when it changes).
  Status init(const TransferConfig& config);
  const TransferConfig& config() const;
  // Allocates what a copy of `rows` rows of `width` bytes needs (pinned slots, device slots for
  // the grey conversion), so that the copies themselves allocate nothing. Optional: a copy
  // that finds its buffers too small allocates them then (once per shape).
  // `pitch`: the device rows' (padded pieces are sized by it). `next` (rows `next_pitch`
  // apart), where the caller knows it: the host rows the next copy will take, read by the pool's
  // threads in the background with the warm-up, where they fit TransferConfig::read_ahead, so
  // that the copy finds them in its workers' caches. They must stay valid and unchanged until
  // the next copy or end_read_ahead(), each of which stops the reading.
  Status prepare(size_t width, size_t rows, size_t pitch, bool rgb_to_gray = false,
                 const uint8_t* next = nullptr, size_t next_pitch = 0);
  // Stops prepare's reading of `next` and waits until no thread reads it (where no copy
  // followed, before the rows are freed or changed).
  void end_read_ahead();

  // The device side of a copy holds rows x dpitch (or spitch) bytes: a staged copy may move the
  // whole padded rows.
  // rows x width bytes: host rows `spitch` apart -> device rows `dpitch` apart, ordered after
  // the work queued on `stream` before the call, and before the work queued after it. The host
  // rows may be reused when the call returns (staged, register) — pageable: as cudaMemcpyAsync.
  Status to_device(uint8_t* dst, size_t dpitch, const uint8_t* src, size_t spitch, size_t width,
                   size_t rows, cudaStream_t stream, TransferInfo* info = nullptr);
  // W x H RGB pixels (rows `spitch` apart) -> their grey (gray_of) in device rows `dpitch`
  // apart, converted on the GPU.
  Status rgb_to_gray_device(uint8_t* dst, size_t dpitch, const uint8_t* rgb, size_t spitch,
                            int W, int H, cudaStream_t stream, TransferInfo* info = nullptr);
  // The reverse of to_device: device rows -> host rows, after the work queued on `stream`;
  // returns when the host rows are written.
  Status to_host(uint8_t* dst, size_t dpitch, const uint8_t* src, size_t spitch, size_t width,
                 size_t rows, cudaStream_t stream, TransferInfo* info = nullptr);

  // What a copy of `bytes` bytes takes under the configuration.
  Transfer choose(size_t bytes) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Status upload_rows(Transfer t, uint8_t* dst, size_t dpitch, const uint8_t* src, size_t spitch,
                     size_t width, size_t rows, bool gray, cudaStream_t stream, TransferInfo* info);
};

// Pinned slots allocated ahead, for a process's first copy (issue 14; PARVIS_UPLOAD_AHEAD=1, else
// nothing): upload_ahead_start starts a thread that creates the CUDA context and pins
// PARVIS_UPLOAD_PINNED bytes (or threads x slots x chunk: every staged copy's slots fit), while
// the caller reads and decodes its images; the first copier whose slots fit in that block takes
// it instead of pinning its own (waiting for the thread). upload_ahead_finish joins the thread
// and frees a block nobody took: the caller runs it before returning from main (the CUDA
// runtime's exit handlers must not run beside the thread). A failure on the thread leaves no
// block: the copier then pins its own, checked, as without.
void upload_ahead_start();
void upload_ahead_finish();
// The copier's side: the block, when there is one of at least `bytes` (its size in *size; the
// caller frees it with cudaFreeHost), after the thread is done; else nullptr.
uint8_t* upload_ahead_take(size_t bytes, size_t* size);

// The pieces a staged copy cuts rows x width bytes into (host code, tested by the selftest):
// whole rows, at most `chunk` bytes and at least one row, when a row fits in `chunk`; else each
// row in pieces of `chunk` bytes. Pieces shrink so that each of `threads` workers gets two
// where the image is small (never below 64 KiB).
struct PiecePlan {
  size_t width = 0, rows = 0;
  size_t rows_per_piece = 0;  // whole-row pieces; 0 when rows are split
  size_t cols_per_piece = 0;  // split rows: bytes per piece
  size_t count = 0;
  size_t piece_bytes = 0;     // the largest piece
  struct Piece {
    size_t row0, nrows, col0, ncols;
  };
  Piece at(size_t i) const;
};
PiecePlan plan_pieces(size_t width, size_t rows, size_t chunk, int threads, bool whole_rows = false);
// The chunk a staged copy on `threads` threads plans with: config.chunk, lowered where
// config.pinned caps the slots (threads x slots x chunk <= pinned, never below 4 KiB).
size_t piece_limit(const TransferConfig& config, int threads);

}  // namespace parvis::cuda
