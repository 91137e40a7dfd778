// The staged copier (staged_upload.cuh): its workers and the ways of a copy in each direction.
// The configuration and the piece plan: staged_upload_plan.cu; the kernels (RGB -> grey, the
// linear copy's repack, the one-pass pull): upload_kernels.cu; the thread pool: upload_pool.hpp;
// the host's writes into pinned memory: slot_writer.hpp; the trace: upload_trace.hpp; the slots
// pinned ahead: staged_upload_ahead.cu.
#include "staged_upload.cuh"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#if defined(__SSE2__)
#endif

#include "common.cuh"
#include "common/gray.hpp"
#include "slot_writer.hpp"
#include "upload_kernels.cuh"
#include "upload_pool.hpp"
#include "upload_trace.hpp"

namespace parvis::cuda {

// ---- the workers (the thread pool: upload_pool.hpp) ----------------------------------------------
namespace {

struct Worker {
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  std::vector<cudaEvent_t> ev;  // one per slot: its last DMA
  uint8_t* host = nullptr;      // its slots x slot_bytes in the copier's pinned block
  uint8_t* dev = nullptr;       // the same on the GPU (RGB pieces before their conversion)
};

}  // namespace

using upload::fill_piece;
using upload::launch_gray;
using upload::launch_repack;
using upload::UploadTrace;
using upload::fill_rows;
using upload::SlotWriter;
using upload::unpack;

struct StagedCopier::Impl {
  TransferConfig cfg;
  bool ready = false;
  int device = 0;
  cudaEvent_t start = nullptr;
  cudaEvent_t block_done = nullptr;  // after the DMAs of the last staged upload
  std::deque<Worker> workers;
  upload::Pool pool;
  // Every worker's slots: one pinned block (worker i at i x slots x slot_bytes) for the first
  // slot_workers workers, and its device twin (the RGB pieces before their conversion).
  PinnedBuffer<uint8_t> host_block;
  DeviceBuffer<uint8_t> dev_block;
  DeviceBuffer<uint8_t> warm_sink;  // warm_up's DMAs land here
  size_t slot_bytes = 0, dev_slot_bytes = 0;
  int slot_workers = 0, dev_slot_workers = 0;
  UploadTrace::Clock::time_point prepared_at = UploadTrace::Clock::now();  // for the trace
  // pageable / register RGB -> grey and linear: the rows on the device before their conversion
  // or repack; scratch_done: recorded after the last work that reads it.
  DeviceBuffer<uint8_t> scratch;
  cudaEvent_t scratch_done = nullptr;
  // The pull (TransferConfig::pull): a flag per piece in mapped pinned memory, the number of the
  // last pull (a piece is ready when its flag equals it; never 0, the flags' first value) and
  // the block's device address.
  PinnedBuffer<unsigned> pull_flags;
  unsigned* pull_flags_dev = nullptr;
  unsigned pull_seq = 0;
  const uint8_t* pull_block_of = nullptr;
  const uint8_t* pull_block_dev = nullptr;
  bool pulled = false;  // the last one-pass upload was pulled (for its report)

  ~Impl() { release(); }
  void release() {
    pool.wait();  // a warm-up still using the workers
    for (Worker& w : workers) {
      if (w.stream) cudaStreamSynchronize(w.stream);
      for (cudaEvent_t e : w.ev) cudaEventDestroy(e);
      if (w.done) cudaEventDestroy(w.done);
      if (w.stream) cudaStreamDestroy(w.stream);
    }
    workers.clear();
    slot_bytes = dev_slot_bytes = 0;
    slot_workers = dev_slot_workers = 0;
    if (start) cudaEventDestroy(start);
    start = nullptr;
    if (block_done) {
      cudaEventSynchronize(block_done);
      cudaEventDestroy(block_done);
    }
    block_done = nullptr;
    if (scratch_done) {
      cudaEventSynchronize(scratch_done);
      cudaEventDestroy(scratch_done);
    }
    scratch_done = nullptr;
    ready = false;
  }

