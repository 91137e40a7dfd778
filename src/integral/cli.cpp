// ./main integral IN | --random WxH [--seed S] [--type auto|u32|u64|f64] [--squared]
//                 [--out X.npy] [--json] [--explain]
#include <cinttypes>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "cli/cli.hpp"
#include "common/npy.hpp"
#include "common/output.hpp"
#include "cli/subcommands.hpp"
#include "image_io.hpp"
#include "integral/integral.hpp"

namespace parvis {

namespace {

DType npy_dtype(integral::Type t) {
  return t == integral::Type::U32 ? DType::U32 : t == integral::Type::U64 ? DType::U64 : DType::F64;
}

// A line on stderr when the run passes one second ("... running"), then every 10 s, and the
// end; nothing for short runs, and nothing when stderr is not a terminal (a script reading it
// gets one error line or none, however long a CUDA context takes to start).
class Progress {
 public:
  explicit Progress(std::string what) : what_(std::move(what)), t0_(now_ms()) {
    if (!isatty(2)) return;
    thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      for (double wait = 1.0; !done_; wait = 10.0) {
        if (cv_.wait_for(lock, std::chrono::duration<double>(wait), [this] { return done_; })) break;
        std::fprintf(stderr, "parvis %s: %s running, %.0f s\n", kVersionName, what_.c_str(),
                     (now_ms() - t0_) / 1000);
        printed_ = true;
      }
    });
  }
  ~Progress() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (printed_)
      std::fprintf(stderr, "parvis %s: %s done, %.1f s\n", kVersionName, what_.c_str(),
                   (now_ms() - t0_) / 1000);
  }

 private:
  std::string what_;
  double t0_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false, printed_ = false;
  std::thread thread_;
};

}  // namespace

int cli_integral(int argc, char** argv) {
  std::string random_size, type_text = "auto", out_path;
  int seed = 1;
  bool squared = false, json = false, explain = false;
  ArgParser args(
      "usage: ./main integral IN | --random WxH [--seed S] [--type auto|u32|u64|f64] [--squared]\n"
      "                       [--out X.npy] [--json] [--explain]\n"
      "The inclusive integral image of IN (made grey) or of deterministic noise: element (y, x)\n"
      "is the sum of every pixel (y', x') with y' <= y and x' <= x. Prints the size, the type,\n"
      "the last element (= the sum of all pixels) and a checksum of all elements.");
  args.option("--random", &random_size, "WxH", "integrate noise of this size instead of a file");
  args.option("--seed", &seed, "S", "seed of the --random noise (default 1)");
  args.option("--type", &type_text, "T",
              "auto (u32 while W*H*255 < 2^32, else u64; u64 when --squared), u32, u64, f64");
  args.flag("--squared", &squared, "integrate px^2 (the squared integral)");
  args.option("--out", &out_path, "X.npy", "write the integral as a (H, W) .npy array");
  args.flag("--json", &json, "print the result as JSON");
  args.flag("--explain", &explain, "also say how the work was cut (the CUDA versions' kernel and bands)");
  args.max_pixels_option();
  std::vector<std::string> pos;
  if (int rc = args.parse_command(argc, argv, &pos); rc >= 0) return rc;
  Status s;
  if (pos.size() > 1 || pos.empty() == random_size.empty())
    return report_failure(Status::usage("integral needs one input: IN or --random WxH"));
  if (!out_path.empty() && file_extension(out_path) != "npy")
    return report_failure(Status::usage("--out writes .npy, not " + out_path));
  if (seed < 0) return report_failure(Status::usage("--seed must not be negative"));
  Outputs outputs;  // checked before any work, committed last
  if (!out_path.empty()) {
    s = outputs.declare(out_path);
    if (!s.ok()) return report_failure(s);
  }
  integral::Type requested;
  s = integral::parse_type(type_text, &requested);
  if (!s.ok()) return report_failure(s);

  // The size first, so that the type and the memory are checked before anything big is made.
  int width = 0, height = 0;
  Image input;
  if (!random_size.empty()) {
    s = parse_size(random_size, &width, &height);
    // The size limit before the memory: a size over it is refused whatever memory there is.
    if (s.ok()) s = check_image_size(width, height, 1);
    if (!s.ok() && s.code == kExitBadInput) s.message = "--random " + random_size + ": " + s.message;
    if (!s.ok()) return report_failure(s);
  } else {
    s = image_read(pos[0], &input);
    if (!s.ok()) return report_failure(s);
    width = input.width;
    height = input.height;
  }
  const integral::Type type = integral::resolve_type(requested, width, height, squared);
  s = integral::check_type(type, width, height, squared);
  if (!s.ok()) return report_failure(s);
  const uint64_t pixels = uint64_t(width) * uint64_t(height);
  if (!out_path.empty()) {
    // The result, a copy of it as .npy bytes, the noise or the grey input.
    const uint64_t bytes = pixels * integral::type_size(type) * 2 + pixels;
    s = integral::check_memory(bytes, "the integral image of " + std::to_string(width) + "x" +
                                          std::to_string(height) + " as " + integral::type_name(type));
    if (!s.ok()) return report_failure(s);
  }
  if (random_size.empty() && input.channels != 1) input = to_gray(input);
  integral::Source source;
  if (random_size.empty()) source.image = &input;
  source.width = width;
  source.height = height;
  source.seed = uint64_t(seed);

  integral::Result result;
  const double t0 = now_ms();
  {
    Progress progress("integral " + std::to_string(width) + "x" + std::to_string(height) + " " +
                      integral::type_name(type));
    s = integral::compute_source(source, type, squared, !out_path.empty(), &result);
  }
  const double total = now_ms() - t0;
  if (!s.ok()) return report_failure(s);

  if (!out_path.empty()) {
    const void* data = type == integral::Type::U32   ? static_cast<const void*>(result.u32.data())
                       : type == integral::Type::U64 ? static_cast<const void*>(result.u64.data())
                                                     : static_cast<const void*>(result.f64.data());
    std::vector<uint8_t> bytes;
    s = npy_encode(npy_dtype(type), data, {size_t(height), size_t(width)}, &bytes);
    if (s.ok()) s = outputs.put(out_path, bytes.data(), bytes.size());
    if (!s.ok()) return report_failure(s);
  }

  const uint64_t last = result.last, sum = result.sum;
  char sum_hex[17];
  std::snprintf(sum_hex, sizeof sum_hex, "%016" PRIx64, sum);
  const std::string explain_text =
      result.explain.empty() ? std::string(kVersionName) + ": on the host (no tuning)" : result.explain;
  if (json) {
    Json j;
    j.begin_object();
    j.key("operation").str("integral");
    j.key("width").num(width);
    j.key("height").num(height);
    j.key("type").str(integral::type_name(type));
    j.key("squared").boolean(squared);
    j.key("last").num(last);
    j.key("checksum").str(sum_hex);
    if (explain) j.key("explain").str(explain_text);
    j.end_object();
    std::printf("%s\n", j.text().c_str());
  } else {
    std::printf("integral%s %dx%d %s: last %" PRIu64 " (the sum of all pixels%s), checksum %s\n",
                squared ? " of squares" : "", width, height, integral::type_name(type), last,
                squared ? "^2" : "", sum_hex);
    if (explain) std::printf("explain: %s\n", explain_text.c_str());
  }
  s = outputs.commit();
  if (!s.ok()) return report_failure(s);
  print_timings("integral", total, result.timings);
  return kExitOk;
}

}  // namespace parvis
