// `./main bench upload` on a CPU version: the host link is a CUDA version's (cuda/upload/bench.cu).
#include <string>

#include "cli/cli.hpp"
#include "cli/subcommands.hpp"

namespace parvis {

int bench_upload(int, char**) {
  return report_failure(Status::runtime(std::string("bench upload is not implemented in ") +
                                        kVersionName + " (CUDA versions only: the host link)"));
}

}  // namespace parvis
