// ./main bench video — seed 000's production line at full HD, end to end: a 1920x1080 Y4M
// 4:2:0 clip read from a file in the page cache, every frame matched (template prepared once)
// and its match's colour counted, results formatted as `./main video` does (into /dev/null).
// Templates 16x16, 64x64 and 128x128. Shared by every version (run_video and the public match
// and colour entry points only).
//
// Per template, one line each (ms per frame, median of the passes over the clip):
//   e2e            file -> per-frame results, the whole pipeline (reader thread overlapping)
//   read           the reader alone: file -> frame bytes (no conversion, no matching)
//   read+convert   the reader with the host conversion (YUV -> grey), nothing else
//   match+color    the compute alone: matcher_run + count_in_rect on a grey frame in memory
// e2e of the host pipeline can be no faster than the slower of read+convert and match+color.
// A version with a device pipeline (cuda-opt: planes uploaded, converted on the GPU) adds
//   link              the upload of a frame's planes (CUDA events, pinned memory)
//   gpu               the device work of a frame: conversion, match, colour count (CUDA events)
//   bound:read|link   the slower of read and link: what the reader and the host link allow
//                     (both overlap the compute, so e2e >= max(bound, gpu))
//   e2e:host-convert  e2e with the host pipeline (video.host_convert=1), for comparison
// Versions without the colour filter (it says "not implemented") time the match alone and
// say so in the method ("e2e:match-only", "match").
// Output lines: version workload method threads ms_per_frame frames fps
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "cli/cli.hpp"
#include "common/config.hpp"
#include "common/output.hpp"
#include "common/splitmix.hpp"
#include "cli/subcommands.hpp"
#include "video/reader.hpp"
#include "video/run.hpp"

namespace parvis {

namespace {

using video::FrameFormat;
using video::FrameSlot;
using video::FrameResult;

// Frame f of the clip, RGB: a textured grey belt (a hash per 4x4 cell plus fine noise: no two
// windows alike) and a blue capsule-like box moving right, 24 px per frame.
void bench_frame(int w, int h, int f, Image* rgb) {
  const int bx = 200 + 24 * f, by = h / 2 - 60, bw = 320, bh = 120;
  for (int y = 0; y < h; ++y) {
    uint8_t* p = rgb->row(y);
    for (int x = 0; x < w; ++x) {
      const uint64_t cell = splitmix64_mix(uint64_t(((x - 24 * f) >> 2) & 0xffff) << 20 ^ uint64_t(y >> 2));
      const int v = 90 + int(cell & 63) + int(splitmix64_mix(uint64_t(x) * 7919 + uint64_t(y) * 104729 + uint64_t(f)) & 15);
      const bool box = x >= bx && x < bx + bw && y >= by && y < by + bh;
      p[3 * x] = uint8_t(box ? v / 4 : v);
      p[3 * x + 1] = uint8_t(box ? v / 2 : v);
      p[3 * x + 2] = uint8_t(box ? std::min(255, v + 100) : v);
    }
  }
}

// Writes the clip (C420jpeg, full range; chroma sampled at the even pixels) to `path`.
Status write_clip(const std::string& path, int w, int h, int frames) {
  FrameFormat fmt;
  fmt.width = w, fmt.height = h, fmt.range = video::YuvRange::Full, fmt.fps_num = 25, fmt.fps_den = 1;
  Image rgb;
  PARVIS_TRY(image_alloc(w, h, 3, &rgb));
  std::string header = "YUV4MPEG2 W" + std::to_string(w) + " H" + std::to_string(h) +
                       " F25:1 Ip A1:1 C420jpeg XCOLORRANGE=FULL\n";
  std::vector<uint8_t> bytes(header.begin(), header.end());
  const video::RgbToYuv k = video::rgb_to_yuv_coefficients(video::YuvMatrix::Bt601, video::YuvRange::Full);
  const int cw = fmt.chroma_width();
  std::vector<uint8_t> frame(fmt.frame_bytes());
  for (int f = 0; f < frames; ++f) {
    bench_frame(w, h, f, &rgb);
    uint8_t* yp = frame.data();
    uint8_t* up = yp + fmt.luma_bytes();
    uint8_t* vp = up + fmt.chroma_bytes();
    uint8_t u, v;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const uint8_t* p = rgb.at(x, y);
        video::rgb_to_yuv(k, p[0], p[1], p[2], &yp[size_t(y) * w + x], &u, &v);
        if (x % 2 == 0 && y % 2 == 0) up[size_t(y / 2) * cw + x / 2] = u, vp[size_t(y / 2) * cw + x / 2] = v;
      }
    static const char kFrame[] = "FRAME\n";
    bytes.insert(bytes.end(), kFrame, kFrame + 6);
    bytes.insert(bytes.end(), frame.begin(), frame.end());
  }
  return write_file_atomic(path, bytes.data(), bytes.size());
}

// A pipeline that stops after the reader: prepare() converts (or not), no compute. The reader's
// own speed, the bound the file and the conversion put on the whole.
class ReaderOnly : public video::Pipeline {
 public:
  explicit ReaderOnly(bool convert) : convert_(convert) {}
  Status start(const FrameFormat& fmt, int slots) override {
    slots_.start(fmt, slots);
    return Status::Ok();
  }
  Status init_slot(int i, FrameSlot* slot) override { return slots_.init_slot(i, slot, false); }
  Status prepare(FrameSlot* slot) override {
    if (convert_) video::frame_to_rgb_gray(slots_.format(), slot->bytes, nullptr, &slot->gray);
    return Status::Ok();
  }
  Status submit(FrameSlot* slot) override {
    last_ = slot->index;
    return Status::Ok();
  }
  Status collect(FrameResult* out) override {
    out->index = last_;
    return Status::Ok();
  }
  int depth() const override { return 1; }
  int template_width() const override { return 1; }
  int template_height() const override { return 1; }

