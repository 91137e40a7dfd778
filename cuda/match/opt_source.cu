// cuda-opt template matching: a batch's source transform, made once and shared by the batch's
// matchers (opt_source.cuh; docs/DESIGN.md "Template matching: batches").
#include "match/opt_source.cuh"

namespace parvis::match::opt {

namespace {

// The slot's buffers for `sizes` (those of size 0 freed); false, with no CUDA error left
// pending, where the device has no room for them.
bool alloc_slot(SourceTransform& t, const SourceTransformSizes& sizes) {
  const bool ok = t.spec.alloc(sizes.spec).ok() && t.ii.alloc(sizes.ii).ok() &&
                  t.rows.alloc(sizes.rows).ok();
  if (!ok) {
    (void)cudaGetLastError();  // an out-of-memory cudaMalloc: not sticky, cleared
    (void)t.spec.alloc(0), (void)t.ii.alloc(0), (void)t.rows.alloc(0);
  }
  return ok;
}

}  // namespace

Status bind_source_transform(Matcher& m, SourceTransformKind kind, int P, int Q,
                             const SourceTransformSizes& sizes) {
  SourceBinding& b = m.src_bind;
  b.role = SourceRole::Own;
  b.slot = nullptr;
  SourceCache* cache = m.asked.source_cache;
  // matcher_run_device: no upload, so no batch source to hang a transform on.
  if (!cache || m.source_on_device) return Status::Ok();
  // Just after upload_source: the state, if any, is this source's (upload_shared replaces a
  // state of another source); none where the upload's second copy did not fit.
  auto* shared = dynamic_cast<SharedSource*>(cache->state.get());
  if (!shared) return Status::Ok();
  SourceTransform& t = shared->transforms[kind];
  if (t.ready && t.P == P && t.Q == Q) {
    // Made by an earlier matcher (or this one's earlier enqueue): its kernels first.
    CUDA_CHECK(cudaStreamWaitEvent(m.stream, t.done, 0));
    b.role = SourceRole::Read;
    b.slot = &t;
    if (!b.counted) ++cache->transform.reused, b.counted = true;
    return Status::Ok();
  }
  // None of this key yet: this enqueue makes it. Another key's content is dropped (its last
  // reader has finished: runs are synchronous, each waits for its result).
  t.ready = false;
  if (!alloc_slot(t, sizes)) return Status::Ok();  // no room: as a single call
  if (!t.done) CUDA_CHECK(cudaEventCreateWithFlags(&t.done, cudaEventDisableTiming));
  t.P = P;
  t.Q = Q;
  b.role = SourceRole::Make;
  b.slot = &t;
  if (!b.counted) ++cache->transform.made, b.counted = true;
  return Status::Ok();
}

Status source_transform_made(Matcher& m) {
  SourceBinding& b = m.src_bind;
  if (b.role != SourceRole::Make) return Status::Ok();
  CUDA_CHECK(cudaEventRecord(b.slot->done, m.stream));
  b.slot->ready = true;
  return Status::Ok();
}

Status rebind_graph(Matcher& m, cudaGraphExec_t* exec, GraphBinding* captured) {
  const SourceBinding& b = m.src_bind;
  GraphBinding now;
  now.role = b.role;
  if (b.slot) {  // the buffers its nodes read (cuFFT: spectrum, integral image; NTT: rows)
    now.a = b.slot->spec.get() ? static_cast<const void*>(b.slot->spec.get()) : b.slot->rows.get();
    now.b = b.slot->ii.get();
  }
  if (*exec && !(now == *captured)) {
    CUDA_CHECK(cudaGraphExecDestroy(*exec));
    *exec = nullptr;
  }
  *captured = now;
  return Status::Ok();
}

}  // namespace parvis::match::opt
