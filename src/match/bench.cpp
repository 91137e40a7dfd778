// TEMPORARY placeholder until the match benchmark lands (issue 4).
#include "common/cli.hpp"
#include "common/subcommands.hpp"

namespace parvis {
int bench_match(int, char**) { return report_failure(Status::not_implemented("bench match")); }
}  // namespace parvis
