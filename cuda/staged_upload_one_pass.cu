// The staged copier's one-pass upload (TransferConfig::one_pass; the copier: staged_upload.cu,
// its state: staged_upload_impl.cuh): the pieces' rows into one pinned block by the pool's
// threads, taken by the GPU's pull (upload_kernels.cu) or by the caller's DMAs as they are ready.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>

#include "staged_upload_impl.cuh"

namespace parvis::cuda {

// Flags for a pull of `count` pieces, kPullFlagStride words apart (zeroed when new), and the
// block's device address, mapped (prepare makes them: a first cudaHostAlloc inside the copy
// would be paid by the call).
Status StagedCopier::Impl::pull_reserve(size_t count) {
  const size_t words = count * upload::kPullFlagStride;
  if (pull_flags.size() < words) {
    PARVIS_TRY(wait_block());    // no pull still reads the old flags
    PARVIS_TRY(sync_workers());  // nor a touch (pull_touch)
    pull_flags_dev = nullptr;
    PARVIS_TRY(pull_flags.alloc_mapped(words));
    std::memset(pull_flags.get(), 0, words * sizeof(unsigned));
    PARVIS_TRY(pull_flags.device_pointer(&pull_flags_dev));
  }
  if (pull_block_of != host_block.get()) {
    pull_block_of = nullptr;
    uint8_t* d = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&d), host_block.get(), 0));
    pull_block_dev = d;
    pull_block_of = host_block.get();
  }
  return Status::Ok();
}
// The GPU reads the block and the flags once, so that the first copy's pull does not make their
// address translations (docs/decisions/014). Asynchronous: the
// block and flags are freed only after sync_workers (ensure_block, pull_reserve, release).
Status StagedCopier::Impl::pull_touch() {
  if (!cfg.touch || workers.empty()) return Status::Ok();
  constexpr size_t kPage = 4096;
  PARVIS_TRY(upload::launch_touch(pull_block_dev, host_block.size(), kPage, workers[0].stream));
  return upload::launch_touch(reinterpret_cast<const uint8_t*>(pull_flags_dev),
                              pull_flags.size() * sizeof(unsigned), kPage, workers[0].stream);
}

// The same and the pull's number.
Status StagedCopier::Impl::pull_setup(size_t count, unsigned* seq) {
  PARVIS_TRY(pull_reserve(count));
  if (++pull_seq == 0) {  // wrapped: a flag left from 2^32 pulls ago must not read as set
    std::memset(pull_flags.get(), 0, pull_flags.size() * sizeof(unsigned));
    pull_seq = 1;
  }
  *seq = pull_seq;
  return Status::Ok();
}