  // The threads a copy of `bytes` takes: auto's small copies stay on the calling thread.
  int threads_for(size_t bytes) const {
    if (cfg.mode != Transfer::Auto) return cfg.threads;
    if (bytes < cfg.staged_min) return 1;  // first: PARVIS_UPLOAD_MIN may exceed staged_all
    return bytes >= cfg.staged_all ? cfg.threads : std::min(cfg.threads, 4);
  }
  // Whole-row pieces go as padded rows (the device pitch, one 1-D DMA) where `pitch` is at most
  // 256 bytes wider than `width`; 0: tight rows, one 2-D DMA a piece.
  size_t padded_pitch(const PiecePlan& p, size_t pitch) const {
    return !cfg.copy_2d && p.rows_per_piece && pitch >= p.width && pitch - p.width <= 256 ? pitch : 0;
  }
  static size_t slot_need(const PiecePlan& p, size_t padded) {
    return padded ? std::min(p.rows_per_piece, p.rows) * padded : p.piece_bytes;
  }

  Status sync_workers() {
    for (Worker& w : workers) CUDA_CHECK(cudaStreamSynchronize(w.stream));
    return Status::Ok();
  }
  // Slots of at least `bytes` (host) and `dev_bytes` (device) for the first n workers: one
  // block each side, grown (never shrunk) when a copy needs larger slots or more workers.
  Status ensure_slots(int n, size_t bytes, size_t dev_bytes) {
    const size_t S = size_t(cfg.slots);
    pool.wait();  // a warm-up may still read the slots
    if (slot_bytes < bytes || slot_workers < n) {
      PARVIS_TRY(sync_workers());  // no DMA may still use the old slots
      CUDA_CHECK(cudaEventSynchronize(block_done));  // nor a one-pass upload's, on its stream
      const size_t b = std::max(bytes, slot_bytes);
      const int k = std::max(n, slot_workers);
      slot_bytes = 0;  // alloc frees the old block first: no slots left if it fails
      slot_workers = 0;
      const size_t need = size_t(k) * S * b;
      size_t have = 0;
      if (need > host_block.size())  // the block pinned ahead, where there is one that fits
        if (uint8_t* p = upload_ahead_take(need, &have)) host_block.adopt(p, have);
      PARVIS_TRY(host_block.alloc(need));  // nothing where the block already holds `need`
      for (int i = 0; i < k; ++i) workers[size_t(i)].host = host_block.get() + size_t(i) * S * b;
      slot_bytes = b;
      slot_workers = k;
    }
    if (dev_bytes && (dev_slot_bytes < dev_bytes || dev_slot_workers < n)) {
      PARVIS_TRY(sync_workers());
      const size_t b = std::max(dev_bytes, dev_slot_bytes);
      const int k = std::max(n, dev_slot_workers);
      dev_slot_bytes = 0;
      dev_slot_workers = 0;
      PARVIS_TRY(dev_block.alloc(size_t(k) * S * b));
      for (int i = 0; i < k; ++i) workers[size_t(i)].dev = dev_block.get() + size_t(i) * S * b;
      dev_slot_bytes = b;
      dev_slot_workers = k;
    }
    return Status::Ok();
  }
  // A pinned block of at least `bytes` for a one-pass upload (the slots, which share it, are
  // laid out again by their next ensure_slots).
  Status ensure_block(size_t bytes) {
    pool.wait();
    if (host_block.size() >= bytes) return Status::Ok();
    PARVIS_TRY(sync_workers());  // no DMA may still read the old block
    CUDA_CHECK(cudaEventSynchronize(block_done));
    slot_bytes = 0;
    slot_workers = 0;
    size_t have = 0;
    if (uint8_t* p = upload_ahead_take(bytes, &have)) host_block.adopt(p, have);
    return host_block.alloc(bytes);
  }
  // The scratch of at least `bytes`, free of the work that read it before (on any stream), and
  // `stream` (when given) ordered after that work.
  Status ensure_scratch(size_t bytes, cudaStream_t stream) {
    if (scratch.size() < bytes) {
      CUDA_CHECK(cudaEventSynchronize(scratch_done));  // an earlier conversion may still read it
      PARVIS_TRY(scratch.alloc(bytes));
    }
    if (stream) CUDA_CHECK(cudaStreamWaitEvent(stream, scratch_done, 0));
    return Status::Ok();
  }

