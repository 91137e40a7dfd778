// parvis: the one command-line driver, shared by every version. It only dispatches;
// each subcommand lives beside its operation (src/<op>/cli.cpp). `run-cases` runs many
// command lines in this one process, as the test runner's batches (tests/README.md).
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "common/cleanup.hpp"
#include "cli/cli.hpp"
#include "common/config.hpp"
#include "cli/selftest.hpp"
#include "cli/subcommands.hpp"
#include "common/device.hpp"

using namespace parvis;

namespace {

void print_help() {
  std::printf(
      "parvis (%s): classic parallel image kernels, every version bit-identical to seq\n"
      "\n"
      "usage:\n"
      "  ./main match SOURCE TEMPLATE [--metric ssd|sad|ncc|ccorr-normed] [--method auto|direct|fft]\n"
      "               [--out annotated.png] [--map scores.npy] [--top K] [--color blue] [--json]\n"
      "               [--all --max-score S | --all --min-score S] [--min-distance D] [--subpixel]\n"
      "  ./main filter IN OUT --kernel identity|sharpen|edge|gaussian|box|unsharp [--size 3|5]\n"
      "               | --kernel-file F [--border zero|replicate|reflect101] [--gray] [--json]\n"
      "  ./main blur IN... OUT... [--map MAP.png | --radial] [--sigma-max S]\n"
      "  ./main BLOCKS IMGS SAVE  seed 002's form: blur IMGS generated layers (see ./main 1 1 0 --help)\n"
      "  ./main integral IN | --random WxH [--type auto|u32|u64|f64] [--squared] [--out X.npy]\n"
      "  ./main video IN.y4m|VIDEO|- TEMPLATE [--color blue] [--out annotated.y4m] [--csv|--json]\n"
      "  ./main bench OP ...       benchmarks (./main bench --help)\n"
      "  ./main selftest          the seeds' worked examples on this version\n"
      "  ./main device            what this version computes on\n"
      "  ./main --version         the version name\n"
      "  ./main --config          the environment variables and PARVIS_TUNING keys it reads\n"
      "  ./main run-cases LIST    many command lines in one process, for the test runner\n"
      "\n"
      "Each subcommand has --help. Results go to stdout, timings to stderr.\n"
      "Exit codes: 0 ok, 1 usage, 2 bad input, 3 runtime or device error.\n",
      kVersionName);
}

// `./main bench <op> ...`: one entry per operation that has a benchmark (src/<op>/bench.cpp).
struct BenchEntry {
  const char* op;
  int (*run)(int argc, char** argv);
};
const BenchEntry kBenches[] = {
    {"match", bench_match},
    {"blur", bench_blur},
    {"filter", bench_filter},
    {"video", bench_video},
    {"integral", bench_integral},
    {"upload", bench_upload},
};

int run_bench(int argc, char** argv) {  // argv[0] = "bench"
  std::string names;
  for (const BenchEntry& b : kBenches) names += std::string(names.empty() ? "" : ", ") + b.op;
  if (argc >= 2) {
    for (const BenchEntry& b : kBenches)
      if (std::strcmp(argv[1], b.op) == 0) return b.run(argc - 1, argv + 1);
    if (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
      std::printf("usage: ./main bench OP [options]   OP: %s (see ./main bench OP --help)\n", names.c_str());
      return kExitOk;
    }
    return report_failure(Status::usage("bench: unknown operation '" + std::string(argv[1]) +
                                        "' (available: " + names + ")"));
  }
  return report_failure(Status::usage("bench: say which operation (available: " + names + ")"));
}

int run_selftest() {
  std::string dev;
  Status s = device_describe(&dev);
  if (!s.ok()) return report_failure(s);
  std::printf("selftest of %s on %s\n", kVersionName, dev.c_str());
  SelftestReport r;
  selftest_gray(r);
  selftest_match(r);
  selftest_color(r);
  selftest_filter(r);
  selftest_blur(r);
  selftest_integral(r);
  std::printf("%d passed, %d failed, %d skipped\n", r.passed, r.failed, r.skipped);
  return r.failed == 0 ? kExitOk : kExitRuntime;
}

int run_command(int argc, char** argv);

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    print_help();
    return kExitUsage;
  }
  const std::string cmd = argv[1];
  // The environment first: a bad PARVIS_TUNING key is a usage error whatever the command.
  if (Status s = config::check(); !s.ok()) return report_failure(s);
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    print_help();
    return kExitOk;
  }
  // The commands without options take no arguments at all.
  if ((cmd == "--version" || cmd == "version" || cmd == "selftest" || cmd == "device" || cmd == "--config") &&
      argc > 2)
    return report_failure(Status::usage(cmd + " takes no arguments, not '" + argv[2] + "'"));
  if (cmd == "--version" || cmd == "version") {
    std::printf("%s\n", kVersionName);
    return kExitOk;
  }
  if (cmd == "--config") {
    std::printf("%s", config::describe_keys().c_str());
    return kExitOk;
  }
  if (cmd == "match") return cli_match(argc - 1, argv + 1);
  if (cmd == "filter") return cli_filter(argc - 1, argv + 1);
  if (cmd == "blur") return cli_blur(argc - 1, argv + 1);
  if (cmd == "integral") return cli_integral(argc - 1, argv + 1);
  if (cmd == "video") return cli_video(argc - 1, argv + 1);
  if (cmd == "selftest") return run_selftest();
  if (cmd == "device") {
    std::string dev;
    Status s = device_describe(&dev);
    if (!s.ok()) return report_failure(s);
    std::printf("%s\n", dev.c_str());
    return kExitOk;
  }
  if (cmd == "bench") return run_bench(argc - 1, argv + 1);
  if (cmd == "run-cases") return run_cases(argc, argv, run_command);
  if (is_blur_seed_form(argv[1])) return cli_blur_seed(argc, argv);
  return report_failure(Status::usage("unknown command '" + cmd + "' (see ./main --help)"));
}

// What main runs for one command line, and run-cases for each of its lines.
// The last resort: library code reports failures as a Status, but an allocation deep in a
// container can still throw. Nothing escapes: one line and exit 3, never an abort.
// A run's last word on stdout: whatever was printed must have reached it (exit 3 otherwise);
// the commands with output files already checked it before committing them.
int run_command(int argc, char** argv) {
  try {
    int rc = dispatch(argc, argv);
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      if (rc == kExitOk) rc = report_failure(Status::runtime("cannot write to stdout"));
    }
    return rc;
  } catch (const std::bad_alloc&) {
    return report_failure(Status::runtime("out of memory"));
  } catch (const std::exception& e) {
    return report_failure(Status::runtime(std::string("unexpected error: ") + e.what()));
  } catch (...) {
    return report_failure(Status::runtime("unexpected error"));
  }
}

}  // namespace

int main(int argc, char** argv) {
  install_cleanup_handlers();
  return run_command(argc, argv);
}
