// `./main run-cases LIST`: many command lines of this version in one process, the test runner's
// batches (tests/README.md): one CUDA context for all of them instead of one each.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "cli/subcommands.hpp"
#include "common/image.hpp"
#include "common/output.hpp"

namespace parvis {
namespace {

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
             int timeout_s, int (*run_command)(int, char**)) {
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
  if (Status s = write_file_atomic(rc_path, rc_text.data(), rc_text.size()); !s.ok())
    return line_error(dir, "cannot write its rc: " + s.message);
  std::printf("%d %ld %s\n", rc, ms, dir.c_str());
  std::fflush(stdout);
  return 0;
}

}  // namespace

int run_cases(int argc, char** argv, int (*run_command)(int, char**)) {  // argv[1] = "run-cases"
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
    bad += run_line(fields, argv[0], saved, timeout_s, run_command);
  }
  in_batch = false;
  for (int fd : saved)
    if (fd >= 0) ::close(fd);
  return bad ? kExitBadInput : kExitOk;
}

}  // namespace parvis
