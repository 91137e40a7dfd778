// ./main bench match — times template matching on seed 000's workloads and two more for the
// direct method. Shared by every version: it uses only match.hpp's entry points, so the
// same workloads run on seq, simd, omp and the CUDA versions (bench/run_match.sh runs them
// all and prints the table).
//
// Inputs are made in-process, deterministically: a "natural-looking" grey scene (value-noise
// octaves, like light and texture, plus discs and boxes, like objects) from a fixed PRNG.
// Each source is cut from the scene and each template from its source, so the best match
// is exact (score 0; ncc-direct / ccorr-normed-direct: 1) and every version must report the
// same one.
//
// Timing: the matcher is prepared once (as the video path does), one warm-up run (plans,
// buffers), then runs until 3 repetitions and ~1 s have passed (at most 25); the median is
// reported. A warm-up over 3 s (seq's direct sums on seed 000's sizes) is the one timing.
// Results: one line per workload × method on stdout:
//   version workload method threads median_ms reps best_x best_y best_score used_method
// CUDA versions add lines of the same shape whose method is "<method>/<part>" (x y score "-"):
// the medians of the CUDA-event times upload, compute, download of those runs, then seed 000's
// stage table from runs with Params::stage_times (integral of the source, integral of the
// template, cross-correlation, SSD) and the blue count on the matched rectangle
// (color::count_in_rect); the kernels inside each stage go to stderr.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli.hpp"
#include "common/config.hpp"
#include "common/splitmix.hpp"
#include "cli/subcommands.hpp"
#include "image_io.hpp"
#include "color/color.hpp"
#include "match/match_common.hpp"

