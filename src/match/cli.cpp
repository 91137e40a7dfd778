// TEMPORARY placeholder until the match subcommand lands (issue 3): says so, exit 2.
#include "common/cli.hpp"
#include "common/subcommands.hpp"

namespace parvis {
int cli_match(int, char**) { return report_failure(Status::not_implemented("match")); }
}  // namespace parvis
