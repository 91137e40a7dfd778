// Child processes for ffmpeg (process.hpp): posix_spawn with the pipe and a stderr file.
#include "video/process.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.hpp"
#include "common/config.hpp"

extern char** environ;

namespace parvis::video {

std::string find_program(const std::string& program) {
  auto executable = [](const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) return executable(program) ? program : "";
  const char* path = config::system("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + program;
    if (executable(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

Status ffmpeg_missing(const std::string& program, const std::string& why, const std::string& instead) {
  return Status::bad_input(why + ", and ffmpeg was not found (" + program + "): install ffmpeg, or " +
                           instead);
}

Child::~Child() {
  if (pid_ > 0) kill();
  if (fd_ >= 0) ::close(fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
}

Status Child::start(const std::string& path, const std::vector<std::string>& args, Pipe pipe) {
  name_ = args.empty() ? path : args[0];
  int fds[2];
  if (::pipe(fds) != 0) return Status::runtime(std::string("pipe: ") + std::strerror(errno));
  // Our end must not leak into the child (it would keep its own stdin open forever).
  const int ours = pipe == Pipe::ReadStdout ? fds[0] : fds[1];
  const int theirs = pipe == Pipe::ReadStdout ? fds[1] : fds[0];
  ::fcntl(ours, F_SETFD, FD_CLOEXEC);
  char err_name[] = "/tmp/parvis-ffmpeg-XXXXXX";
  err_fd_ = ::mkstemp(err_name);
  if (err_fd_ >= 0) ::unlink(err_name);
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (pipe == Pipe::ReadStdout) {
    posix_spawn_file_actions_adddup2(&actions, null_fd, 0);
    posix_spawn_file_actions_adddup2(&actions, theirs, 1);
  } else {
    posix_spawn_file_actions_adddup2(&actions, theirs, 0);
    posix_spawn_file_actions_adddup2(&actions, null_fd, 1);
  }
  posix_spawn_file_actions_adddup2(&actions, err_fd_ >= 0 ? err_fd_ : null_fd, 2);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int rc = posix_spawn(&pid_, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(theirs);
  if (null_fd >= 0) ::close(null_fd);
  if (rc != 0) {
    pid_ = -1;
    ::close(ours);
    return Status::bad_input("cannot run " + path + ": " + std::strerror(rc));
  }
  fd_ = ours;
  cleanup_track_child(pid_);  // a signal stops it before its output is removed
  return Status::Ok();
}

Status Child::finish(const std::string& what) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (pid_ <= 0) return Status::Ok();
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  cleanup_forget_child(pid_);
  pid_ = -1;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  // The child's last non-empty stderr line says why.
  std::string last;
  if (err_fd_ >= 0) {
    std::string text;
    char buf[4096];
    ::lseek(err_fd_, 0, SEEK_SET);
    ssize_t r;
    while ((r = ::read(err_fd_, buf, sizeof buf)) > 0) text.append(buf, size_t(r));
    size_t end = text.find_last_not_of("\r\n ");
    if (end != std::string::npos) {
      const size_t start = text.find_last_of('\n', end);
      last = text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
    }
  }
  const std::string how = WIFEXITED(status) ? "exited " + std::to_string(WEXITSTATUS(status))
                                            : "was killed by signal " + std::to_string(WTERMSIG(status));
  return Status::bad_input(what + ": " + name_ + " " + how + (last.empty() ? "" : ": " + last));
}

void Child::kill() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  int status;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  cleanup_forget_child(pid_);
  pid_ = -1;
}

}  // namespace parvis::video
