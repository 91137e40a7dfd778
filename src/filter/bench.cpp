// ./main bench filter — times the convolution filter on seed 001's sweep: resolutions 480x270 to
// 7680x4320, every kernel of the bank at 3x3 and 5x5. Shared by every version: it uses only
// filter.hpp's prepared filter, so the same workloads run on seq, simd, omp and the CUDA versions
// (bench/run_filter.sh runs them all, adds OpenCV / CuPy / PyTorch and prints the tables).
//
// Inputs are made in-process, deterministically (a smooth colour field with texture and edges,
// see scene()), so every version filters the same bytes; --save-inputs writes them for the peers.
// Timing: the filter is prepared and the image uploaded once, one warm-up compute, then computes
// until 3 repetitions and --seconds have passed (at most --max-reps); the median is reported.
// A warm-up longer than 3 budgets (seq on 8K) is the one timing. On a CUDA version compute is the
// kernels alone between CUDA events, image already on the GPU and result left there; upload and
// download are timed on their own (pinned staging and the copies).
//
// Output, one line per measurement:
//   version workload method threads median_ms reps checksum path
// workload "filter:WxH-rgb|grey"; method "<kernel><size>-<border>" (e.g. gaussian5-zero);
// checksum: FNV-1a 64 of the output rows, so run_filter.sh can check that every version agrees.
// CPU versions add a "copy" line per resolution: the image copied into another (memcpy, rows split
// over the same threads), the memory floor measured in the same run.
// CUDA versions add "<method>/upload" and "<method>/download" (threads "gpu"), and the seed's
// threads-per-block sweep: "<method>/<variant>" with threads = the block size, for every variant
// (cuda-naive: nonvec and vec; cuda-opt: its paths) on the --sweep-kernels.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli.hpp"
#include "common/config.hpp"
#include "cli/subcommands.hpp"
#include "filter/filter.hpp"
#include "image_io.hpp"

namespace parvis {

namespace {

struct Resolution {
  int width, height;
};
const Resolution kResolutions[] = {{480, 270}, {960, 540}, {1920, 1080}, {3840, 2160}, {7680, 4320}};
const char* const kKernels[] = {"identity", "sharpen", "edge", "gaussian", "box", "unsharp"};

// A deterministic test picture: per channel a smooth field (two slanted gradients and a ring
// pattern at different scales), plus hashed texture of +-16 and, every 64 pixels, an edge band.
// Integer arithmetic only, so every machine makes the same bytes.
Image scene(int width, int height, int channels) {
  Image img;
  image_alloc(width, height, channels, &img);
  for (int y = 0; y < height; ++y) {
    uint8_t* row = img.row(y);
    for (int x = 0; x < width; ++x) {
      uint32_t h = uint32_t(x) * 0x9E3779B1u ^ uint32_t(y) * 0x85EBCA77u;
      h ^= h >> 15;
      h *= 0x2C1B3C6Du;
      h ^= h >> 12;
      for (int c = 0; c < channels; ++c) {
        const int gx = (x * (96 + 40 * c)) / (width > 1 ? width : 1);
        const int gy = (y * (128 - 30 * c)) / (height > 1 ? height : 1);
        const int dx = x - width / (2 + c), dy = y - height / 2;
        const int ring = ((dx * dx + dy * dy) >> (8 + c)) & 63;
        const int edge = ((x >> 6) + (y >> 6) + c) % 3 == 0 ? 40 : 0;
        const int noise = int((h >> (8 * c)) & 31) - 16;
        const int v = 20 + gx + gy + ring + edge + noise;
        row[size_t(x) * channels + c] = uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
      }
    }
  }
  return img;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

uint64_t checksum(const Image& img) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int y = 0; y < img.height; ++y) {
    const uint8_t* row = img.row(y);
    for (size_t i = 0; i < size_t(img.width) * img.channels; ++i) h = (h ^ row[i]) * 0x100000001b3ull;
  }
  return h;
}

bool is_gpu() {
  const std::string v = kVersionName;
  return v.rfind("cuda", 0) == 0;
}

std::string thread_field() {
  if (is_gpu()) return "gpu";
  if (std::string(kVersionName) != "omp") return "1";
  if (const char* n = config::system("OMP_NUM_THREADS")) return n;
  return std::to_string(std::thread::hardware_concurrency());
}

std::vector<std::string> words(std::string list) {
  std::replace(list.begin(), list.end(), ',', ' ');
  std::vector<std::string> out;
  std::string w;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] != ' ') {
      w += list[i];
    } else if (!w.empty()) {
      out.push_back(w);
      w.clear();
    }
  }
  return out;
}

struct Options {
  double seconds = 0.5;
  int max_reps = 25;
};

