// The staged copier's state (private to copier.cu and one_pass.cu): its workers, pinned block,
// scratch and pool, and the steps a copy is made of.
#pragma once
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

#include "common.cuh"
#include "upload/kernels.cuh"
#include "upload/plan.hpp"
#include "upload/pool.hpp"
#include "upload/slot_writer.hpp"
#include "upload/trace.hpp"
#include "upload/upload.hpp"

namespace parvis::cuda {

// ---- the workers (the thread pool: pool.hpp) ----------------------------------------------
namespace upload {

struct Worker {
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  std::vector<cudaEvent_t> ev;  // one per slot: its last DMA
  uint8_t* host = nullptr;      // its slots x slot_bytes in the copier's pinned block
  uint8_t* dev = nullptr;       // the same on the GPU (RGB pieces before their conversion)
};

}  // namespace upload

using upload::fill_piece;
using upload::fill_rows;
using upload::launch_gray;
using upload::SlotWriter;
using upload::unpack;
using upload::UploadTrace;
using upload::Worker;

struct StagedCopier::Impl {
  UploadTuning cfg = upload_tuning();
  bool ready = false;
  int device = 0;
  cudaEvent_t start = nullptr;
  cudaEvent_t block_done = nullptr;  // after the DMAs of the last staged upload
  bool block_recorded = false;       // block_done recorded since the last wait on it
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
  // An RGB upload's rows on the device before their conversion (pageable, one pass);
  // scratch_done: recorded after the last work that reads it.
  DeviceBuffer<uint8_t> scratch;
  cudaEvent_t scratch_done = nullptr;
  // The one-pass pull: a flag per piece in mapped pinned memory, the number of the last pull (a
  // piece is ready when its flag equals it; never 0, the flags' first value) and the block's
  // device address.
  PinnedBuffer<unsigned> pull_flags;
  unsigned* pull_flags_dev = nullptr;
  unsigned pull_seq = 0;
  const uint8_t* pull_block_of = nullptr;
  const uint8_t* pull_block_dev = nullptr;
  cudaEvent_t trace_ev[3] = {};  // upload.trace's GPU times (UploadTrace::gpu)
  PinnedBuffer<unsigned long long> trace_pull;  // and the pull's (UploadTrace::pull_times)

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
    block_recorded = false;
    if (scratch_done) {
      cudaEventSynchronize(scratch_done);
      cudaEventDestroy(scratch_done);
    }
    scratch_done = nullptr;
    for (cudaEvent_t& e : trace_ev) {
      if (e) cudaEventDestroy(e);
      e = nullptr;
    }
    ready = false;
  }

  // Whether copies go through the pinned memory (auto, staged) or straight from the user's rows.
  bool staged() const { return cfg.mode != Transfer::Pageable; }
  // A copy's report as it begins (its way and bytes), also in *info; a staged copy's end
  // completes it.
  TransferInfo report(size_t bytes, TransferInfo* info) const {
    TransferInfo t;
    t.used = staged() ? Transfer::Staged : Transfer::Pageable;
    t.bytes = bytes;
    if (info) *info = t;
    return t;
  }
  // The threads a copy of `bytes` takes: auto's small copies stay on the calling thread.
  int threads_for(size_t bytes) const {
    if (cfg.mode != Transfer::Auto) return cfg.threads;
    if (bytes < cfg.staged_min) return 1;  // first: upload.min may exceed kAllThreads
    return bytes >= UploadTuning::kAllThreads ? cfg.threads : std::min(cfg.threads, 4);
  }
  // Whole-row pieces go as padded rows (the device pitch, one 1-D DMA) where `pitch` is at most
  // 256 bytes wider than `width`; 0: tight rows, one 2-D DMA a piece.
  size_t padded_pitch(const PiecePlan& p, size_t pitch) const {
    return p.rows_per_piece && pitch >= p.width && pitch - p.width <= 256 ? pitch : 0;
  }
  static size_t slot_need(const PiecePlan& p, size_t padded) {
    return padded ? std::min(p.rows_per_piece, p.rows) * padded : p.piece_bytes;
  }

