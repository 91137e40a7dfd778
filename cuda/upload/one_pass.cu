// The staged copier's one-pass upload (the copier: copier.cu, its state: copier_impl.cuh): the
// pieces' rows into one pinned block by the pool's threads, taken by the GPU's pull
// (kernels.cu) as each is ready.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "upload/copier_impl.cuh"

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
// address translations (docs/decisions/014). Asynchronous: the block and flags are freed only
// after sync_workers (ensure_block, pull_reserve, release).
Status StagedCopier::Impl::pull_touch() {
  if (workers.empty()) return Status::Ok();
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
// reused, so no copy waits for a DMA), by the pool's threads, each piece's flag set once its
// streamed stores are fenced. The caller launches the pull kernel on `stream`, which takes each
// piece when its flag is set, and then copies pieces like the workers. gray: the RGB rows go to
// the scratch, made grey there by one kernel after the pull.
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
  unsigned seq = 0;
  PARVIS_TRY(pull_setup(p.count, &seq));
  tr.step("pull-set-up");
  unsigned* const flags = pull_flags.get();
  // A worker claims up to kClaim bytes of pieces at once while many remain, fewer toward the
  // end (guided: a 2n-th of what is left), so that the last claims, which the pull's end waits
  // for, are small.
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
  // The next claim, copied by worker wi, its pieces' flags set; false when none is left.
  auto copy_next = [&](int wi) {
    size_t i = 0;
    const size_t g = claim(&i);
    if (g == 0) return false;
    const PiecePlan::Piece a = p.at(i), b = p.at(i + g - 1);
    const PiecePlan::Piece pc{a.row0, b.row0 + b.nrows - a.row0, 0, p.width};
    tr.mark(i, 0);
    tr.mark(i, 1);
    SlotWriter w(block + pc.row0 * row_bytes, nt);
    fill_rows(w, src, spitch, pc, 0, pc.nrows, st.padded);
    w.finish();
    for (size_t k = i; k < i + g; ++k) {
      if (tr.on) {  // the claim's times on its first piece; the others name it
        tr.pieces[k] = tr.pieces[i];
        tr.pieces[k].worker = wi;
        tr.pieces[k].claim = i;
        tr.pieces[k].bytes = k == i ? pc.nrows * pc.ncols : 0;
      }
      tr.mark(k, 2);
      __atomic_store_n(flags + k * upload::kPullFlagStride, seq, __ATOMIC_RELEASE);  // after finish()'s fence
      tr.mark(k, 3);
    }
    return true;
  };
  // The caller: the kernel launched while the workers copy (docs/decisions/013), then pieces
  // like them.
  auto pull_all = [&]() -> Status {
    uint8_t* const target = gray ? scratch.get() : dst;
    tr.gpu_step("launch");
    PARVIS_TRY(upload::launch_pull(pull_block_dev, target, p.rows * row_bytes,
                                   p.rows_per_piece * row_bytes, pull_flags_dev, seq, p.count,
                                   stream, tr.pull_times_dev, 64, upload::kPullFlagStride));
    tr.step("launched");
    while (copy_next(0)) {
    }
    if (gray)
      PARVIS_TRY(launch_gray(scratch.get(), width, dst, dpitch, int(width / 3), int(p.rows), stream));
    return Status::Ok();
  };
  Status result = Status::Ok();
  tr.step("run");
  pool.run(st.n, [&](int wi) {
    if (wi == 0) {
      result = pull_all();
      // A failed launch: the workers stop at their next claim. The flags they set are never
      // read (the next pull has another number).
      if (!result.ok()) next.store(p.count);
      return;
    }
    while (copy_next(wi)) {
    }
  });
  tr.step("workers-done");
  if (gray) CUDA_CHECK(cudaEventRecord(scratch_done, stream));
  return result;
}

}  // namespace parvis::cuda