// Median compute time of a prepared, uploaded filter: one warm-up, then repeated computes.
Status time_compute(filter::Filter* f, const Options& o, double* median_ms, size_t* reps) {
  Timings t;
  const double w0 = now_ms();
  PARVIS_TRY(filter::filter_compute(f, &t));
  const double warm_ms = now_ms() - w0;
  std::vector<double> times;
  if (warm_ms > 3000.0 * o.seconds) {
    times.push_back(t.compute_ms);
  } else {
    const double start = now_ms();
    while (int(times.size()) < o.max_reps &&
           (times.size() < 3 || now_ms() - start < o.seconds * 1000.0)) {
      PARVIS_TRY(filter::filter_compute(f, &t));
      times.push_back(t.compute_ms);
    }
  }
  *median_ms = median_of(times);
  *reps = times.size();
  return Status::Ok();
}

// The floor of a CPU version in this run: the image copied into another one (rows split over
// `threads` threads, as omp splits the filter), median of repeated copies.
double copy_floor_ms(const Image& img, int threads, const Options& o, size_t* reps) {
  Image out;
  image_alloc(img.width, img.height, img.channels, &out);
  auto copy = [&] {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const int y0 = int(int64_t(img.height) * t / threads), y1 = int(int64_t(img.height) * (t + 1) / threads);
        if (y1 > y0)
          std::memcpy(out.row(y0), img.row(y0), size_t(y1 - y0) * out.stride);
      });
    for (std::thread& th : pool) th.join();
  };
  copy();
  std::vector<double> times;
  const double start = now_ms();
  while (int(times.size()) < o.max_reps && (times.size() < 3 || now_ms() - start < o.seconds * 1000.0)) {
    const double t0 = now_ms();
    copy();
    times.push_back(now_ms() - t0);
  }
  *reps = times.size();
  return median_of(times);
}

}  // namespace

