// Linked into the host emulations of match code in tests/cuda/ (nvcc, no GPU; mask_emulate,
// mask_fft_emulate, normed_emulate): the version's name, and matcher_run — match.cpp's weak
// default of matcher_run_rgb calls it, each version defines it; an emulation runs kernel
// bodies only, so this one just refuses.
#include "match/match.hpp"

namespace parvis {
const char* const kVersionName = "emulate";
}

namespace parvis::match {

Status matcher_run(Matcher*, const Image&, Result*) {
  return Status::runtime("host emulation: no matcher");
}

}  // namespace parvis::match
