// A child process with one pipe (ffmpeg decoding into us, or encoding from us), its stderr kept
// in a temporary file so that its last line can explain a failure.
#pragma once
#include <string>
#include <sys/types.h>
#include <vector>

#include "common/status.hpp"

namespace parvis::video {

// `program` as given when it holds a '/', else the first executable of that name on PATH;
// empty when there is none.
std::string find_program(const std::string& program);

// The message when ffmpeg is needed and missing (exit 2): why it is needed, what to do instead.
Status ffmpeg_missing(const std::string& program, const std::string& why, const std::string& instead);

class Child {
 public:
  enum class Pipe { ReadStdout, WriteStdin };
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child();  // kills a child still running and reaps it

  // Starts `path` with `args` (args[0] is the program's name). Its stdin (WriteStdin) or
  // stdout (ReadStdout) is our pipe_fd(); the other one is /dev/null.
  Status start(const std::string& path, const std::vector<std::string>& args, Pipe pipe);
  int pipe_fd() const { return fd_; }
  // Closes our end of the pipe and waits for the child; a non-zero exit is a Status (exit 2)
  // carrying the last line the child wrote on stderr.
  Status finish(const std::string& what);
  // Stops the child now (SIGTERM), without caring how it ends.
  void kill();

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  int err_fd_ = -1;  // the child's stderr, an unlinked temporary file
  std::string name_;
};

}  // namespace parvis::video
