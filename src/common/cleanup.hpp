// What a signal must undo: the named temporaries of a run's outputs and the child processes
// (ffmpeg) writing them. main() installs the handler once; SIGINT, SIGTERM, SIGHUP and SIGPIPE
// then remove every registered temporary, stop every registered child, and end the process by
// the same signal with its default action (so the exit status is the signal's).
#pragma once
#include <string>
#include <sys/types.h>

namespace parvis {

// Installs the handler for the signals above (a signal the parent set to ignore stays ignored).
void install_cleanup_handlers();

// A named temporary file the handler unlinks. Returns a slot for cleanup_forget (-1 when the
// fixed table is full: the file is then left to the normal cleanup alone).
int cleanup_track_file(const std::string& path);
void cleanup_forget_file(int slot);

// A child process the handler kills (SIGKILL) and reaps before the files are removed.
void cleanup_track_child(pid_t pid);
void cleanup_forget_child(pid_t pid);

}  // namespace parvis
