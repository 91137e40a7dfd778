// Errors as values, stb style: every function of the library that can fail returns a Status; on failure
// it carries the exit code DESIGN.md assigns (1 usage, 2 bad input, 3 runtime/device)
// and one human-readable reason. Library code never prints and never exits.
#pragma once
#include <string>
#include <utility>

namespace parvis {

enum ExitCode : int { kExitOk = 0, kExitUsage = 1, kExitBadInput = 2, kExitRuntime = 3 };

struct Status {
  int code = kExitOk;
  std::string message;

  bool ok() const { return code == kExitOk; }

  static Status Ok() { return {}; }
  static Status usage(std::string m) { return {kExitUsage, std::move(m)}; }
  static Status bad_input(std::string m) { return {kExitBadInput, std::move(m)}; }
  static Status runtime(std::string m) { return {kExitRuntime, std::move(m)}; }
  // "<op> is not implemented in <version>", exit 2 (DESIGN.md: never served by another version).
  static Status not_implemented(const char* op);
};

// The name of the version this executable was linked as ("seq", "cuda-opt", ...).
extern const char* const kVersionName;

}  // namespace parvis

// Propagate a failed Status to the caller.
#define PARVIS_TRY(expr)                         \
  do {                                           \
    ::parvis::Status parvis_try_s_ = (expr);     \
    if (!parvis_try_s_.ok()) return parvis_try_s_; \
  } while (0)