// A one-pass upload: the pieces' rows go to their own place in the pinned block (no slot is
// reused, so no copy waits for a DMA), by the pool's threads. Pulled (TransferConfig::pull): the
// caller launches the pull kernel on `stream`, which takes each piece when its flag is set, and
// then copies pieces like the workers. Else the calling thread issues the DMAs on `stream` as
// the pieces become ready, a run of consecutive ready pieces in one copy once it holds
// TransferConfig::batch bytes or ends the image (fewer, larger DMAs; one thread talks to the
// driver: the workers' CUDA calls contended there), and copies
// a piece itself when none is ready to issue. gray: the RGB rows go to the scratch, made grey
// there by one kernel after the last piece.
Status StagedCopier::Impl::upload_one_pass(const Staging& st, uint8_t* dst, size_t dpitch,
                                           const uint8_t* src, size_t spitch, size_t width,
                                           bool gray, cudaStream_t stream, UploadTrace& tr) {
  const PiecePlan& p = st.p;
  const size_t row_bytes = st.padded ? st.padded : width;
  PARVIS_TRY(wait_block());  // the last upload no longer reads it
  tr.step("block-free");
  if (gray) PARVIS_TRY(ensure_scratch(p.rows * width, stream));
  uint8_t* const block = host_block.get();
  std::atomic<size_t> next{0};
  const bool nt = cfg.nt;
  Status issued = Status::Ok();
  // The pull (pullable: rows of one pitch on both sides). A device that cannot map the block
  // takes the DMAs.
  unsigned seq = 0;
  const bool pull = pullable(st, gray) && pull_setup(p.count, &seq).ok();
  pulled = pull;
  tr.step("pull-set-up");
  if (cfg.pull && !pull) (void)cudaGetLastError();
  unsigned* const flags = pull_flags.get();
  std::unique_ptr<std::atomic<bool>[]> ready;  // by DMAs: each piece's, set by its worker
  if (!pull) {
    ready.reset(new std::atomic<bool>[p.count]);
    for (size_t i = 0; i < p.count; ++i) ready[i].store(false, std::memory_order_relaxed);
  }
  // A worker claims up to kClaim bytes of pieces at once while many remain, fewer toward the
  // end (guided: a 2n-th of what is left), so that the last claims, and the last DMA, which
  // waits for them, are small.
  const size_t group_max = std::max<size_t>(1, Staging::kClaim / std::max<size_t>(p.piece_bytes, 1));
  auto claim = [&](size_t* first_piece) -> size_t {
    size_t i = next.load(std::memory_order_relaxed);
    for (;;) {
      if (i >= p.count) return 0;
      const size_t g = std::clamp<size_t>((p.count - i) / (2 * size_t(st.n)), 1, group_max);
      if (next.compare_exchange_weak(i, i + g, std::memory_order_relaxed)) {
        *first_piece = i;
        return g;
      }
    }
  };
  // The next claim, copied by worker wi; between groups of its rows, poll() (the caller
  // issues what became ready meanwhile: waiting for a whole piece's copy delayed them).
  auto copy_next = [&](int wi, const std::function<void()>& poll) {
    size_t i = 0;
    const size_t g = claim(&i);
    if (g == 0) return false;
    const PiecePlan::Piece a = p.at(i), b = p.at(i + g - 1);
    const PiecePlan::Piece pc{a.row0, b.row0 + b.nrows - a.row0, 0, p.width};
    tr.mark(i, 0);
    tr.mark(i, 1);
    SlotWriter w(block + pc.row0 * row_bytes, nt);
    const size_t rows = poll ? std::max<size_t>(1, (size_t(16) << 10) / row_bytes) : pc.nrows;
    for (size_t r = 0; r < pc.nrows; r += rows) {
      fill_rows(w, src, spitch, pc, r, std::min(pc.nrows, r + rows), st.padded);
      if (poll) poll();
    }
    w.finish();
    for (size_t k = i; k < i + g; ++k) {
      if (tr.on) {  // the claim's times on its first piece; the others name it
        tr.pieces[k] = tr.pieces[i];
        tr.pieces[k].worker = wi;
        tr.pieces[k].claim = i;
        tr.pieces[k].bytes = k == i ? pc.nrows * pc.ncols : 0;
      }
      tr.mark(k, 2);
      if (pull) {
        __atomic_store_n(flags + k * upload::kPullFlagStride, seq,
                         __ATOMIC_RELEASE);  // after finish()'s fence
        tr.mark(k, 3);
      } else {
        ready[k].store(true, std::memory_order_release);
      }
    }
    return true;
  };
  size_t first = 0;  // the first piece not issued
  auto issue_ready = [&]() -> Status {  // the calling thread: runs of ready pieces, in order
    while (first < p.count && ready[first].load(std::memory_order_acquire)) {
      size_t end = first + 1;
      while (end < p.count && ready[end].load(std::memory_order_acquire)) ++end;
      const size_t r0 = p.at(first).row0, r1 = p.at(end - 1).row0 + p.at(end - 1).nrows;
      if (end < p.count && (r1 - r0) * row_bytes < cfg.batch) break;  // wait for more
      const uint8_t* h = block + r0 * row_bytes;
      if (st.padded) {
        CUDA_CHECK(cudaMemcpyAsync(dst + r0 * dpitch, h, (r1 - r0) * row_bytes,
                                   cudaMemcpyHostToDevice, stream));
      } else if (gray) {  // the RGB rows to the scratch, made grey at the end
        CUDA_CHECK(cudaMemcpyAsync(scratch.get() + r0 * width, h, (r1 - r0) * width,
                                   cudaMemcpyHostToDevice, stream));
      } else {
        CUDA_CHECK(cudaMemcpy2DAsync(dst + r0 * dpitch, dpitch, h, width, width, r1 - r0,
                                     cudaMemcpyHostToDevice, stream));
      }
      for (size_t i = first; i < end; ++i) tr.mark(i, 3);
      first = end;
    }
    return Status::Ok();
  };
  auto issue = [&]() -> Status {
    const std::function<void()> poll = [&] {
      if (issued.ok()) issued = issue_ready();
    };
    while (first < p.count && issued.ok()) {
      PARVIS_TRY(issue_ready());
      if (first < p.count && !copy_next(0, poll)) std::this_thread::yield();  // copy one too
    }
    PARVIS_TRY(issued);
    // One conversion of the whole image: per run, each would wait for its DMA and the next
    // DMA for it (one stream), which left the link idle.
    if (gray)
      PARVIS_TRY(launch_gray(scratch.get(), width, dst, dpitch, int(width / 3), int(p.rows), stream));
    return Status::Ok();
  };
  // The pull's caller: the kernel launched while the workers copy, then pieces like them.
  auto pull_all = [&]() -> Status {
    uint8_t* const target = gray ? scratch.get() : dst;
    tr.gpu_step("launch");
    PARVIS_TRY(upload::launch_pull(pull_block_dev, target, p.rows * row_bytes,
                                   p.rows_per_piece * row_bytes, pull_flags_dev, seq, p.count,
                                   stream, tr.pull_times_dev, 64, upload::kPullFlagStride));
    tr.step("launched");
    while (copy_next(0, nullptr)) {
    }
    if (gray)
      PARVIS_TRY(launch_gray(scratch.get(), width, dst, dpitch, int(width / 3), int(p.rows), stream));
    return Status::Ok();
  };
  tr.step("run");
  pool.run(st.n, [&](int wi) {
    if (wi == 0) {
      const Status e = pull ? pull_all() : issue();
      if (issued.ok()) issued = e;
      if (!issued.ok()) next.store(p.count);  // the workers stop at their next piece
      return;
    }
    while (copy_next(wi, nullptr)) {
    }
  });
  tr.step("workers-done");
  if (gray) CUDA_CHECK(cudaEventRecord(scratch_done, stream));
  return issued;
}

}  // namespace parvis::cuda