  // The start of a staged copy: its pieces, workers and slot rows (padded: the device pitch;
  // 0: tight rows), the slots allocated, the workers ordered after `stream`'s work.
  struct Staging {
    PiecePlan p;
    int n = 0;
    size_t padded = 0;
    bool one_pass = false;  // the whole image in the pinned block at once (upload_one_pass)
    static constexpr size_t kClaim = size_t(256) << 10;  // one pass: a worker's claim, at most
  };
  // One pass (TransferConfig::one_pass): an upload of whole-row pieces whose rows (as the slots
  // would hold them) fit in the pinned bytes the slots may take; its pieces are smaller (the
  // first DMA starts sooner; a piece costs no CUDA call).
  size_t one_pass_limit(int threads) const {
    return cfg.pinned ? cfg.pinned : size_t(threads) * size_t(cfg.slots) * cfg.chunk;
  }
  Status reserve(size_t width, size_t rows, size_t pitch, bool gray, bool upload, Staging* st) {
    const size_t bytes = width * rows;
    int threads = threads_for(bytes);
    size_t limit = piece_limit(cfg, threads);
    st->p = plan_pieces(width, rows, limit, threads, gray);
    st->padded = gray ? 0 : padded_pitch(st->p, pitch);
    const size_t row_bytes = st->padded ? st->padded : width;
    // One pass: all the threads from staged_min on (its pieces cost no CUDA call, so auto's
    // fewer threads for mid sizes, measured on the slots, do not apply).
    const int all = cfg.mode == Transfer::Auto && bytes < cfg.staged_min ? 1 : cfg.threads;
    st->one_pass = upload && cfg.one_pass && st->p.rows_per_piece &&
                   rows * row_bytes <= one_pass_limit(all);
    if (st->one_pass) {
      threads = all;
      limit = std::min(piece_limit(cfg, threads), cfg.piece);
      st->p = plan_pieces(width, rows, limit, threads, true);
      st->n = int(std::min<size_t>(size_t(threads), st->p.count));
      PARVIS_TRY(ensure_block(rows * row_bytes));
      return gray ? ensure_scratch(bytes, nullptr) : Status::Ok();
    }
    st->n = int(std::min<size_t>(size_t(threads), st->p.count));
    return ensure_slots(st->n, slot_need(st->p, st->padded), gray ? st->p.piece_bytes : 0);
  }
  Status begin(size_t width, size_t rows, size_t pitch, bool gray, bool upload,
               cudaStream_t stream, Staging* st) {
    PARVIS_TRY(reserve(width, rows, pitch, gray, upload, st));
    if (st->one_pass) return Status::Ok();
    // The slots share the block: a one-pass upload's DMAs or pull may still read it.
    if (upload) CUDA_CHECK(cudaEventSynchronize(block_done));
    return fork(st->n, stream);
  }
  // Its end: `stream` after the workers' copies (also after a failure: it waits for what ran),
  // then the pieces' status and the report.
  Status end(const Staging& st, cudaStream_t stream, const Status& pieces, TransferInfo local,
             TransferInfo* info) {
    if (!st.one_pass) PARVIS_TRY(join(st.n, stream));
    CUDA_CHECK(cudaEventRecord(block_done, stream));  // the next one-pass upload waits for it
    PARVIS_TRY(pieces);
    local.threads = st.n;
    local.piece = st.p.piece_bytes;
    local.padded = st.padded != 0;
    local.one_pass = st.one_pass;
    local.pulled = st.one_pass && pulled;
    local.pinned = st.one_pass ? host_block.size() : size_t(slot_workers) * size_t(cfg.slots) * slot_bytes;
    if (info) *info = local;
    return Status::Ok();
  }

