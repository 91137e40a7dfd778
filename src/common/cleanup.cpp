// The signal handler's tables (cleanup.hpp). The handler may only make async-signal-safe calls
// (kill, waitpid, unlink, sigaction, sigprocmask, raise), so what it needs lives in fixed tables
// of atomics: a registered path is a heap string published by one atomic store, and removed from
// the table before it is freed.
#include "common/cleanup.hpp"

#include <atomic>
#include <csignal>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

namespace parvis {

namespace {

// Enough for the seed form's 4096 layers plus a run's other outputs.
constexpr int kFiles = 8192;
constexpr int kChildren = 16;
std::atomic<char*> g_files[kFiles];
std::atomic<pid_t> g_children[kChildren];

void on_signal(int sig) {
  for (auto& c : g_children) {
    const pid_t pid = c.load();
    if (pid > 0) {
      ::kill(pid, SIGKILL);  // first, so that it cannot write its file again after the unlink
      ::waitpid(pid, nullptr, 0);
    }
  }
  for (auto& f : g_files)
    if (const char* p = f.load()) ::unlink(p);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(sig);
}

}  // namespace

void install_cleanup_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask);  // one cleanup at a time
    ::sigaction(sig, &sa, nullptr);
  }
}

int cleanup_track_file(const std::string& path) {
  char* copy = new char[path.size() + 1];
  std::memcpy(copy, path.c_str(), path.size() + 1);
  for (int i = 0; i < kFiles; ++i) {
    char* expected = nullptr;
    if (g_files[i].compare_exchange_strong(expected, copy)) return i;
  }
  delete[] copy;
  return -1;
}

void cleanup_forget_file(int slot) {
  if (slot < 0 || slot >= kFiles) return;
  delete[] g_files[slot].exchange(nullptr);
}

void cleanup_track_child(pid_t pid) {
  for (auto& c : g_children) {
    pid_t expected = 0;
    if (c.compare_exchange_strong(expected, pid)) return;
  }
}

void cleanup_forget_child(pid_t pid) {
  for (auto& c : g_children) {
    pid_t expected = pid;
    if (c.compare_exchange_strong(expected, 0)) return;
  }
}

}  // namespace parvis
