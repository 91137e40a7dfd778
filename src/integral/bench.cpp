// ./main bench integral — times the integral image on seed 004's sizes, 10000^2 ... 60000^2 u8
// (--random noise, seed 1), u64 output by default. Shared by every version through
// integral::compute_source with keep = false: on a CUDA version the noise is made on the device
// and compute_ms is the integral's kernels alone between CUDA events (input already on the
// device, result left there, checksummed there); on a CPU version it is the integral alone, two
// ways: the output buffer reused from run to run (method u8-<type>) and a fresh one each run
// (u8-<type>/alloc: the OS's page faults and zeroing inside the timing); on a CUDA version also
// u8-<type>/loop: the band run 20 times back to back on buffers allocated once, the mean.
// A size whose memory does not fit this machine is skipped with a note on stderr.
//
// One line per size:  version workload method threads median_ms reps checksum path
// workload "integral:WxH", method "u8-<type>[-squared]", checksum the integral's (the same on
// every version: run_integral.sh checks it), path the instruction set or the GPU.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli/cli.hpp"
#include "common/config.hpp"
#include "cpu/simd.hpp"
#include "cli/subcommands.hpp"
#include "integral/integral.hpp"

namespace parvis {

namespace {

std::string bench_threads() {
  const std::string v = kVersionName;
  if (v.rfind("cuda", 0) == 0) return "gpu";
  if (v != "omp") return "1";
  if (const char* n = config::system("OMP_NUM_THREADS")) return n;
  return std::to_string(std::thread::hardware_concurrency());
}

std::string bench_path() {
  const std::string v = kVersionName;
  if (v.rfind("cuda", 0) == 0) return "gpu";
  if (v == "simd" || v == "omp") return simd::isa_name(simd::best_isa());
  return "plain";
}

}  // namespace

int bench_integral(int argc, char** argv) {
  std::string size_list = "10000 20000 30000 40000 50000 60000", type_text = "u64";
  bool squared = false;
  double seconds = 1.0;
  int max_reps = 10, seed = 1;
  ArgParser args(
      "usage: ./main bench integral [--size LIST] [--type u32|u64|f64] [--squared] [--seconds S]\n"
      "                             [--max-reps N] [--seed S]\n"
      "Times the integral image of --random noise (one warm-up, then at least 3 runs and --seconds,\n"
      "at most --max-reps; the median). One line per size:\n"
      "  version workload method threads median_ms reps checksum path\n"
      "Sizes: N (N x N) or WxH; default seed 004's 10000 20000 30000 40000 50000 60000.");
  args.option("--size", &size_list, "LIST", "sizes, N or WxH, comma or space separated");
  args.option("--type", &type_text, "T", "output type (default u64)");
  args.flag("--squared", &squared, "integrate px^2");
  args.option("--seconds", &seconds, "S", "time budget per size (default 1)");
  args.option("--max-reps", &max_reps, "N", "at most N timed runs (default 10)");
  args.option("--seed", &seed, "S", "seed of the noise (default 1)");
  std::vector<std::string> pos;
  if (int rc = args.parse_command(argc, argv, &pos); rc >= 0) return rc;
  if (!pos.empty()) return report_failure(Status::usage("bench integral takes no positional arguments"));
  if (max_reps < 1) return report_failure(Status::usage("--max-reps must be at least 1"));
  integral::Type requested;
  Status s = integral::parse_type(type_text, &requested);
  if (!s.ok() || requested == integral::Type::Auto)
    return report_failure(s.ok() ? Status::usage("bench integral needs a fixed --type") : s);

  std::replace(size_list.begin(), size_list.end(), ',', ' ');
  std::vector<std::pair<int, int>> sizes;
  size_t at = 0;
  while (at < size_list.size()) {
    const size_t end = std::min(size_list.find(' ', at), size_list.size());
    std::string w = size_list.substr(at, end - at);
    at = end + 1;
    if (w.empty()) continue;
    if (w.find_first_of("xX") == std::string::npos) w += "x" + w;
    int width, height;
    s = parse_size(w, &width, &height);
    if (!s.ok()) return report_failure(s);
    sizes.emplace_back(width, height);
  }
  const std::string threads = bench_threads();
  const bool gpu = threads == "gpu";
  int failures = 0;
  for (const auto& [w, h] : sizes) {
    s = integral::check_type(requested, w, h, squared);
    if (!s.ok()) return report_failure(s);
    integral::Source src;
    src.width = w;
    src.height = h;
    src.seed = uint64_t(seed);
    const std::string dims = std::to_string(w) + "x" + std::to_string(h);
    std::fprintf(stderr, "bench integral %s %s ...\n", kVersionName, dims.c_str());
    // One warm-up, then at least 3 runs and `seconds`, at most max_reps; the median of run().
    auto measure = [&](auto run, size_t* reps) {
      std::vector<double> times;
      const double t0 = now_ms();
      while (int(times.size()) < max_reps && (times.size() < 3 || now_ms() - t0 < seconds * 1000)) {
        double ms = 0;
        if (!run(&ms)) break;
        times.push_back(ms);
      }
      std::sort(times.begin(), times.end());
      const size_t n = times.size();
      *reps = n;
      return n == 0 ? 0.0 : n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
    };
    auto line = [&](const char* suffix, double median, size_t reps, uint64_t sum) {
      std::printf("%s integral:%s u8-%s%s%s %s %.4f %zu %016" PRIx64 " %s\n", kVersionName, dims.c_str(),
                  integral::type_name(requested), squared ? "-squared" : "", suffix, threads.c_str(), median,
                  reps, sum, bench_path().c_str());
    };
    integral::Result r;
    s = gpu ? integral::compute_source(src, requested, squared, false, &r)  // warm-up
            : integral::host_compute_source(src, requested, squared, false, &r);
    if (!s.ok()) {
      std::fprintf(stderr, "note: %s skipped on %s: %s\n", dims.c_str(), kVersionName, s.message.c_str());
      if (s.code != kExitBadInput) ++failures;
      continue;
    }
    const uint64_t checksum = r.sum;
    auto check = [&](uint64_t sum) {
      if (sum == checksum) return true;
      std::fprintf(stderr, "bench integral: %s: checksum changed between runs\n", dims.c_str());
      ++failures;
      return false;
    };
    size_t reps = 0;
    if (gpu) {  // noise made on the device, result left there: the kernels alone
      // "": one run on buffers allocated and filled for it; "/loop": the band run 20 times back
      // to back on buffers allocated once (the prepared object in a loop), the mean.
      for (const auto& [suffix, repeat] : {std::pair<const char*, int>{"", 1}, {"/loop", 20}}) {
        integral::Source run_src = src;
        run_src.repeat = repeat;
        const double median = measure([&](double* ms) {
          if (!integral::compute_source(run_src, requested, squared, false, &r).ok() || !check(r.sum)) return false;
          *ms = r.timings.compute_ms;
          return true;
        }, &reps);
        line(suffix, median, reps, checksum);
      }
    } else {
      // The input made once. u8-<type>: the output buffer reused from run to run (the kernel's
      // time, as a caller integrating many frames sees it); u8-<type>/alloc: a fresh output every
      // run (its pages faulted in and zeroed by the OS inside the timing, as a one-off call sees it).
      Image img;
      s = integral::random_image(w, h, uint64_t(seed), &img);
      if (!s.ok()) return report_failure(s);
      integral::Result out;
      double median = measure([&](double* ms) {
        if (!integral::compute(img, requested, squared, &out).ok()) return false;
        *ms = out.timings.compute_ms;
        return true;
      }, &reps);
      check(integral::checksum(out));
      line("", median, reps, checksum);
      // The floor measured in the same run: the same output bytes written by memset, the same
      // number of threads, the buffer reused (method "fill").
      {
        unsigned char* bytes = out.type == integral::Type::U32 ? reinterpret_cast<unsigned char*>(out.u32.data())
                               : out.type == integral::Type::U64 ? reinterpret_cast<unsigned char*>(out.u64.data())
                                                                 : reinterpret_cast<unsigned char*>(out.f64.data());
        const size_t total = size_t(w) * size_t(h) * integral::type_size(out.type);
        const int nt = std::max(1, threads == "1" ? 1 : std::atoi(threads.c_str()));
        const double fill = measure([&](double* ms) {
          const double t0 = now_ms();
          std::vector<std::thread> pool;
          for (int t = 0; t < nt; ++t)
            pool.emplace_back([=] { std::memset(bytes + total * t / nt, t + 1, total * (t + 1) / nt - total * t / nt); });
          for (std::thread& th : pool) th.join();
          *ms = now_ms() - t0;
          return true;
        }, &reps);
        std::printf("%s integral:%s fill %s %.4f %zu - memset\n", kVersionName, dims.c_str(), threads.c_str(), fill, reps);
      }
      out = integral::Result();
      median = measure([&](double* ms) {
        integral::Result fresh;
        if (!integral::compute(img, requested, squared, &fresh).ok()) return false;
        *ms = fresh.timings.compute_ms;
        return true;
      }, &reps);
      line("/alloc", median, reps, checksum);
    }
    std::fflush(stdout);
  }
  return failures ? kExitRuntime : kExitOk;
}

}  // namespace parvis