int bench_filter(int argc, char** argv) {
  std::string res_list, kernel_list, size_list = "3 5", border_text = "zero", save_dir, variant;
  std::string sweep_list, sweep_kernels = "gaussian5 sharpen3";
  bool gray = false;
  Options o;
  ArgParser args(
      "usage: ./main bench filter [--res LIST] [--kernel LIST] [--size LIST] [--border B] [--gray]\n"
      "Times the convolution filter (prepared filter, image uploaded once, median of repeated\n"
      "computes after a warm-up) on seed 001's sweep. One line per measurement:\n"
      "  version workload method threads median_ms reps checksum path\n"
      "CUDA versions add <method>/upload and <method>/download, and the threads-per-block sweep\n"
      "<method>/<variant> (threads = block size) on --sweep-kernels.\n"
      "Resolutions: 480x270 960x540 1920x1080 3840x2160 7680x4320 (default: all).\n"
      "Kernels: identity sharpen edge gaussian box unsharp (default: all), sizes 3 and 5.");
  args.option("--res", &res_list, "LIST", "resolutions WxH to run (any size works), e.g. 1920x1080,7680x4320");
  args.option("--kernel", &kernel_list, "LIST", "kernels of the bank to run");
  args.option("--size", &size_list, "LIST", "kernel sizes (default \"3 5\")");
  args.option("--border", &border_text, "B", "zero (default), replicate, reflect101");
  args.flag("--gray", &gray, "grey images instead of RGB");
  args.option("--variant", &variant, "V",
              "the variant for the main rows (default: PARVIS_TUNING's filter.variant, else the version's)");
  args.option("--sweep", &sweep_list, "LIST",
              "CUDA: block sizes of the sweep (default 32 64 128 256 512 1024; \"none\" skips it)");
  args.option("--sweep-kernels", &sweep_kernels, "LIST",
              "CUDA: <kernel><size> the sweep runs on (default \"gaussian5 sharpen3\")");
  args.option("--seconds", &o.seconds, "S", "time budget per measurement (default 0.5)");
  args.option("--max-reps", &o.max_reps, "N", "at most N timed computes (default 25)");
  args.option("--save-inputs", &save_dir, "DIR",
              "also write each input as DIR/<W>x<H>.ppm|pgm (for bench/filter_peers.py)");
  std::vector<std::string> pos;
  if (int rc = args.parse_command(argc, argv, &pos); rc >= 0) return rc;
  if (!pos.empty()) return report_failure(Status::usage("bench filter takes no positional arguments"));
  if (o.max_reps < 1) return report_failure(Status::usage("--max-reps must be at least 1"));

  std::vector<Resolution> resolutions;
  for (const std::string& r : words(res_list)) {
    Resolution res{};
    Status s = parse_size(r, &res.width, &res.height);
    if (!s.ok()) return report_failure(s);
    resolutions.push_back(res);
  }
  if (resolutions.empty()) resolutions.assign(std::begin(kResolutions), std::end(kResolutions));
  std::vector<std::string> kernels = words(kernel_list);
  if (kernels.empty()) kernels.assign(std::begin(kKernels), std::end(kKernels));
  std::vector<int> sizes;
  for (const std::string& w : words(size_list)) sizes.push_back(std::atoi(w.c_str()));
  filter::Border border;
  Status s = filter::parse_border(border_text, &border);
  if (!s.ok()) return report_failure(s);
  for (const std::string& k : kernels)
    for (int size : sizes) {
      filter::Kernel kernel;
      s = filter::builtin_kernel(k, size, &kernel);
      if (!s.ok()) return report_failure(s);
    }
  const bool gpu = is_gpu();
  std::vector<int> sweep;
  if (gpu && sweep_list != "none") {
    for (const std::string& w : words(sweep_list.empty() ? "32 64 128 256 512 1024" : sweep_list))
      sweep.push_back(std::atoi(w.c_str()));
  }
  const std::vector<std::string> sweep_on = words(sweep_kernels);
  const std::vector<std::string> variants = filter::variant_names();
  const filter::FilterTuning base = filter::tuning_from_config();  // the sep_ fields apply to every row
  filter::FilterTuning tuning = base;
  if (!variant.empty()) {
    int index = 0;
    s = filter::find_variant(variant, &index);
    if (!s.ok()) return report_failure(s);
    tuning.variant = variant;
  }

  const std::string threads = thread_field();
  const int channels = gray ? 1 : 3;
  int failures = 0;
  for (const Resolution& res : resolutions) {
    const Image img = scene(res.width, res.height, channels);
    const std::string dims = std::to_string(res.width) + "x" + std::to_string(res.height);
    const std::string workload = "filter:" + dims + (gray ? "-grey" : "-rgb");
    if (!save_dir.empty()) {
      s = image_write(save_dir + "/" + dims + (gray ? ".pgm" : ".ppm"), img);
      if (!s.ok()) return report_failure(s);
    }
    if (!gpu) {  // the copy floor of this image, same threads, same run
      const int n = threads == "1" ? 1 : std::max(1, std::atoi(threads.c_str()));
      size_t reps = 0;
      const double ms = copy_floor_ms(img, n, o, &reps);
      std::printf("%s %s copy %s %.4f %zu - memcpy of the image (the floor)\n", kVersionName,
                  workload.c_str(), threads.c_str(), ms, reps);
      std::fflush(stdout);
    }
    for (const std::string& kname : kernels) {
      for (int size : sizes) {
        filter::Kernel kernel;
        filter::builtin_kernel(kname, size, &kernel);
        const std::string method = kname + std::to_string(size) + "-" + filter::border_name(border);
        auto fail = [&](const std::string& what, const Status& st) {
          ++failures;
          std::printf("%s %s %s %s n/a 0 - %s\n", kVersionName, workload.c_str(), what.c_str(),
                      threads.c_str(), st.message.c_str());
          std::fflush(stdout);
        };

        // The main row: the default (or --variant) configuration, with upload and download.
        filter::FilterPtr f;
        Timings up, down;
        double ms = 0;
        size_t reps = 0;
        Image out;
        s = filter::filter_create(kernel, border, img.width, img.height, img.channels, tuning, &f);
        if (s.ok()) s = filter::filter_upload(f.get(), img, &up);
        if (s.ok()) s = time_compute(f.get(), o, &ms, &reps);
        if (s.ok()) s = filter::filter_download(f.get(), &out, &down);
        if (!s.ok()) {
          fail(method, s);
          continue;
        }
        const std::string path = filter::filter_describe(f.get());
        std::printf("%s %s %s %s %.4f %zu %016llx %s\n", kVersionName, workload.c_str(),
                    method.c_str(), threads.c_str(), ms, reps,
                    (unsigned long long)checksum(out), path.c_str());
        if (gpu) {
          std::printf("%s %s %s/upload %s %.4f 1 - -\n", kVersionName, workload.c_str(),
                      method.c_str(), threads.c_str(), up.upload_ms);
          std::printf("%s %s %s/download %s %.4f 1 - -\n", kVersionName, workload.c_str(),
                      method.c_str(), threads.c_str(), down.download_ms);
        }
        std::fflush(stdout);

        // The seed's threads-per-block sweep, every variant (CUDA versions).
        const std::string kshort = kname + std::to_string(size);
        if (std::find(sweep_on.begin(), sweep_on.end(), kshort) == sweep_on.end()) continue;
        for (const std::string& v : variants)
          for (int block : sweep) {
            filter::FilterTuning t = base;
            t.variant = v;
            t.block_threads = block;
            const std::string what = method + "/" + v;
            filter::FilterPtr g;
            s = filter::filter_create(kernel, border, img.width, img.height, img.channels, t, &g);
            if (s.ok()) s = filter::filter_upload(g.get(), img, nullptr);
            if (s.ok()) s = time_compute(g.get(), o, &ms, &reps);
            Image check;
            if (s.ok()) s = filter::filter_download(g.get(), &check, nullptr);
            if (!s.ok()) {
              fail(what, s);
              continue;
            }
            std::printf("%s %s %s %d %.4f %zu %016llx %s\n", kVersionName, workload.c_str(),
                        what.c_str(), block, ms, reps, (unsigned long long)checksum(check),
                        filter::filter_describe(g.get()).c_str());
            std::fflush(stdout);
          }
      }
    }
  }
  return failures ? kExitRuntime : kExitOk;
}

}  // namespace parvis