namespace parvis {

namespace {

// splitmix64 (common/splitmix.hpp): the same numbers on every machine.
struct Rng : SplitMix64 {
  double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
};

// A grey scene: six octaves of smoothstep-interpolated value noise (cells of 256 down to 8
// pixels, amplitude ×0.55 per octave), then 80 discs and boxes blended over it.
Image synthetic_scene(int width, int height, uint64_t seed) {
  Rng rng{seed};
  std::vector<float> acc(size_t(width) * size_t(height), 0.0f);
  float amplitude = 1.0f, total = 0.0f;
  for (int octave = 0; octave < 6; ++octave) {
    const int cell = 256 >> octave;
    const int gw = width / cell + 2, gh = height / cell + 2;
    std::vector<float> grid(size_t(gw) * size_t(gh));
    for (float& g : grid) g = float(rng.uniform());
    for (int y = 0; y < height; ++y) {
      const float fy = float(y) / float(cell);
      const int iy = int(fy);
      float ty = fy - float(iy);
      ty = ty * ty * (3 - 2 * ty);
      const float* g0 = grid.data() + size_t(iy) * size_t(gw);
      const float* g1 = g0 + gw;
      for (int x = 0; x < width; ++x) {
        const float fx = float(x) / float(cell);
        const int ix = int(fx);
        float tx = fx - float(ix);
        tx = tx * tx * (3 - 2 * tx);
        const float top = g0[ix] + (g0[ix + 1] - g0[ix]) * tx;
        const float bottom = g1[ix] + (g1[ix + 1] - g1[ix]) * tx;
        acc[size_t(y) * size_t(width) + size_t(x)] += amplitude * (top + (bottom - top) * ty);
      }
    }
    total += amplitude;
    amplitude *= 0.55f;
  }
  Image img;
  img.width = width;
  img.height = height;
  img.channels = 1;
  img.stride = size_t(width);
  img.pixels.resize(size_t(width) * size_t(height));
  for (size_t i = 0; i < img.pixels.size(); ++i)
    img.pixels[i] = uint8_t(std::lround(255.0 * acc[i] / total));
  for (int s = 0; s < 80; ++s) {
    const int cx = int(rng.uniform() * width), cy = int(rng.uniform() * height);
    const int r = 4 + int(rng.uniform() * 60);
    const int value = int(rng.uniform() * 256);
    const bool disc = rng.next() & 1;
    for (int y = std::max(0, cy - r); y < std::min(height, cy + r); ++y)
      for (int x = std::max(0, cx - r); x < std::min(width, cx + r); ++x) {
        if (disc && (x - cx) * (x - cx) + (y - cy) * (y - cy) > r * r) continue;
        uint8_t& p = img.pixels[size_t(y) * size_t(width) + size_t(x)];
        p = uint8_t((p + 3 * value) / 4);
      }
  }
  return img;
}

struct Workload {
  const char* name;
  int src_w, src_h, tpl_w, tpl_h;
  const char* methods;  // which of kMethods run by default
};

// Seed 000's two cases (too large for a direct run on seq: 10^11 pixel comparisons), and
// two for the direct kernels: a mid-size template and a small one on a large frame.
const Workload kWorkloads[] = {
    {"1326x1025/479x432", 1326, 1025, 479, 432, "ssd-fft ssd-auto"},
    {"1200x1983/150x150", 1200, 1983, 150, 150, "ssd-fft ssd-auto"},
    {"640x480/64x64", 640, 480, 64, 64,
     "ssd-direct sad-direct ssd-fft ssd-auto ncc-direct ncc-fft ssd-masked sad-masked ncc-masked "
     "ssd-maskfft ncc-maskfft"},
    {"1920x1080/16x16", 1920, 1080, 16, 16,
     "ssd-direct sad-direct ssd-fft ssd-auto ncc-direct ncc-fft ssd-masked sad-masked ncc-masked"},
    // A 4K frame (issue 5's GPU target): FFT only by default (direct on seq: ~30 min).
    {"3840x2160/128x128", 3840, 2160, 128, 128, "ssd-fft"},
};

// "<metric>-<method>": the metric's name (match.cpp) and the method after the last '-'.
// "<metric>-masked": --mask with a ring (radii r/2 .. r, r = half the template's smaller side;
// ~59 % of the pixels count), method auto; "-maskfft" / "-maskdirect" the same mask with the
// FFT / direct method (cuda-opt: the masked FFT / NTT against the masked direct kernel).
const char* const kMethods[] = {"ssd-direct", "sad-direct", "ssd-fft",    "ssd-auto",
                                "ncc-direct", "ncc-fft",    "ncc-auto",   "ccorr-normed-direct",
                                "ssd-masked", "sad-masked", "ncc-masked", "ssd-maskfft",
                                "ncc-maskfft", "ssd-maskdirect"};
const char* const kMethodList =
    "ssd-direct sad-direct ssd-fft ssd-auto ncc-direct ncc-fft ncc-auto ccorr-normed-direct "
    "ssd-masked sad-masked ncc-masked ssd-maskfft ncc-maskfft ssd-maskdirect";

// The ring mask of the "-masked" methods (integer geometry, doubled coordinates).
Image ring_mask(int w, int h) {
  Image m = gray_shape(w, h);
  m.pixels.assign(size_t(w) * size_t(h), 0);
  const int64_t r2 = int64_t(std::min(w, h)) * std::min(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int64_t dx = 2 * x + 1 - w, dy = 2 * y + 1 - h, d2 = dx * dx + dy * dy;
      m.pixels[size_t(y) * size_t(w) + size_t(x)] = d2 <= r2 && 4 * d2 >= r2 ? 255 : 0;
    }
  return m;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string slug(std::string s) {
  std::replace(s.begin(), s.end(), ' ', '-');
  return s;
}

// One line of the output's shape for a part of a GPU run (no position of its own).
void print_part(const char* workload, const char* method, const std::string& part, double ms,
                size_t reps, const char* used) {
  std::printf("%s %s %s/%s gpu %.4f %zu - - - %s\n", kVersionName, workload, method,
              slug(part).c_str(), ms, reps, used);
}

// Seed 000's stage table for one workload and method on a CUDA version: `reps` runs of a
// matcher that times its stages; per run the stages are summed by group, then the median.
Status print_stage_table(const Image& source, const Image& tpl, const match::Params& base,
                         const char* workload, const char* method, int reps) {
  match::Params params = base;
  params.stage_times = true;
  match::MatcherPtr matcher;
  PARVIS_TRY(match::matcher_create(tpl, params, &matcher));
  match::Result res;
  PARVIS_TRY(match::matcher_run(matcher.get(), source, &res));  // warm-up
  std::vector<std::string> groups, names;
  std::vector<std::vector<double>> group_ms, name_ms;
  auto add = [](std::vector<std::string>* keys, std::vector<std::vector<double>>* values,
                const std::string& key, int run, double ms) {
    size_t i = size_t(std::find(keys->begin(), keys->end(), key) - keys->begin());
    if (i == keys->size()) keys->push_back(key), values->emplace_back();
    if ((*values)[i].size() <= size_t(run)) (*values)[i].resize(size_t(run) + 1, 0.0);
    (*values)[i][size_t(run)] += ms;
  };
  for (int r = 0; r < reps; ++r) {
    res = match::Result();
    PARVIS_TRY(match::matcher_run(matcher.get(), source, &res));
    for (const Timings::Stage& st : res.timings.stages) {
      add(&groups, &group_ms, st.group, r, st.ms);
      add(&names, &name_ms, st.group + ": " + st.name, r, st.ms);
    }
  }
  const char* used = match::method_name(res.method_used);
  if (groups.empty()) return Status::Ok();  // the direct method is one kernel: no stages

  // The blue count of seed 000, on the matched rectangle of the source made RGB.
  const Image rgb = to_rgb(source);
  const match::Position& b = res.best.at(0);
  std::vector<double> count_ms;
  for (int r = 0; r <= reps; ++r) {  // the first is a warm-up
    color::CountResult count;
    PARVIS_TRY(color::count_in_rect(rgb, Rect{b.x, b.y, tpl.width, tpl.height}, color::HsvRange(),
                                    &count));
    if (r) count_ms.push_back(count.timings.compute_ms);
  }

  // stdout: one line per stage (the run_match.sh table); stderr: seed 000's table in us, then
  // the kernels inside each stage.
  for (size_t i = 0; i < groups.size(); ++i)
    print_part(workload, method, groups[i], median_of(group_ms[i]), size_t(reps), used);
  print_part(workload, method, "blue count", median_of(count_ms), size_t(reps), used);
  std::fprintf(stderr, "stage table %s %s, %s (median us):", kVersionName, workload, method);
  for (const char* row : {match::kStageIntegralSource, match::kStageIntegralTemplate,
                          match::kStageCrossCorrelation, match::kStageSsd}) {
    const size_t i = size_t(std::find(groups.begin(), groups.end(), std::string(row)) - groups.begin());
    if (i < groups.size())
      std::fprintf(stderr, " %s %.1f |", row, 1000.0 * median_of(group_ms[i]));
    else
      std::fprintf(stderr, " %s: once, when the matcher is prepared |", row);
  }
  std::fprintf(stderr, " blue count %.1f\n", 1000.0 * median_of(count_ms));
  std::fprintf(stderr, "  kernels:");
  for (size_t i = 0; i < names.size(); ++i)
    std::fprintf(stderr, "%s %s %.1f", i ? "," : "", names[i].c_str(), 1000.0 * median_of(name_ms[i]));
  std::fprintf(stderr, "\n");
  return Status::Ok();
}

bool has_word(const std::string& list, const std::string& word) {
  return (" " + list + " ").find(" " + word + " ") != std::string::npos;
}

std::string thread_field() {
  const std::string v = kVersionName;
  if (v.rfind("cuda", 0) == 0 || v.rfind("blur", 0) == 0) return "gpu";
  if (v != "omp") return "1";
  if (const char* n = config::system("OMP_NUM_THREADS")) return n;
  return std::to_string(std::thread::hardware_concurrency());
}

}  // namespace

int bench_match(int argc, char** argv) {
  std::string only_workload, only_method, save_dir;
  double seconds = 1.0;
  int max_reps = 25;
  ArgParser args(
      "usage: ./main bench match [--workload NAME] [--method LIST] [--seconds S] [--max-reps N]\n"
      "Times template matching on generated scenes, prepared matcher, median of repeated runs\n"
      "after a warm-up. One line per run: version workload method threads median_ms reps\n"
      "best_x best_y best_score used_method. CUDA versions add <method>/<part> lines: upload,\n"
      "compute, download (CUDA events) and seed 000's stage table. Workloads:\n"
      "  1326x1025/479x432 1200x1983/150x150 (seed 000), 640x480/64x64 1920x1080/16x16,\n"
      "  3840x2160/128x128\n"
      "Methods: ssd-direct sad-direct ssd-fft ssd-auto ncc-direct ncc-fft ncc-auto\n"
      "ccorr-normed-direct ssd-masked sad-masked ncc-masked (--mask: a ring, method auto)\n"
      "ssd-maskfft ncc-maskfft ssd-maskdirect (the ring, method fft / direct) "
      "(default: those listed per workload).");
  args.option("--workload", &only_workload, "NAME", "run only this workload");
  args.option("--method", &only_method, "LIST",
              "space- or comma-separated methods to run (e.g. ssd-direct,ssd-fft), on every workload");
  args.option("--seconds", &seconds, "S", "time budget per measurement (default 1)");
  args.option("--max-reps", &max_reps, "N", "at most N timed runs (default 25)");
  args.option("--save-inputs", &save_dir, "DIR",
              "also write each workload's source and template as DIR/<W>x<H>_<w>x<h>_{source,template}.pgm "
              "(for bench/opencv_compare.py)");
  std::vector<std::string> pos;
  Status s = args.parse(argc, argv, 1, &pos);
  if (args.help_requested()) {
    std::printf("%s", args.help_text().c_str());
    return kExitOk;
  }
  if (!s.ok()) return report_failure(s);
  if (!pos.empty()) return report_failure(Status::usage("bench match takes no positional arguments"));
  if (max_reps < 1) return report_failure(Status::usage("--max-reps must be at least 1"));
  std::replace(only_method.begin(), only_method.end(), ',', ' ');
  {
    std::string word;
    for (size_t i = 0; i <= only_method.size(); ++i) {
      if (i < only_method.size() && only_method[i] != ' ') {
        word += only_method[i];
        continue;
      }
      if (!word.empty() && !has_word(kMethodList, word))
        return report_failure(Status::usage("unknown method '" + word + "' (known: " + kMethodList + ")"));
      word.clear();
    }
  }
  bool known_workload = only_workload.empty();
  for (const Workload& w : kWorkloads) known_workload = known_workload || only_workload == w.name;
  if (!known_workload) return report_failure(Status::usage("unknown workload '" + only_workload + "'"));

  // One scene, larger than every source up to 2048 wide (sources from different places in
  // it), and one for the 4K frame, made only when that workload runs.
  const Image scene_2k = synthetic_scene(2048, 2048, 2024);
  Image scene_4k;
  const std::string threads = thread_field();
  const bool gpu = threads == "gpu";
  int failures = 0;
  for (const Workload& wl : kWorkloads) {
    if (!only_workload.empty() && only_workload != wl.name) continue;
    if (wl.src_w > scene_2k.width && scene_4k.pixels.empty()) scene_4k = synthetic_scene(4096, 2304, 2025);
    const Image& scene = wl.src_w > scene_2k.width ? scene_4k : scene_2k;
    const int sx = (scene.width - wl.src_w) / 3, sy = (scene.height - wl.src_h) / 2;
    const Image source = crop(scene, Rect{sx, sy, wl.src_w, wl.src_h});
    const int tx = (wl.src_w - wl.tpl_w) * 5 / 8, ty = (wl.src_h - wl.tpl_h) * 3 / 8;
    const Image tpl = crop(source, Rect{tx, ty, wl.tpl_w, wl.tpl_h});
    if (!save_dir.empty()) {
      std::string stem = save_dir + "/" + wl.name;
      std::replace(stem.begin() + std::ptrdiff_t(save_dir.size()) + 1, stem.end(), '/', '_');
      s = image_write(stem + "_source.pgm", source);
      if (s.ok()) s = image_write(stem + "_template.pgm", tpl);
      if (!s.ok()) return report_failure(s);
    }
    for (const char* method : kMethods) {
      if (!has_word(only_method.empty() ? wl.methods : only_method, method)) continue;
      match::Params params;
      const std::string name = method, how = name.substr(name.rfind('-') + 1);
      s = match::parse_metric(name.substr(0, name.rfind('-')), &params.metric);
      if (!s.ok()) return report_failure(s);
      params.method = how == "fft" ? match::Method::FFT : how == "auto" ? match::Method::Auto
                                                                         : match::Method::Direct;
      if (how == "masked" || how == "maskfft" || how == "maskdirect") {
        params.method = how == "maskfft"      ? match::Method::FFT
                        : how == "maskdirect" ? match::Method::Direct
                                              : match::Method::Auto;
        params.mask = ring_mask(tpl.width, tpl.height);
      }
      match::MatcherPtr matcher;
      match::Result res;
      s = match::matcher_create(tpl, params, &matcher);
      const double warm_start = now_ms();
      if (s.ok()) s = match::matcher_run(matcher.get(), source, &res);  // warm-up
      const double warm_ms = now_ms() - warm_start;
      if (!s.ok()) {
        std::printf("%s %s %s %s n/a 0 - - - %s\n", kVersionName, wl.name, method, threads.c_str(),
                    s.message.c_str());
        std::fflush(stdout);
        continue;
      }
      // A run longer than 3 budgets (seq's direct sums on seed 000's sizes take tens of
      // seconds) is reported from its warm-up alone, as 1 repetition.
      std::vector<double> times, upload, compute, download;
      if (warm_ms > 3000.0 * seconds) {
        times.push_back(warm_ms);
      } else {
        const double start = now_ms();
        while (int(times.size()) < max_reps &&
               (times.size() < 3 || now_ms() - start < seconds * 1000.0)) {
          const double t0 = now_ms();
          s = match::matcher_run(matcher.get(), source, &res);
          times.push_back(now_ms() - t0);
          if (!s.ok()) break;
          upload.push_back(res.timings.upload_ms);
          compute.push_back(res.timings.compute_ms);
          download.push_back(res.timings.download_ms);
        }
      }
      if (!s.ok()) {
        ++failures;
        std::fprintf(stderr, "bench %s %s: %s\n", wl.name, method, s.message.c_str());
        continue;
      }
      const size_t n = times.size();
      const double median = median_of(times);
      const match::Position& b = res.best.at(0);
      const char* used = match::method_name(res.method_used);
      char score[40];
      if (match::is_normed(params.metric))
        std::snprintf(score, sizeof score, "%.9f", match::score_value(params.metric, b.score));
      else
        std::snprintf(score, sizeof score, "%llu", (unsigned long long)b.score);
      std::printf("%s %s %s %s %.3f %zu %d %d %s %s\n", kVersionName, wl.name, method,
                  threads.c_str(), median, n, b.x, b.y, score, used);
      if (gpu && !upload.empty()) {
        // cuda-opt's PARVIS_UPLOAD mode (pageable, staged), where set, names the line.
        const char* mode = config::get(config::Var::Upload);
        print_part(wl.name, method, mode && *mode ? std::string("upload-") + mode : "upload",
                   median_of(upload), upload.size(), used);
        print_part(wl.name, method, "compute", median_of(compute), compute.size(), used);
        print_part(wl.name, method, "download", median_of(download), download.size(), used);
        s = print_stage_table(source, tpl, params, wl.name, method, 5);
        if (!s.ok()) {
          ++failures;
          std::fprintf(stderr, "bench %s %s stages: %s\n", wl.name, method, s.message.c_str());
        }
      }
      std::fflush(stdout);
    }
  }
  return failures ? kExitRuntime : kExitOk;
}

}  // namespace parvis
