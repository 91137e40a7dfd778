// cuda-opt template matching: a batch's source shared by its templates' matchers
// (./main match SOURCE T1 T2 ..., Params::source_cache; docs/DESIGN.md "Template matching:
// batches"). Two things are kept on the device for the batch, each made by the first matcher
// that needs it and then only read:
//   - the source's upload (opt.cu upload_shared): the grey source, copied on the device into
//     every matcher's own source buffer;
//   - the source's transform (opt_source.cu bind_source_transform), one slot per kind:
//       cuFFT, 32-bit integral words  the D2Z spectrum and the integral image (opt_fft.cu)
//       cuFFT, 64-bit integral words  the same with 64-bit words (templates with w h 255^2 >= 2^32)
//       NTT                           the row transforms N2 (opt_ntt.cu)
//     keyed by the padded size: a matcher whose kind or padded size differs never reads a slot
//     made for another; it makes its own slot (or recomputes, as a single call does, where the
//     slot does not fit on the device).
// Included by the files of the cuda-opt version only.
#pragma once
#include "match/opt_matcher.cuh"

namespace parvis::match::opt {

enum SourceTransformKind { kFft32 = 0, kFft64 = 1, kNttRows = 2, kSourceTransformKinds = 3 };

// One transform of the source kept for the batch: its key, its buffers, and the event (on the
// maker's stream, after the transform) that readers' streams wait for.
struct SourceTransform {
  int P = 0, Q = 0;
  bool ready = false;  // made (its maker's kernels enqueued before `done`): readers may use it
  cudaEvent_t done = nullptr;
  DeviceBuffer<double2> spec;   // cuFFT: the source's D2Z spectrum, (P/2 + 1) x Q
  DeviceBuffer<uint64_t> ii;    // cuFFT: the integral image, ld x H words of 32 or 64 bits
  DeviceBuffer<uint32_t> rows;  // NTT: the row transforms, P x H words
  ~SourceTransform() {
    if (done) cudaEventDestroy(done);
  }
};

// A batch's source on the device: uploaded (and made grey) once, by the first template's
// matcher, into a buffer kept for the batch (rows of the matcher's pitch, bytes past W zero);
// identified by the host image it came from. Its transforms hang on it: a state of another
// source (cache->state replaced) takes them along.
struct SharedSource : SourceCache::State {
  const uint8_t* pixels = nullptr;
  int W = 0, H = 0, channels = 0;
  size_t stride = 0, pitch = 0;
  DeviceBuffer<uint8_t> d;
  cudaEvent_t ready = nullptr;  // recorded after the upload, on the uploading matcher's stream
  SourceTransform transforms[kSourceTransformKinds];
  ~SharedSource() {
    if (ready) cudaEventDestroy(ready);
  }
  bool same(const Image& host, int w, int h, size_t p) const {
    return ready && pixels == host.data() && W == w && H == h &&
           channels == host.channels && stride == host.stride && pitch == p;
  }
};

// What a maker's slot holds, in elements (0: that buffer is not used by the kind).
struct SourceTransformSizes {
  size_t spec = 0, ii = 0, rows = 0;
};

// Just after this run's upload (upload_source), before an enqueue of the pipeline (never during
// a graph capture: it may allocate): sets m.src_bind for `kind` at padded size P x Q:
//   Read  the batch's slot is made for this key: this matcher's stream waits for its event;
//   Make  no slot of this key yet (or another padded size): the slot, (re)allocated, is this
//         run's to write; source_transform_made() then publishes it;
//   Own   no batch, or no device memory for the slot: the matcher's own buffers, as a single call.
// The first binding of a run counts it as made or reused (SourceCache::transform, --explain);
// m.src_bind.counted is reset at the start of each run.
Status bind_source_transform(Matcher& m, SourceTransformKind kind, int P, int Q,
                             const SourceTransformSizes& sizes);
// After an enqueue that made the slot (role Make): its event, recorded on m.stream, and the
// slot readable from then on (the maker's own later enqueues read it too).
Status source_transform_made(Matcher& m);
// Drops *exec when the graph was captured for another binding than m.src_bind (another role or
// other shared buffers), so that run_graph captures the shape this binding needs.
Status rebind_graph(Matcher& m, cudaGraphExec_t* exec, GraphBinding* captured);

}  // namespace parvis::match::opt