  // Orders the first n worker streams after the work queued on `stream` so far.
  Status fork(int n, cudaStream_t stream) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < n; ++i) CUDA_CHECK(cudaStreamWaitEvent(workers[size_t(i)].stream, start, 0));
    return Status::Ok();
  }
  // And `stream`'s later work after theirs.
  Status join(int n, cudaStream_t stream) {
    for (int i = 0; i < n; ++i) {
      Worker& w = workers[size_t(i)];
      CUDA_CHECK(cudaEventRecord(w.done, w.stream));
      CUDA_CHECK(cudaStreamWaitEvent(stream, w.done, 0));
    }
    return Status::Ok();
  }

  // TransferConfig::warm, in the background on the pool's threads, after prepare: the first use
  // of the first n workers' streams and slots (pool thread i takes worker i, thread 1 also
  // worker 0: one small DMA from each slot, its event recorded) and the grey kernel loaded
  // (lazy loading: else at its first launch). On the H100 host a thread's first DMA issue took
  // 30-150 µs inside the first copy (PARVIS_UPLOAD_TRACE). Then the threads stay awake up to
  // TransferConfig::hot_ms for the copy (a match call prepares its copier 7-25 ms before its
  // upload; woken from sleep, a thread started its piece ~50 µs late). The copier's next call
  // waits for the job (Pool::run, ensure_slots); a failure here is left to that call, which
  // makes the same CUDA calls, checked.
  void warm_up(int n, bool gray) {
    pool.wait();
    if (pool.size() < 2) return;
    const size_t S = size_t(cfg.slots), probe = std::min<size_t>(slot_bytes, 4096);
    if (n > 0 && slot_bytes && warm_sink.size() < size_t(n) * S * probe &&
        !warm_sink.alloc(size_t(n) * S * probe).ok()) {
      (void)cudaGetLastError();
      n = 0;
    }
    if (!slot_bytes) n = 0;
    const int dev = device;
    pool.post(pool.size(), [this, n, S, probe, gray, dev](int thread) {
      (void)cudaSetDevice(dev);
      auto warm_worker = [&](int wi) {
        Worker& w = workers[size_t(wi)];
        for (size_t k = 0; k < S; ++k) {
          (void)cudaMemcpyAsync(warm_sink.get() + (size_t(wi) * S + k) * probe,
                                w.host + k * slot_bytes, probe, cudaMemcpyHostToDevice, w.stream);
          (void)cudaEventRecord(w.ev[k], w.stream);
        }
      };
      if (thread == 1) {
        if (n > 0) warm_worker(0);
        upload::load_kernels(gray, cfg.pull);
      }
      if (thread < n) warm_worker(thread);
    }, cfg.hot_ms * 1000u);
  }

  // Flags for a pull of `count` pieces (zeroed when new) and the block's device address, mapped
  // (prepare makes them: a first cudaHostAlloc inside the copy cost ~20 µs).
  Status pull_reserve(size_t count) {
    if (pull_flags.size() < count) {
      pull_flags_dev = nullptr;
      PARVIS_TRY(pull_flags.alloc_mapped(count));
      std::memset(pull_flags.get(), 0, count * sizeof(unsigned));
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
  // The same and the pull's number.
  Status pull_setup(size_t count, unsigned* seq) {
    PARVIS_TRY(pull_reserve(count));
    if (++pull_seq == 0) {  // wrapped: a flag left from 2^32 pulls ago must not read as set
      std::memset(pull_flags.get(), 0, pull_flags.size() * sizeof(unsigned));
      pull_seq = 1;
    }
    *seq = pull_seq;
    return Status::Ok();
  }

  // A one-pass upload: the pieces' rows go to their own place in the pinned block (no slot is
  // reused, so no copy waits for a DMA), by the pool's threads; the calling thread issues the
  // DMAs on `stream` as the pieces become ready, a run of consecutive ready pieces in one copy
  // once it holds TransferConfig::batch bytes or ends the image (fewer, larger DMAs; one thread
  // talks to the driver: the workers' CUDA calls contended there, 10-100 µs each on the H100
  // host), and copies a piece itself when none is ready to issue. gray: the RGB rows
  // go to the scratch, made grey there by one kernel after the last DMA.
  Status upload_one_pass(const Staging& st, uint8_t* dst, size_t dpitch, const uint8_t* src,
                  size_t spitch, size_t width, bool gray, cudaStream_t stream, UploadTrace& tr) {
    const PiecePlan& p = st.p;
    const size_t row_bytes = st.padded ? st.padded : width;
    CUDA_CHECK(cudaEventSynchronize(block_done));  // the last upload's DMAs no longer read it
    if (gray) PARVIS_TRY(ensure_scratch(p.rows * width, stream));
    uint8_t* const block = host_block.get();
    std::unique_ptr<std::atomic<bool>[]> ready(new std::atomic<bool>[p.count]);
    for (size_t i = 0; i < p.count; ++i) ready[i].store(false, std::memory_order_relaxed);
    std::atomic<size_t> next{0};
    const bool nt = cfg.nt;
    Status issued = Status::Ok();
    // The pull: rows of one pitch on both sides (padded, or RGB rows to the scratch). A device
    // that cannot map the block takes the DMAs.
    unsigned seq = 0;
    const bool pull = cfg.pull && (st.padded || gray) && pull_setup(p.count, &seq).ok();
    pulled = pull;
    if (cfg.pull && !pull) (void)cudaGetLastError();
    unsigned* const flags = pull_flags.get();
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
    // issues what became ready meanwhile: a whole piece's copy, ~50 µs, delayed them).
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
          __atomic_store_n(flags + k, seq, __ATOMIC_RELEASE);  // after finish()'s fence
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
      // DMA for it (one stream), which left the link idle (H100: 19 against 25 GB/s).
      if (gray)
        PARVIS_TRY(launch_gray(scratch.get(), width, dst, dpitch, int(width / 3), int(p.rows), stream));
      return Status::Ok();
    };
    // The pull's caller: the kernel launched while the workers copy, then pieces like them.
    auto pull_all = [&]() -> Status {
      uint8_t* const target = gray ? scratch.get() : dst;
      PARVIS_TRY(upload::launch_pull(pull_block_dev, target, p.rows * row_bytes,
                                     p.rows_per_piece * row_bytes, pull_flags_dev, seq, p.count,
                                     stream));
      while (copy_next(0, nullptr)) {
      }
      if (gray)
        PARVIS_TRY(launch_gray(scratch.get(), width, dst, dpitch, int(width / 3), int(p.rows), stream));
      return Status::Ok();
    };
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
    if (gray) CUDA_CHECK(cudaEventRecord(scratch_done, stream));
    return issued;
  }

  // Runs body(worker, piece index) over the pieces, n workers, each on its own pieces in turn.
  // finish(worker), when given, runs on each worker after its last piece (also after a failure).
  Status run(int n, size_t count, const std::function<Status(int, size_t)>& body,
             const std::function<Status(int)>* finish = nullptr) {
    std::atomic<size_t> next{0};
    std::vector<Status> errs(static_cast<size_t>(n));
    const int dev = device;
    pool.run(n, [&](int wi) {
      if (wi != 0) {
        const cudaError_t e = cudaSetDevice(dev);
        if (e != cudaSuccess) {
          errs[size_t(wi)] = cuda_status(e, "cudaSetDevice(dev)", __FILE__, __LINE__);
          return;
        }
      }
      for (;;) {
        const size_t i = next.fetch_add(1);
        if (i >= count) break;
        const Status s = body(wi, i);
        if (!s.ok()) {
          errs[size_t(wi)] = s;
          next.store(count);  // the others stop at their next piece
          break;
        }
      }
      if (finish) {
        const Status s = (*finish)(wi);
        if (errs[size_t(wi)].ok()) errs[size_t(wi)] = s;
      }
    });
    for (const Status& s : errs)
      if (!s.ok()) return s;
    return Status::Ok();
  }
};

