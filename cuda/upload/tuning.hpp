// The upload's typed tuning: every choice of the copier of a user's pageable image
// (cuda/upload/upload.hpp) in one struct, this host's defaults in one function, filled once from
// the environment through src/common/config: PARVIS_UPLOAD picks the mode, PARVIS_TUNING's
// upload.* keys set the fields (tests and benchmarks). The numbers behind each default, and the
// ways that lost and left the product, are in docs/decisions/005-014.
#pragma once
#include <cstddef>
#include <string>

namespace parvis::cuda {

// pageable: one cudaMemcpy2DAsync from the user's rows (the driver stages them: a fraction of the
// link's rate); staged: through the copier's pinned memory on several host threads; auto (the
// default): staged, on the calling thread alone below UploadTuning::staged_min.
enum class Transfer { Auto, Pageable, Staged };
const char* transfer_name(Transfer t);

struct UploadTuning {
  Transfer mode = Transfer::Auto;      // PARVIS_UPLOAD
  int threads = 12;                    // upload.threads: host threads of a staged copy, the
                                       // caller included; at most the host's (decision 010)
  size_t staged_min = size_t(1) << 20; // upload.min: auto's copies below this many bytes stay on
                                       // the calling thread (waking the pool costs more)
  size_t piece = size_t(32) << 10;     // upload.piece: a one-pass upload's largest piece
                                       // (decisions 009, 010)
  size_t chunk = size_t(2) << 20;      // upload.chunk: the slots' largest piece (decision 006)
  size_t pinned = 0;                   // upload.pinned: the most pinned bytes of the copier (0: no
                                       // cap); pieces shrink to fit, larger images take the slots
  size_t read_ahead = size_t(1) << 20; // upload.readahead: the bytes of the next source each
                                       // worker keeps in its cache (decision 011; default 3/4 of
                                       // the host's per-core L2; 0: none)
  unsigned hot_ms = 50;                // upload.hot: the pool stays awake this long after prepare
                                       // (decision 007; 0: it sleeps after the usual spin)
  bool nt = true;                      // upload.nt: pinned memory written by non-temporal stores
                                       // where the host has them (decisions 007, 008; 0: memcpy,
                                       // what a host without SSE2 does)
  bool trace = false;                  // upload.trace: each staged upload's timeline on stderr

  // Fixed (docs/decisions/006): two pinned slots a worker on the slots path (one filled while the
  // other's DMA runs); auto's slots take 4 threads below kAllThreads bytes, all from there.
  static constexpr int kSlots = 2;
  static constexpr size_t kAllThreads = size_t(16) << 20;

  // One line, e.g. "auto (staged from 1 MiB), 12 threads, pieces 32 KiB / slots 2 MiB, ...".
  std::string describe() const;
};

// This host's defaults (threads capped by its hardware threads, read_ahead by its L2).
UploadTuning upload_defaults();
// The defaults overridden by PARVIS_UPLOAD and PARVIS_TUNING's upload.* keys, read once per process
// (main has checked them: src/common/config).
const UploadTuning& upload_tuning();

}  // namespace parvis::cuda