 private:
  bool convert_;
  video::HostSlots slots_;
  int64_t last_ = -1;
};

// One pass of the reader alone over the clip: ms per frame.
Status reader_pass(const std::string& path, bool convert, double* ms_per_frame, int64_t* frames) {
  video::SourceOptions so;
  so.path = path;
  std::unique_ptr<video::FrameSource> source;
  PARVIS_TRY(video::open_source(so, &source));
  ReaderOnly pipeline(convert);
  video::FrameReader reader(source.get(), &pipeline, 4, 0, -1);
  PARVIS_TRY(reader.start());
  const double t0 = now_ms();
  int64_t n = 0;
  for (;;) {
    FrameSlot* slot = nullptr;
    PARVIS_TRY(reader.next(&slot));
    if (!slot) break;
    reader.release(slot);
    ++n;
  }
  *ms_per_frame = (now_ms() - t0) / double(n);
  *frames = n;
  return Status::Ok();
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string thread_field() {
  const std::string v = kVersionName;
  if (v.rfind("cuda", 0) == 0) return "gpu";
  if (v != "omp") return "1";
  if (const char* n = config::system("OMP_NUM_THREADS")) return n;
  return std::to_string(std::thread::hardware_concurrency());
}

}  // namespace

int bench_video(int argc, char** argv) {
  std::string input, only_sizes = "16,64,128";
  int frames = 24, passes_max = 20, jobs = 1;
  double seconds = 2.0;
  ArgParser args(
      "usage: ./main bench video [--templates 16,64,128] [--frames N] [--seconds S] [--input FILE.y4m]\n"
      "Seed 000's production line at 1920x1080, end to end: a Y4M 4:2:0 clip (made in $TMPDIR,\n"
      "read back from the page cache) -> every frame matched (template prepared once) and its\n"
      "match's blue pixels counted. Per template, ms per frame (median of passes over the clip):\n"
      "e2e, and its bounds read (file -> bytes), read+convert (+ YUV -> grey) and match+color\n"
      "(matcher_run + count_in_rect on a frame in memory). One line each:\n"
      "  version workload method threads ms_per_frame frames fps");
  args.option("--templates", &only_sizes, "LIST", "template sides, comma-separated (default 16,64,128)");
  args.option("--frames", &frames, "N", "frames in the clip (default 24)");
  args.option("--seconds", &seconds, "S", "time budget per measurement (default 2)");
  args.option("--max-passes", &passes_max, "N", "at most N passes over the clip per measurement (default 20)");
  args.option("--jobs", &jobs, "N", "frames matched at once, as ./main video --jobs (default 1); the\n"
              "threads field then reads T*N");
  args.option("--input", &input, "FILE.y4m", "use this clip instead of making one (templates cut from its frame 0 centre)");
  std::vector<std::string> pos;
  if (int rc = args.parse_command(argc, argv, &pos); rc >= 0) return rc;
  if (!pos.empty()) return report_failure(Status::usage("bench video takes no positional arguments"));
  if (frames < 2 || passes_max < 1 || jobs < 1 || jobs > 64)
    return report_failure(Status::usage("--frames must be at least 2, --max-passes and --jobs at least 1"));
  std::vector<int> sizes;
  {
    std::string t = only_sizes + ",";
    size_t start = 0;
    for (size_t i = 0; i < t.size(); ++i)
      if (t[i] == ',') {
        int64_t v = 0;
        Status s = parse_int(t.substr(start, i - start), 1, 4096, &v);
        if (!s.ok()) return report_failure(Status::usage("--templates: " + s.message));
        sizes.push_back(int(v));
        start = i + 1;
      }
  }

  // The clip, in the page cache (just written, and read once before timing).
  std::string path = input;
  bool made = false;
  if (path.empty()) {
    const char* tmp = config::system("TMPDIR");
    path = std::string(tmp && *tmp ? tmp : "/tmp") + "/parvis-bench-video-" + std::to_string(::getpid()) + ".y4m";
    Status s = write_clip(path, 1920, 1080, frames);
    if (!s.ok()) return report_failure(s);
    made = true;
  }
  struct Cleanup {
    std::string p;
    bool on;
    ~Cleanup() {
      if (on) std::remove(p.c_str());
    }
  } cleanup{path, made};

  // Frame 0 as the pipeline decodes it: the templates are cut from it.
  video::SourceOptions so;
  so.path = path;
  std::unique_ptr<video::FrameSource> source;
  Status s = video::open_source(so, &source);
  if (!s.ok()) return report_failure(s);
  const FrameFormat fmt = source->format();
  const int64_t frames_in_clip = source->frame_count() > 0 ? source->frame_count() : frames;
  std::vector<uint8_t> bytes(fmt.frame_bytes());
  bool end = false;
  s = source->read_frame(bytes.data(), &end);
  if (s.ok() && end) s = Status::bad_input(path + " holds no frame");
  Image rgb0, gray0;
  if (s.ok()) s = image_alloc(fmt.width, fmt.height, 3, &rgb0);
  if (s.ok()) s = image_alloc(fmt.width, fmt.height, 1, &gray0);
  if (!s.ok()) return report_failure(s);
  video::frame_to_rgb_gray(fmt, bytes.data(), &rgb0, &gray0);
  source.reset();

  // The colour filter: timed where the version has it.
  bool have_color = true;
  {
    color::CountResult c;
    Status cs = color::count_in_rect(rgb0, Rect{0, 0, 1, 1}, color::HsvRange(), &c);
    if (!cs.ok() && cs.message.find("not implemented") != std::string::npos) have_color = false;
  }
  const std::string threads = thread_field() + (jobs > 1 ? "*" + std::to_string(jobs) : "");
  const std::string clip = "video:" + std::to_string(fmt.width) + "x" + std::to_string(fmt.height) + "-" +
                           (made ? "420" : "file");
  FILE* null_out = std::fopen("/dev/null", "w");
  if (!null_out) return report_failure(Status::runtime("cannot open /dev/null"));
  auto line = [&](const std::string& workload, const std::string& method, double ms, int64_t n) {
    std::printf("%s %s %s %s %.3f %lld %.1f\n", kVersionName, workload.c_str(), method.c_str(),
                threads.c_str(), ms, (long long)n, ms > 0 ? 1000.0 / ms : 0.0);
    std::fflush(stdout);
  };

  // The reader's bounds (the same for every template).
  int failures = 0;
  double read_ms = 0;
  for (bool convert : {false, true}) {
    std::vector<double> ms;
    int64_t n = 0;
    const double start = now_ms();
    while (int(ms.size()) < passes_max && (ms.size() < 2 || now_ms() - start < seconds * 1000.0)) {
      double one = 0;
      s = reader_pass(path, convert, &one, &n);
      if (!s.ok()) break;
      ms.push_back(one);
    }
    if (!s.ok()) {
      ++failures;
      std::fprintf(stderr, "bench video: %s\n", s.message.c_str());
      continue;
    }
    line(clip, convert ? "read+convert" : "read", median_of(ms), n * int64_t(ms.size()));
    if (!convert) read_ms = median_of(ms);
  }

  for (int side : sizes) {
    if (side > fmt.width || side > fmt.height) continue;
    // The blue box of frame 0 (made clips), or the frame's centre.
    const Rect at = made ? Rect{200 + 160 - side / 2, fmt.height / 2 - side / 2, side, side}
                         : Rect{(fmt.width - side) / 2, (fmt.height - side) / 2, side, side};
    const Image tpl_gray = crop(gray0, at);
    const std::string workload = clip + "/" + std::to_string(side) + "x" + std::to_string(side);

    match::Params match_params;
    // The compute alone, on frame 0 in memory.
    match::MatcherPtr matcher;
    s = match::matcher_create(tpl_gray, match_params, &matcher);
    match::Result res;
    color::CountResult count;
    std::vector<double> compute;
    const double c0 = now_ms();
    while (s.ok() && int(compute.size()) < 200 && (compute.size() < 2 || now_ms() - c0 < seconds * 1000.0)) {
      const double t0 = now_ms();
      s = match::matcher_run(matcher.get(), gray0, &res);
      if (s.ok() && have_color)
        s = color::count_in_rect(rgb0, Rect{res.best.at(0).x, res.best.at(0).y, side, side}, color::HsvRange(), &count);
      compute.push_back(now_ms() - t0);
    }
    if (!s.ok()) {
      ++failures;
      std::fprintf(stderr, "bench video %s compute: %s\n", workload.c_str(), s.message.c_str());
      continue;
    }
    compute.erase(compute.begin());  // the first run makes the plans
    line(workload, have_color ? "match+color" : "match", median_of(compute), int64_t(compute.size()));
    // End to end: run_video over the file, results into /dev/null.
    video::RunOptions o;
    o.source.path = path;
    o.pipeline.jobs = jobs;
    o.results = null_out;
    o.times = true;
    if (have_color) {
      o.pipeline.color.enabled = true;
      o.pipeline.color.label = "blue";
    }
    // As many frames as fit the budget at the compute's speed (at least 4, at most the clip):
    // seq's direct sums take seconds per frame.
    const double compute_ms = median_of(compute);
    o.last = std::max<int64_t>(4, std::min<int64_t>(frames_in_clip, int64_t(seconds * 1000.0 / std::max(compute_ms, 1e-3))));
    // One e2e measurement (the version's pipeline, or with host_convert the host pipeline):
    // ms per frame, median over passes; the device split summed over them.
    struct E2e {
      std::vector<double> ms;
      int64_t n = 0;
      double link_ms = 0, device_ms = 0;
      int64_t device_frames = 0;
    };
    auto run_e2e = [&](bool host_convert, E2e* e) {
      o.pipeline.host_convert = host_convert;
      const double start = now_ms();
      video::RunStats stats;
      Status rs;
      while (int(e->ms.size()) < passes_max && (e->ms.empty() || now_ms() - start < seconds * 1000.0)) {
        rs = video::run_video(o, tpl_gray, &stats);
        if (!rs.ok()) break;
        // Steady state: from the first frame's result to the last (the first frame also pays
        // for the FFT plans, once per run).
        e->ms.push_back(1000.0 * stats.steady_seconds / double(stats.frames - 1));
        e->n += stats.frames - 1;
        e->link_ms += stats.link_ms;
        e->device_ms += stats.device_ms;
        e->device_frames += stats.device_frames;
      }
      return rs;
    };
    E2e e2e;
    s = run_e2e(config::tuning_flag("video.host_convert", false), &e2e);
    if (!s.ok()) {
      ++failures;
      std::fprintf(stderr, "bench video %s: %s\n", workload.c_str(), s.message.c_str());
      continue;
    }
    line(workload, have_color ? "e2e" : "e2e:match-only", median_of(e2e.ms), e2e.n);
    if (e2e.device_frames > 0) {
      // A device pipeline: its split (CUDA events), the bound the reader and the link allow
      // (the slower of the two, they overlap the compute), and the host-convert path beside it.
      const double link = e2e.link_ms / double(e2e.device_frames);
      line(workload, "link", link, e2e.device_frames);
      line(workload, "gpu", e2e.device_ms / double(e2e.device_frames), e2e.device_frames);
      if (read_ms > 0) line(workload, "bound:read|link", std::max(read_ms, link), e2e.device_frames);
      E2e host;
      s = run_e2e(true, &host);
      if (s.ok()) line(workload, "e2e:host-convert", median_of(host.ms), host.n);
      else {
        ++failures;
        std::fprintf(stderr, "bench video %s host-convert: %s\n", workload.c_str(), s.message.c_str());
      }
    }

    std::fprintf(stderr, "%s %s: %s at x=%d y=%d score=%llu; e2e %.1f frames/s\n", kVersionName,
                 workload.c_str(), match::method_name(res.method_used), res.best.at(0).x, res.best.at(0).y,
                 (unsigned long long)res.best.at(0).score, 1000.0 / median_of(e2e.ms));
  }
  std::fclose(null_out);
  return failures ? kExitRuntime : kExitOk;
}

}  // namespace parvis
