// TEMPORARY placeholder until the integral subcommand lands (issue 3): says so, exit 2.
#include "common/cli.hpp"
#include "common/subcommands.hpp"

namespace parvis {
int cli_integral(int, char**) { return report_failure(Status::not_implemented("integral")); }
}  // namespace parvis