  // Until no earlier copy's DMAs or pull read the pinned block. No driver call where none was
  // recorded since the last wait: a process's first cudaEventSynchronize costs a few µs, paid
  // inside its first upload.
  Status wait_block() {
    if (!block_recorded) return Status::Ok();
    CUDA_CHECK(cudaEventSynchronize(block_done));
    block_recorded = false;
    return Status::Ok();
  }
  // The trace's events and the pull's times for `pieces` (UploadTuning::trace).
  Status trace_reserve(size_t pieces) {
    for (cudaEvent_t& e : trace_ev)
      if (!e) CUDA_CHECK(cudaEventCreate(&e));
    if (trace_pull.size() < upload::kPullTimes * pieces)
      PARVIS_TRY(trace_pull.alloc_mapped(upload::kPullTimes * pieces));
    return Status::Ok();
  }
  Status sync_workers() {
    for (Worker& w : workers) CUDA_CHECK(cudaStreamSynchronize(w.stream));
    return Status::Ok();
  }
  // Slots of at least `bytes` (host) and `dev_bytes` (device) for the first n workers: one
  // block each side, grown (never shrunk) when a copy needs larger slots or more workers.
  Status ensure_slots(int n, size_t bytes, size_t dev_bytes) {
    const size_t S = size_t(UploadTuning::kSlots);
    pool.wait();  // a warm-up may still read the slots
    if (slot_bytes < bytes || slot_workers < n) {
      PARVIS_TRY(sync_workers());  // no DMA may still use the old slots
      PARVIS_TRY(wait_block());  // nor a one-pass upload's, on its stream
      const size_t b = std::max(bytes, slot_bytes);
      const int k = std::max(n, slot_workers);
      slot_bytes = 0;  // alloc frees the old block first: no slots left if it fails
      slot_workers = 0;
      PARVIS_TRY(host_block.alloc(size_t(k) * S * b));  // nothing where the block holds that
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
    PARVIS_TRY(wait_block());
    slot_bytes = 0;
    slot_workers = 0;
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
    bool one_pass = false;  // the whole image in the pinned block at once, pulled (upload_one_pass)
    static constexpr size_t kClaim = size_t(256) << 10;  // one pass: a worker's claim, at most
  };
  // One pass: an upload of whole-row pieces the GPU can pull (rows of one pitch on both sides:
  // padded, or RGB rows into the scratch) whose rows fit in the pinned bytes the slots may take;
  // its pieces are smaller (the pull starts sooner; a piece costs no CUDA call).
  size_t one_pass_limit(int threads) const {
    return cfg.pinned ? cfg.pinned : size_t(threads) * size_t(UploadTuning::kSlots) * cfg.chunk;
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
    st->one_pass = upload && st->p.rows_per_piece && (st->padded || gray) &&
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
    // The slots share the block: a one-pass upload's pull may still read it.
    if (upload) PARVIS_TRY(wait_block());
    return fork(st->n, stream);
  }
  // Its end: `stream` after the workers' copies (also after a failure: it waits for what ran),
  // then the pieces' status and the report.
  Status end(const Staging& st, cudaStream_t stream, const Status& pieces, TransferInfo local,
             TransferInfo* info) {
    if (!st.one_pass) PARVIS_TRY(join(st.n, stream));
    CUDA_CHECK(cudaEventRecord(block_done, stream));  // the next one-pass upload waits for it
    block_recorded = true;
    PARVIS_TRY(pieces);
    local.threads = st.n;
    local.piece = st.p.piece_bytes;
    local.padded = st.padded != 0;
    local.one_pass = st.one_pass;
    local.pinned = st.one_pass ? host_block.size() : size_t(slot_workers) * size_t(UploadTuning::kSlots) * slot_bytes;
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

  // Host rows, as a copy takes them.
  struct Rows {
    const uint8_t* p = nullptr;
    size_t pitch = 0, width = 0, rows = 0;
  };
  // The rows the next copy will take (prepare's `next`), kept in the caches of the pool's
  // threads 1..readers-1 (the copy's workers) while they spin for the copy: each reads its rows
  // (a byte of each 64) a few at a time between its looks for a job (Pool::set_idle), so that
  // the copy finds them in a cache. A process's first copy reads the user's rows from memory (or
  // another core's cache, dirty) at well under half the rate it reaches from the thread's own
  // cache (bench/experiments/first_copy.cu, docs/decisions/011). Each thread reads all the rows
  // where they hold at most UploadTuning::read_ahead bytes, else a slice of them each. Read
  // once, they leave the caches within milliseconds while the caller goes on with its set-up (a
  // match call uploads tens of ms after prepare), so each thread reads its rows again a few
  // hundred µs after each pass (only the lines that left are fetched again), until the copy
  // begins or UploadTuning::hot_ms has passed since prepare.
  struct alignas(64) ReadCursor {  // one thread's, on its own line
    size_t first = 0, last = 0, row = 0;  // its rows [first, last) and the next to read
    UploadTrace::Clock::time_point rest_until{};
    uint8_t sink = 0;  // what was read, so that the reads are kept
  };
  std::atomic<size_t> read_ahead_passes{0};  // for the trace: whole passes since prepare
  void read_ahead(const Rows& r, int readers) {
    using Clock = UploadTrace::Clock;
    const bool all = r.width * r.rows <= cfg.read_ahead;
    if (readers < 2 || (!all && r.width * r.rows > cfg.read_ahead * size_t(readers - 1))) return;
    auto cursors = std::make_shared<std::vector<ReadCursor>>(size_t(readers));
    const size_t k = size_t(readers - 1);  // slices: thread t reads slice t - 1
    for (size_t t = 1; t < size_t(readers); ++t) {
      ReadCursor& c = (*cursors)[t];
      c.first = c.row = all ? 0 : (t - 1) * r.rows / k;
      c.last = all ? r.rows : t * r.rows / k;
    }
    const Clock::time_point until = prepared_at + std::chrono::milliseconds(cfg.hot_ms);
    pool.set_idle(std::make_unique<const upload::Pool::IdleStep>([this, r, readers, cursors,
                                                                  until](int thread) {
      if (thread < 1 || thread >= readers) return;
      ReadCursor& c = (*cursors)[size_t(thread)];
      const Clock::time_point now = Clock::now();
      if (now >= until || (c.row == c.first && now < c.rest_until)) return;
      const size_t end = std::min(c.last, c.row + 4);  // a few KiB: the step ends within µs
      for (; c.row < end; ++c.row) {
        const uint8_t* row = r.p + c.row * r.pitch;
        for (size_t x = 0; x < r.width; x += 64) c.sink ^= row[x];
        c.sink ^= row[r.width - 1];  // the row's last line, where it starts past the last read
      }
      if (c.row == c.last) {
        c.row = c.first;
        c.rest_until = Clock::now() + std::chrono::microseconds(200);
        read_ahead_passes.fetch_add(1, std::memory_order_relaxed);
      }
    }));
  }

  // A copy's: the reading stops as it begins (its workers take part at once) and has ended
  // when it returns (the caller may then free the rows).
  struct EndReadAhead {
    upload::Pool& pool;
    explicit EndReadAhead(upload::Pool& p) : pool(p) { pool.stop_idle(); }
    ~EndReadAhead() { pool.set_idle(nullptr); }
  };

  // In the background on the pool's threads, after prepare: the first use of the first n workers'
  // streams and slots (pool thread i takes worker i, thread 1 also worker 0: one small DMA from
  // each slot, its event recorded) and the kernels the copy will launch loaded (lazy loading:
  // else at their first launch): a thread's first DMA issue is slow, and would be paid inside
  // the first copy (upload.trace shows it). Then the threads stay awake up to
  // UploadTuning::hot_ms for the copy (a match call prepares its copier milliseconds before its
  // upload, and a thread woken from sleep starts its piece late; docs/decisions/007). The
  // copier's next call waits for the job (Pool::run, ensure_slots); a failure here is left to
  // that call, which makes the same CUDA calls, checked.
  void warm_up(int n, bool gray, bool pull) {
    pool.wait();
    if (pool.size() < 2) return;
    const size_t S = size_t(UploadTuning::kSlots), probe = std::min<size_t>(slot_bytes, 4096);
    if (n > 0 && slot_bytes && warm_sink.size() < size_t(n) * S * probe &&
        !warm_sink.alloc(size_t(n) * S * probe).ok()) {
      (void)cudaGetLastError();
      n = 0;
    }
    if (!slot_bytes) n = 0;
    const int dev = device;
    pool.post(pool.size(), [this, n, S, probe, gray, pull, dev](int thread) {
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
        upload::load_kernels(gray, pull);
      }
      if (thread < n) warm_worker(thread);
    }, cfg.hot_ms * 1000u);
  }

  // The pull's flags for `count` pieces and the block's mapping (prepare makes them); and the
  // same with the next pull's number (one_pass.cu).
  Status pull_reserve(size_t count);
  Status pull_touch();  // on worker 0's stream (prepare)
  Status pull_setup(size_t count, unsigned* seq);
  // A one-pass upload (one_pass.cu).
  Status upload_one_pass(const Staging& st, uint8_t* dst, size_t dpitch, const uint8_t* src,
                         size_t spitch, size_t width, bool gray, cudaStream_t stream,
                         UploadTrace& tr);

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

}  // namespace parvis::cuda
