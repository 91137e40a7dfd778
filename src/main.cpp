// parvis: the one command-line driver, shared by every version. It only dispatches;
// each subcommand lives beside its operation (src/<op>/cli.cpp). `run-cases` runs many
// command lines in this one process, as the test runner's batches (tests/README.md).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "common/cleanup.hpp"
#include "cli/cli.hpp"
#include "common/config.hpp"
#include "cli/selftest.hpp"
#include "cli/subcommands.hpp"
#include "common/device.hpp"
#include "common/image.hpp"
#include "common/output.hpp"

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

int run_cases(int argc, char** argv);

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
  if (cmd == "run-cases") return run_cases(argc, argv);
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

// ---------------------------------------------------------------------------- run-cases
// Each line of LIST: a folder, then the command's arguments (argv[1] on), TAB-separated. Each
// runs as main would run it, with stdin from /dev/null and stdout, stderr into DIR/stdout and
// DIR/stderr; DIR/rc gets "<exit status> <milliseconds>" once it has ended, and the real
// stdout one line "<exit status> <milliseconds> DIR". What one command may change for the
// rest of a process is put back before the next: the three descriptors and their stdio error
// flags, --max-pixels, the signal handlers (video ignores SIGPIPE). Everything else a command
// keeps is a cache that gives the next one the same answer (FFTW's wisdom, cuFFT sizes, the
// CUDA context and constant tables).

// A line's own error (its folder cannot be written): said on the real stderr; the batch goes on.
int line_error(const std::string& dir, const std::string& what) {
  std::fprintf(stderr, "parvis %s: run-cases: %s: %s\n", kVersionName, dir.c_str(), what.c_str());
  return 1;
}

bool in_batch = false;

// One line; returns 1 when it could not be run at all (its folder), else 0.
int run_line(const std::vector<std::string>& fields, const char* program, const int saved[3],
             int timeout_s) {
  const std::string& dir = fields[0];
  const double t0 = now_ms();
  const std::string rc_path = dir + "/rc";
  ::unlink(rc_path.c_str());  // only a finished case has one (the runner looks for it)
  const int fds[3] = {::open("/dev/null", O_RDONLY | O_CLOEXEC),
                      ::open((dir + "/stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666),
                      ::open((dir + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)};
  if (fds[0] < 0 || fds[1] < 0 || fds[2] < 0) {
    const std::string why = std::strerror(errno);
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
    return line_error(dir, "cannot open its stdout or stderr: " + why);
  }
  std::vector<std::string> words(fields.begin() + 1, fields.end());
  std::vector<char*> argv{const_cast<char*>(program)};
  for (std::string& w : words) argv.push_back(&w[0]);
  argv.push_back(nullptr);
  const int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
  struct sigaction handlers[4];
  for (int i = 0; i < 4; ++i) ::sigaction(kSignals[i], nullptr, &handlers[i]);

  std::fflush(stdout);
  std::fflush(stderr);
  for (int fd = 0; fd < 3; ++fd) {
    ::dup2(fds[fd], fd);
    ::close(fds[fd]);
  }
  std::clearerr(stdin);
  std::clearerr(stdout);
  std::clearerr(stderr);
  set_max_input_pixels(kDefaultMaxInputPixels);
  if (timeout_s > 0) ::alarm(unsigned(timeout_s));  // SIGALRM's default action ends the batch
  const int rc = run_command(int(argv.size()) - 1, argv.data());
  ::alarm(0);
  std::fflush(stdout);
  std::fflush(stderr);
  for (int fd = 0; fd < 3; ++fd) {
    if (saved[fd] >= 0) ::dup2(saved[fd], fd);
    else ::close(fd);
  }
  std::clearerr(stdin);
  std::clearerr(stdout);
  std::clearerr(stderr);
  for (int i = 0; i < 4; ++i) ::sigaction(kSignals[i], &handlers[i], nullptr);

  const long ms = long(now_ms() - t0);
  const std::string rc_text = std::to_string(rc) + " " + std::to_string(ms) + "\n";
  const int fd = ::open(rc_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  Status s = fd < 0 ? Status::runtime(std::strerror(errno)) : write_fd(fd, rc_text.data(), rc_text.size(), rc_path);
  if (fd >= 0 && ::close(fd) != 0 && s.ok()) s = Status::runtime(std::strerror(errno));
  if (!s.ok()) return line_error(dir, "cannot write its rc: " + s.message);
  std::printf("%d %ld %s\n", rc, ms, dir.c_str());
  std::fflush(stdout);
  return 0;
}

int run_cases(int argc, char** argv) {  // argv[1] = "run-cases"
  int timeout_s = 0;
  ArgParser args(
      "usage: ./main run-cases LIST|- [--timeout S]\n"
      "  Runs many command lines of this version in this one process (the test runner's batches:\n"
      "  one CUDA context for all of them). LIST (- for stdin) has one per line: a folder, then\n"
      "  the arguments of ./main, TAB-separated. Each runs exactly as ./main would, with stdin\n"
      "  from /dev/null and stdout, stderr into FOLDER/stdout and FOLDER/stderr; FOLDER/rc gets\n"
      "  its exit status and milliseconds, and stdout one line \"STATUS MS FOLDER\" per line.\n"
      "  Exit 0 when every line ran (whatever their exit statuses), 2 when a folder could not be\n"
      "  written.");
  args.option("--timeout", &timeout_s, "S", "end the whole process (SIGALRM) when one line runs longer than S seconds");
  std::vector<std::string> pos;
  if (int rc = args.parse_command(argc - 1, argv + 1, &pos); rc >= 0) return rc;
  if (pos.size() != 1) return report_failure(Status::usage("run-cases takes one LIST (a file, or - for stdin)"));
  if (timeout_s < 0) return report_failure(Status::usage("--timeout must be 0 (none) or more seconds"));
  if (in_batch) return report_failure(Status::usage("run-cases cannot run inside run-cases"));
  std::vector<uint8_t> bytes;
  if (Status s = read_file(pos[0], &bytes, size_t(1) << 30); !s.ok()) return report_failure(s);
  // The descriptors every line gets back (close-on-exec: not for ffmpeg); -1 where one was closed.
  int saved[3];
  for (int fd = 0; fd < 3; ++fd) saved[fd] = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  in_batch = true;
  int bad = 0;
  size_t start = 0;
  while (start < bytes.size()) {
    size_t end = start;
    while (end < bytes.size() && bytes[end] != '\n') ++end;
    const std::string line(bytes.begin() + long(start), bytes.begin() + long(end));
    start = end + 1;
    if (line.empty()) continue;
    std::vector<std::string> fields;
    size_t from = 0;
    for (size_t tab; (tab = line.find('\t', from)) != std::string::npos; from = tab + 1)
      fields.push_back(line.substr(from, tab - from));
    fields.push_back(line.substr(from));
    if (fields[0].empty()) {
      bad += line_error("(no folder)", "a line starts with a TAB");
      continue;
    }
    bad += run_line(fields, argv[0], saved, timeout_s);
  }
  in_batch = false;
  for (int fd : saved)
    if (fd >= 0) ::close(fd);
  return bad ? kExitBadInput : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  install_cleanup_handlers();
  return run_command(argc, argv);
}