StagedCopier::StagedCopier() : impl_(new Impl) {}
StagedCopier::~StagedCopier() = default;

const TransferConfig& StagedCopier::config() const { return impl_->cfg; }

Status StagedCopier::init(const TransferConfig& c) {
  Impl& m = *impl_;
  if (c.threads < 1 || c.threads > 64 || c.slots < 1 || c.slots > 8 || c.chunk == 0)
    return Status::usage("staged copy: 1..64 threads, 1..8 slots and a chunk of at least 1 byte");
  if (m.ready && m.cfg.threads == c.threads && m.cfg.slots == c.slots) {
    m.cfg = c;  // chunk and thresholds change nothing allocated
    m.pool.set_spin(c.spin_us);
    return Status::Ok();
  }
  m.release();
  m.cfg = c;
  CUDA_CHECK(cudaGetDevice(&m.device));
  CUDA_CHECK(cudaEventCreateWithFlags(&m.start, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&m.block_done, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&m.scratch_done, cudaEventDisableTiming));
  for (int i = 0; i < c.threads; ++i) m.workers.emplace_back();
  for (Worker& w : m.workers) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&w.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&w.done, cudaEventDisableTiming));
    w.ev.assign(size_t(c.slots), nullptr);
    for (cudaEvent_t& e : w.ev) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  m.pool.set_spin(c.spin_us);
  if (m.pool.size() != c.threads) {
    const int dev = m.device;
    m.pool.start(c.threads - 1, [dev] { (void)cudaSetDevice(dev); });  // the run checks it again
  }
  m.ready = true;
  return Status::Ok();
}

