// The subcommands of ./main. Each lives beside its operation (src/<op>/cli.cpp) and is
// shared by every version; it reaches the version only through the operation's entry points.
#pragma once
#include "common/status.hpp"

namespace parvis {

// argv[0] is the subcommand's name; options follow.
int cli_match(int argc, char** argv);
int cli_filter(int argc, char** argv);
int cli_blur(int argc, char** argv);
int cli_integral(int argc, char** argv);
int cli_video(int argc, char** argv);
int bench_match(int argc, char** argv);  // ./main bench match ...
int bench_blur(int argc, char** argv);   // ./main bench blur ...
// Seed 002's command form, ./main <number of blocks> <number of imgs> <save data> (argv[0] is
// the program): taken when the first argument is a number.
bool is_blur_seed_form(const char* first_argument);
int cli_blur_seed(int argc, char** argv);
int bench_filter(int argc, char** argv);  // ./main bench filter ...
int bench_video(int argc, char** argv);  // ./main bench video ...
int bench_integral(int argc, char** argv);  // ./main bench integral ...
// ./main bench upload: the host link (CUDA versions: cuda/upload/bench.cu; CPU versions say so).
int bench_upload(int argc, char** argv);
// ./main run-cases LIST (src/cli/run_cases.cpp): each line run by `run_command`, main's own
// runner of one command line.
int run_cases(int argc, char** argv, int (*run_command)(int argc, char** argv));

}  // namespace parvis
