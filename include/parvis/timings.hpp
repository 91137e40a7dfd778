// Where the time of one run went (milliseconds): every version fills one, the command line
// prints it, the library returns it with a run's result.
#pragma once
#include <string>
#include <vector>

namespace parvis {

// CPU versions fill compute only; CUDA versions all three (CUDA events). Negative: not
// applicable.
struct Timings {
  double upload_ms = -1;
  double compute_ms = 0;
  double download_ms = -1;
  // The upload's bytes and how they went (cuda/upload/upload.hpp), when a version says: the
  // timing line adds GB/s.
  double upload_bytes = 0;
  std::string upload_how;
  // The source's grey made on the host for this run (ms), when the caller made it; -1: not here
  // (a grey source, a grey made earlier in the batch, or made on the device: see upload_how).
  double gray_host_ms = -1;
  // Per-stage GPU times, filled only when the bench asks (match::Params::stage_times): `group`
  // is a row of seed 000's stage table ("integral of the source", "cross-correlation", ...),
  // `name` the kernel or call inside it.
  struct Stage {
    std::string group, name;
    double ms = 0;
  };
  std::vector<Stage> stages;
};

}  // namespace parvis