Transfer StagedCopier::choose(size_t bytes) const {
  const TransferConfig& c = impl_->cfg;
  if (c.mode != Transfer::Auto) return c.mode;
  return bytes > 0 && bytes <= c.linear_max ? Transfer::Linear : Transfer::Staged;
}

Status StagedCopier::prepare(size_t width, size_t rows, size_t pitch, bool rgb_to_gray) {
  Impl& m = *impl_;
  if (!m.ready) PARVIS_TRY(init(m.cfg));
  const size_t bytes = width * rows;
  const Transfer t = choose(bytes);
  if (t == Transfer::Staged) {
    Impl::Staging st;
    PARVIS_TRY(m.reserve(width, rows, pitch, rgb_to_gray, true, &st));
    if (st.one_pass && m.cfg.pull && (st.padded || rgb_to_gray) && !m.pull_reserve(st.p.count).ok())
      (void)cudaGetLastError();  // the upload takes the DMAs
    if (m.cfg.warm) m.warm_up(st.one_pass ? 0 : st.n, rgb_to_gray);  // one pass: no slots
    m.prepared_at = UploadTrace::Clock::now();
  } else if ((rgb_to_gray || t == Transfer::Linear) && m.scratch.size() < bytes) {
    // the rows' span where the host rows are tight (a copy from wider rows grows it)
    CUDA_CHECK(cudaEventSynchronize(m.scratch_done));
    PARVIS_TRY(m.scratch.alloc(bytes));
  }
  return Status::Ok();
}


// One copy host -> device, `gray`: the rows are RGB (width = 3 W) and dst gets their grey.
Status StagedCopier::upload_rows(Transfer t, uint8_t* dst, size_t dpitch,
                          const uint8_t* src, size_t spitch, size_t width, size_t rows, bool gray,
                          cudaStream_t stream, TransferInfo* info) {
  Impl& m = *impl_;
  TransferInfo local;
  local.used = t;
  local.bytes = width * rows;
  if (width == 0 || rows == 0) {
    if (info) *info = local;
    return Status::Ok();
  }
  if (t == Transfer::Staged) {
    UploadTrace tr;
    Impl::Staging st;
    PARVIS_TRY(m.begin(width, rows, dpitch, gray, true, stream, &st));
    const PiecePlan& p = st.p;
    const int n = st.n;
    const size_t padded = st.padded;
    tr.on = m.cfg.trace;
    if (tr.on) tr.pieces.resize(p.count), tr.setup = tr.now();
    std::vector<unsigned> next_slot(static_cast<size_t>(n), 0u);
    const Status s = st.one_pass ? m.upload_one_pass(st, dst, dpitch, src, spitch, width, gray, stream, tr)
                                 : m.run(n, p.count, [&](int wi, size_t i) -> Status {
      Worker& w = m.workers[size_t(wi)];
      const unsigned slot = next_slot[size_t(wi)];
      next_slot[size_t(wi)] = (slot + 1) % unsigned(m.cfg.slots);
      const PiecePlan::Piece pc = p.at(i);
      tr.mark(i, 0);
      CUDA_CHECK(cudaEventSynchronize(w.ev[slot]));  // the slot's last DMA is done
      tr.mark(i, 1);
      uint8_t* h = w.host + size_t(slot) * m.slot_bytes;
      fill_piece(h, src, spitch, pc, padded, m.cfg.nt);
      tr.mark(i, 2);
      if (padded) {  // rows of the device pitch, the bytes past width zero: one 1-D DMA
        CUDA_CHECK(cudaMemcpyAsync(dst + pc.row0 * dpitch, h, pc.nrows * padded,
                                   cudaMemcpyHostToDevice, w.stream));
      } else if (gray) {
        uint8_t* d = w.dev + size_t(slot) * m.dev_slot_bytes;
        CUDA_CHECK(cudaMemcpyAsync(d, h, pc.nrows * pc.ncols, cudaMemcpyHostToDevice, w.stream));
        PARVIS_TRY(launch_gray(d, pc.ncols, dst + pc.row0 * dpitch, dpitch, int(pc.ncols / 3),
                               int(pc.nrows), w.stream));
      } else {
        CUDA_CHECK(cudaMemcpy2DAsync(dst + pc.row0 * dpitch + pc.col0, dpitch, h, pc.ncols,
                                     pc.ncols, pc.nrows, cudaMemcpyHostToDevice, w.stream));
      }
      CUDA_CHECK(cudaEventRecord(w.ev[slot], w.stream));
      if (tr.on) tr.pieces[i].worker = wi, tr.pieces[i].bytes = pc.nrows * pc.ncols, tr.mark(i, 3);
      return Status::Ok();
    });
    if (!tr.on) return m.end(st, stream, s, local, info);
    tr.issued = tr.now();
    PARVIS_TRY(m.end(st, stream, s, local, info));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    tr.print(width * rows, n,
             std::chrono::duration<double, std::milli>(tr.t0 - m.prepared_at).count(), tr.now());
    return Status::Ok();
  }
  // Pageable or register: the rows straight from the user's memory, into dst or (RGB) the
  // scratch; linear: their whole span (host pitch kept) in one 1-D copy into the scratch, then
  // repacked into dst (or made grey) on the GPU. Straight into dst where the rows are tight on
  // both sides.
  const size_t span = spitch * (rows - 1) + width;
  const bool linear = t == Transfer::Linear;
  const bool via_scratch = gray || (linear && !(spitch == width && dpitch == width));
  uint8_t* target = dst;
  size_t tpitch = linear ? spitch : dpitch;
  if (via_scratch) {
    PARVIS_TRY(m.ensure_scratch(linear ? span : width * rows, stream));
    target = m.scratch.get();
    tpitch = linear ? spitch : width;
  }
  void* base = const_cast<uint8_t*>(src);
  if (t == Transfer::Register)
    CUDA_CHECK(cudaHostRegister(base, span, cudaHostRegisterDefault));
  const cudaError_t copy =
      linear ? cudaMemcpyAsync(target, src, span, cudaMemcpyHostToDevice, stream)
             : cudaMemcpy2DAsync(target, tpitch, src, spitch, width, rows, cudaMemcpyHostToDevice,
                                 stream);
  if (t == Transfer::Register) {
    // The pages stay pinned until the DMA is done, whatever happened.
    const cudaError_t done = cudaStreamSynchronize(stream);
    const cudaError_t unreg = cudaHostUnregister(base);
    CUDA_CHECK(copy);
    CUDA_CHECK(done);
    CUDA_CHECK(unreg);
  }
  CUDA_CHECK(copy);
  if (gray) PARVIS_TRY(launch_gray(target, tpitch, dst, dpitch, int(width / 3), int(rows), stream));
  else if (via_scratch) PARVIS_TRY(launch_repack(target, tpitch, dst, dpitch, width, rows, stream));
  if (via_scratch) CUDA_CHECK(cudaEventRecord(m.scratch_done, stream));
  if (info) *info = local;
  return Status::Ok();
}

