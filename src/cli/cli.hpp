// A tiny, uniform command-line parser shared by every subcommand, and the helpers
// every subcommand needs to report: results on stdout (a line, or JSON), timings on
// stderr, one error line and an exit code on failure.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/parse.hpp"
#include "common/status.hpp"
#include "common/timing.hpp"

namespace parvis {

class ArgParser {
 public:
  // `usage` is the synopsis line(s) printed by --help, before the option list.
  explicit ArgParser(std::string usage) : usage_(std::move(usage)) {}

  void flag(const std::string& name, bool* out, const std::string& help);
  void option(const std::string& name, std::string* out, const std::string& meta,
              const std::string& help);
  void option(const std::string& name, int* out, const std::string& meta, const std::string& help);
  void option(const std::string& name, double* out, const std::string& meta,
              const std::string& help);
  // --max-pixels N, for every command that reads images or video: sets max_input_pixels()
  // (common/image.hpp), N in 1..2^31.
  void max_pixels_option();
  // An option that may be given several times.
  void repeated(const std::string& name, std::vector<std::string>* out, const std::string& meta,
                const std::string& help);

  // Parses argv[first..argc). Positional arguments go to `positional`. Returns a usage
  // error for unknown options or bad values. Sets help_requested() on -h/--help.
  Status parse(int argc, char** argv, int first, std::vector<std::string>* positional);
  bool help_requested() const { return help_; }
  // What every subcommand does first: parse; on --help print the help and return 0; on a
  // usage error report it and return its exit code; otherwise return -1 (go on). Use as
  //   if (int rc = args.parse_command(argc, argv, &pos); rc >= 0) return rc;
  int parse_command(int argc, char** argv, std::vector<std::string>* positional);
  std::string help_text() const;

 private:
  struct Opt {
    std::string name, meta, help;
    bool takes_value;
    std::function<Status(const std::string&)> set;
  };
  std::string usage_;
  std::vector<Opt> opts_;
  bool help_ = false;
};

// Prints "parvis <version>: <message>" on stderr and returns the status's exit code.
int report_failure(const Status& s);

// Prints "time: total T ms [upload U, compute C, download D]" on stderr.
void print_timings(const char* what, double total_ms, const Timings& t);

// Minimal JSON object writer for --json results (one object, flat or nested).
class Json {
 public:
  Json& key(const std::string& k);
  Json& str(const std::string& v);
  Json& num(double v);
  Json& num(int64_t v);
  Json& num(uint64_t v);
  Json& num(int v) { return num(int64_t(v)); }
  Json& boolean(bool v);
  Json& begin_object();
  Json& end_object();
  Json& begin_array();
  Json& end_array();
  const std::string& text() const { return out_; }

 private:
  void sep();
  void quote(const std::string& v);
  std::string out_;
  std::vector<bool> first_{true};
  bool after_key_ = false;
};

}  // namespace parvis
