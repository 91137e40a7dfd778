// The video pipeline (seed 000: per-frame matching with the template prepared once) has not
// landed in any version yet: the subcommand says so, exit 2, as DESIGN.md asks of a missing
// operation.
#include "common/cli.hpp"
#include "common/subcommands.hpp"

namespace parvis {
int cli_video(int, char**) { return report_failure(Status::not_implemented("video")); }
}  // namespace parvis