Status StagedCopier::to_device(uint8_t* dst, size_t dpitch, const uint8_t* src, size_t spitch,
                               size_t width, size_t rows, cudaStream_t stream, TransferInfo* info) {
  if (!impl_->ready) PARVIS_TRY(init(impl_->cfg));
  return upload_rows(choose(width * rows), dst, dpitch, src, spitch, width, rows, false,
                     stream, info);
}

Status StagedCopier::rgb_to_gray_device(uint8_t* dst, size_t dpitch, const uint8_t* rgb,
                                        size_t spitch, int W, int H, cudaStream_t stream,
                                        TransferInfo* info) {
  if (!impl_->ready) PARVIS_TRY(init(impl_->cfg));
  const size_t width = 3 * size_t(W);
  return upload_rows(choose(width * size_t(H)), dst, dpitch, rgb, spitch, width, size_t(H),
                     true, stream, info);
}

Status StagedCopier::to_host(uint8_t* dst, size_t dpitch, const uint8_t* src, size_t spitch,
                             size_t width, size_t rows, cudaStream_t stream, TransferInfo* info) {
  Impl& m = *impl_;
  if (!m.ready) PARVIS_TRY(init(m.cfg));
  TransferInfo local;
  local.used = choose(width * rows);
  local.bytes = width * rows;
  if (width == 0 || rows == 0) {
    if (info) *info = local;
    return Status::Ok();
  }
  if (local.used == Transfer::Staged) {
    Impl::Staging st;  // padded: device rows whole, one 1-D DMA a piece
    PARVIS_TRY(m.begin(width, rows, spitch, false, false, stream, &st));
    const PiecePlan& p = st.p;
    const int n = st.n;
    const size_t padded = st.padded;
    // Each worker keeps up to `slots` DMAs in flight and copies out the oldest (FIFO: the
    // oldest of k issued is slot k % slots).
    struct Flight {
      std::vector<PiecePlan::Piece> pieces;
      size_t issued = 0, drained = 0;
    };
    std::vector<Flight> fl(static_cast<size_t>(n));
    const size_t S = size_t(m.cfg.slots);
    auto drain_one = [&](int wi) -> Status {
      Worker& w = m.workers[size_t(wi)];
      Flight& f = fl[size_t(wi)];
      const size_t slot = f.drained % S;
      CUDA_CHECK(cudaEventSynchronize(w.ev[slot]));
      const uint8_t* h = w.host + slot * m.slot_bytes;
      const PiecePlan::Piece& pc = f.pieces[f.drained % S];
      if (padded) {
        for (size_t r = 0; r < pc.nrows; ++r)
          std::memcpy(dst + (pc.row0 + r) * dpitch, h + r * padded, pc.ncols);
      } else {
        unpack(dst, dpitch, h, pc);
      }
      ++f.drained;
      return Status::Ok();
    };
    for (Flight& f : fl) f.pieces.resize(S);
    // What a worker still has in flight, copied out by that worker.
    const std::function<Status(int)> finish = [&](int wi) -> Status {
      while (fl[size_t(wi)].drained < fl[size_t(wi)].issued) PARVIS_TRY(drain_one(wi));
      return Status::Ok();
    };
    const Status s = m.run(n, p.count, [&](int wi, size_t i) -> Status {
      Worker& w = m.workers[size_t(wi)];
      Flight& f = fl[size_t(wi)];
      if (f.issued - f.drained == S) PARVIS_TRY(drain_one(wi));
      const size_t slot = f.issued % S;
      const PiecePlan::Piece pc = p.at(i);
      f.pieces[slot] = pc;
      if (padded)
        CUDA_CHECK(cudaMemcpyAsync(w.host + slot * m.slot_bytes, src + pc.row0 * spitch,
                                   pc.nrows * padded, cudaMemcpyDeviceToHost, w.stream));
      else
        CUDA_CHECK(cudaMemcpy2DAsync(w.host + slot * m.slot_bytes, pc.ncols,
                                     src + pc.row0 * spitch + pc.col0, spitch, pc.ncols,
                                     pc.nrows, cudaMemcpyDeviceToHost, w.stream));
      CUDA_CHECK(cudaEventRecord(w.ev[slot], w.stream));
      ++f.issued;
      return Status::Ok();
    }, &finish);
    return m.end(st, stream, s, local, info);
  }
  if (local.used == Transfer::Linear) {
    // Tight host rows: repacked tight on the GPU, then one 1-D copy. Wider host rows would
    // have their bytes past `width` overwritten by a 1-D copy: those go as pageable.
    if (dpitch == width) {
      uint8_t* from = const_cast<uint8_t*>(src);
      if (spitch != width) {
        PARVIS_TRY(m.ensure_scratch(width * rows, stream));
        PARVIS_TRY(launch_repack(src, spitch, m.scratch.get(), width, width, rows, stream));
        from = m.scratch.get();
      }
      const cudaError_t copy = cudaMemcpyAsync(dst, from, width * rows, cudaMemcpyDeviceToHost, stream);
      const cudaError_t rec = from != src ? cudaEventRecord(m.scratch_done, stream) : cudaSuccess;
      const cudaError_t done = cudaStreamSynchronize(stream);
      CUDA_CHECK(copy);
      CUDA_CHECK(rec);
      CUDA_CHECK(done);
      if (info) *info = local;
      return Status::Ok();
    }
    local.used = Transfer::Pageable;
  }
  void* base = dst;
  const size_t span = dpitch * (rows - 1) + width;
  if (local.used == Transfer::Register)
    CUDA_CHECK(cudaHostRegister(base, span, cudaHostRegisterDefault));
  const cudaError_t copy = cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows,
                                             cudaMemcpyDeviceToHost, stream);
  const cudaError_t done = cudaStreamSynchronize(stream);
  const cudaError_t unreg =
      local.used == Transfer::Register ? cudaHostUnregister(base) : cudaSuccess;
  CUDA_CHECK(copy);
  CUDA_CHECK(done);
  CUDA_CHECK(unreg);
  if (info) *info = local;
  return Status::Ok();
}

}  // namespace parvis::cuda
