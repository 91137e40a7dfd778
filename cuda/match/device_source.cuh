// cuda-opt's matcher on a source already on the device (defined in cuda/match/opt.cu): the video
// device pipeline (cuda/video/) converts each frame straight into the matcher's own source
// buffer, so no grey image crosses the host link.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "match/match.hpp"

namespace parvis::match {

// Sets the matcher up for W x H sources and says where one goes: *d_src, rows of *pitch bytes
// (pitch % 16 == 0, pitch >= W + 16; the bytes past W must stay 0), to be written on *stream,
// the stream the matcher runs on.
Status matcher_device_source(Matcher* m, int W, int H, uint8_t** d_src, size_t* pitch,
                             cudaStream_t* stream);
// matcher_run on what was written there (work queued on that stream before the call runs first).
Status matcher_run_device(Matcher* m, Result* out);

}  // namespace parvis::match
