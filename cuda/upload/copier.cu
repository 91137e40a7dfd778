// The staged copier (upload.hpp): its start and the ways of a copy in each direction. Its state
// and the steps a copy is made of: copier_impl.cuh; the one-pass upload: one_pass.cu.
#include "upload/copier_impl.cuh"

#include <algorithm>
#include <cstring>
#include <vector>

namespace parvis::cuda {

StagedCopier::StagedCopier() : impl_(new Impl) {}
StagedCopier::~StagedCopier() = default;

const UploadTuning& StagedCopier::tuning() const { return impl_->cfg; }

Status StagedCopier::init(const UploadTuning& c) {
  Impl& m = *impl_;
  if (c.threads < 1 || c.threads > 64 || c.chunk == 0 || c.piece == 0)
    return Status::usage("staged copy: 1..64 threads and pieces of at least 1 byte");
  if (m.ready && m.cfg.threads == c.threads) {
    m.cfg = c;  // pieces and thresholds change nothing allocated
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
    w.ev.assign(size_t(UploadTuning::kSlots), nullptr);
    for (cudaEvent_t& e : w.ev) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  if (m.pool.size() != c.threads) {
    const int dev = m.device;
    m.pool.start(c.threads - 1, [dev] { (void)cudaSetDevice(dev); });  // the run checks it again
  }
  m.ready = true;
  return Status::Ok();
}

Status StagedCopier::prepare(size_t width, size_t rows, size_t pitch, bool rgb_to_gray,
                             const uint8_t* next, size_t next_pitch) {
  Impl& m = *impl_;
  if (!m.ready) PARVIS_TRY(init(m.cfg));
  const size_t bytes = width * rows;
  if (m.staged()) {
    Impl::Staging st;
    PARVIS_TRY(m.reserve(width, rows, pitch, rgb_to_gray, true, &st));
    if (st.one_pass) {
      PARVIS_TRY(m.pull_reserve(st.p.count));
      PARVIS_TRY(m.pull_touch());
    }
    if (m.cfg.trace) PARVIS_TRY(m.trace_reserve(st.p.count));  // not inside the traced copy
    m.prepared_at = UploadTrace::Clock::now();  // before the warm-up's threads read it
    m.warm_up(st.one_pass ? 0 : st.n, rgb_to_gray, st.one_pass);  // one pass: no slots
    if (next && m.cfg.read_ahead) m.read_ahead(Impl::Rows{next, next_pitch, width, rows}, st.n);
  } else if (rgb_to_gray && m.scratch.size() < bytes) {
    CUDA_CHECK(cudaEventSynchronize(m.scratch_done));
    PARVIS_TRY(m.scratch.alloc(bytes));
  }
  return Status::Ok();
}

void StagedCopier::end_read_ahead() { impl_->pool.set_idle(nullptr); }

// One copy host -> device, `gray`: the rows are RGB (width = 3 W) and dst gets their grey.
Status StagedCopier::upload_rows(uint8_t* dst, size_t dpitch, const uint8_t* src, size_t spitch,
                                 size_t width, size_t rows, bool gray, cudaStream_t stream,
                                 TransferInfo* info) {
  Impl& m = *impl_;
  if (!m.ready) PARVIS_TRY(init(m.cfg));
  const Impl::EndReadAhead end_read_ahead(m.pool);
  const TransferInfo local = m.report(width * rows, info);
  if (width == 0 || rows == 0) return Status::Ok();
  if (m.staged()) {
    UploadTrace tr;
    tr.on = m.cfg.trace;
    if (tr.on) {
      PARVIS_TRY(m.trace_reserve(0));
      std::copy(m.trace_ev, m.trace_ev + 3, tr.gpu);
      tr.stream = stream;
      CUDA_CHECK(cudaEventRecord(tr.gpu[0], stream));
      tr.t0 = UploadTrace::Clock::now();
    }
    Impl::Staging st;
    PARVIS_TRY(m.begin(width, rows, dpitch, gray, true, stream, &st));
    const PiecePlan& p = st.p;
    const int n = st.n;
    const size_t padded = st.padded;
    if (tr.on) {
      tr.pieces.resize(p.count), tr.setup = tr.now();
      PARVIS_TRY(m.trace_reserve(p.count));
      std::memset(m.trace_pull.get(), 0, upload::kPullTimes * p.count * sizeof(unsigned long long));
      PARVIS_TRY(m.trace_pull.device_pointer(&tr.pull_times_dev));
    }
    std::vector<unsigned> next_slot(static_cast<size_t>(n), 0u);
    const Status s = st.one_pass ? m.upload_one_pass(st, dst, dpitch, src, spitch, width, gray, stream, tr)
                                 : m.run(n, p.count, [&](int wi, size_t i) -> Status {
      Worker& w = m.workers[size_t(wi)];
      const unsigned slot = next_slot[size_t(wi)];
      next_slot[size_t(wi)] = (slot + 1) % unsigned(UploadTuning::kSlots);
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
    CUDA_CHECK(cudaEventRecord(tr.gpu[2], stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (st.one_pass) tr.pull_times = m.trace_pull.get();
    tr.print(width * rows, n,
             std::chrono::duration<double, std::milli>(tr.t0 - m.prepared_at).count(), tr.now());
    if (const size_t r = m.read_ahead_passes.exchange(0))
      std::fprintf(stderr, "  source read ahead since prepare: %zu whole passes (all threads)\n", r);
    return Status::Ok();
  }
  // Pageable: the rows straight from the user's memory, into dst or (RGB) the scratch, made grey
  // there.
  uint8_t* target = dst;
  size_t tpitch = dpitch;
  if (gray) {
    PARVIS_TRY(m.ensure_scratch(width * rows, stream));
    target = m.scratch.get();
    tpitch = width;
  }
  CUDA_CHECK(cudaMemcpy2DAsync(target, tpitch, src, spitch, width, rows, cudaMemcpyHostToDevice, stream));
  if (gray) {
    PARVIS_TRY(launch_gray(target, tpitch, dst, dpitch, int(width / 3), int(rows), stream));
    CUDA_CHECK(cudaEventRecord(m.scratch_done, stream));
  }
  return Status::Ok();
}

Status StagedCopier::to_device(uint8_t* dst, size_t dpitch, const uint8_t* src, size_t spitch,
                               size_t width, size_t rows, cudaStream_t stream, TransferInfo* info) {
  return upload_rows(dst, dpitch, src, spitch, width, rows, false, stream, info);
}

Status StagedCopier::rgb_to_gray_device(uint8_t* dst, size_t dpitch, const uint8_t* rgb,
                                        size_t spitch, int W, int H, cudaStream_t stream,
                                        TransferInfo* info) {
  return upload_rows(dst, dpitch, rgb, spitch, 3 * size_t(W), size_t(H), true, stream, info);
}

Status StagedCopier::to_host(uint8_t* dst, size_t dpitch, const uint8_t* src, size_t spitch,
                             size_t width, size_t rows, cudaStream_t stream, TransferInfo* info) {
  Impl& m = *impl_;
  const Impl::EndReadAhead end_read_ahead(m.pool);
  if (!m.ready) PARVIS_TRY(init(m.cfg));
  const TransferInfo local = m.report(width * rows, info);
  if (width == 0 || rows == 0) return Status::Ok();
  if (m.staged()) {
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
    const size_t S = size_t(UploadTuning::kSlots);
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
  CUDA_CHECK(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return Status::Ok();
}

}  // namespace parvis::cuda
