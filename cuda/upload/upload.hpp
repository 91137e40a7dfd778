// Host <-> device copies of a user's pageable image at the link's speed: what the CUDA operations
// call (cuda-opt's match, filter and video; cuda-naive's filter). Two ways, chosen per copier by
// UploadTuning::mode (tuning.hpp; PARVIS_UPLOAD):
//   pageable  one cudaMemcpy2DAsync from / to the user's rows (the driver stages them itself);
//   staged    (auto, the default) the rows copied by UploadTuning::threads host threads (a pool
//             owned by the copier; the calling thread is worker 0) into pinned memory allocated
//             once per shape, never per call:
//     one pass   uploads whose rows, padded to the device pitch (or RGB rows, made grey on the
//                GPU), fit in the copier's pinned bytes: small pieces each to its own place in
//                one pinned block, written with streamed stores; a kernel launched at the start
//                copies each piece from the mapped block as soon as its flag says it is ready
//                (no DMA to issue, none after the last piece). prepare() warms the pool's
//                threads, keeps them awake for the copy and has them read the next source into
//                their caches;
//     slots      the others (split rows, rows much wider than the image, images past the pinned
//                bytes) and every download: each worker copies a piece into one of its two
//                pinned slots while the other's DMA runs, on its own stream.
// The device rows of a copy hold rows x dpitch bytes: where the device pitch is at most 256 bytes
// wider than the image's, whole padded rows are moved and the bytes past `width` zeroed (the
// matcher needs them zero). The why and the numbers: docs/DESIGN.md ("The upload of a user's
// image"), docs/decisions/005-014. Every CUDA call is checked; a failure in a worker is returned by
// the call. The parts: copier.cu (the copier), copier_impl.cuh (its state and steps), one_pass.cu,
// plan.cu (pieces), tuning.cu, kernels.cu (the pull and the grey), pool.hpp (threads),
// slot_writer.hpp (streamed stores), trace.hpp (upload.trace), bench.cu (`./main bench upload`).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.hpp"
#include "upload/tuning.hpp"

namespace parvis::cuda {

// How one copy went (for the timing line and the bench).
struct TransferInfo {
  Transfer used = Transfer::Pageable;
  size_t bytes = 0;       // bytes that crossed the link
  int threads = 1;        // host threads that took part
  size_t piece = 0;       // staged: bytes per piece
  size_t pinned = 0;      // staged: the copier's pinned bytes after the copy
  bool padded = false;    // staged: padded rows in 1-D copies
  bool one_pass = false;  // staged: in one pass, pulled by the GPU
  std::string describe() const;  // e.g. "staged one pass, 12 threads x 32 KiB, padded rows, ..."
  // Whether describe() says the same (a run that copies like the last one needs no new text).
  bool same_shape(const TransferInfo& o) const {
    return used == o.used && threads == o.threads && piece == o.piece && padded == o.padded &&
           one_pass == o.one_pass;
  }
};

class StagedCopier {
 public:
  StagedCopier();
  ~StagedCopier();
  StagedCopier(const StagedCopier&) = delete;
  StagedCopier& operator=(const StagedCopier&) = delete;

  // Streams, events and the thread pool for `tuning` (once; again only when its threads change).
  // A copier used before init takes upload_tuning().
  Status init(const UploadTuning& tuning);
  const UploadTuning& tuning() const;
  // Allocates what a copy of `rows` rows of `width` bytes needs (pinned memory, device slots for
  // the grey conversion), so that the copies themselves allocate nothing. Optional: a copy that
  // finds its buffers too small allocates them then (once per shape). `pitch`: the device rows'.
  // `next` (rows `next_pitch` apart), where the caller knows it: the host rows the next copy will
  // take, read by the pool's threads in the background where they fit UploadTuning::read_ahead,
  // so that the copy finds them in its workers' caches. They must stay valid and unchanged until
  // the next copy or end_read_ahead(), each of which stops the reading.
  Status prepare(size_t width, size_t rows, size_t pitch, bool rgb_to_gray = false,
                 const uint8_t* next = nullptr, size_t next_pitch = 0);
  // Stops prepare's reading of `next` and waits until no thread reads it (where no copy
  // followed, before the rows are freed or changed).
  void end_read_ahead();

  // rows x width bytes: host rows `spitch` apart -> device rows `dpitch` apart, ordered after
  // the work queued on `stream` before the call, and before the work queued after it. The host
  // rows may be reused when the call returns (staged) — pageable: as cudaMemcpyAsync.
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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Status upload_rows(uint8_t* dst, size_t dpitch, const uint8_t* src, size_t spitch,
                     size_t width, size_t rows, bool gray, cudaStream_t stream, TransferInfo* info);
};

}  // namespace parvis::cuda
