// ./main bench blur — times the blur map on issue 12's workloads, on any version: 3840x2160
// x 8 layers with sigma_max 4 and the radial map, 1920x1080 x 32 layers with sigma_max 2, and
// 3840x2160 x 8 with a noise map (no correlation between neighbours: the hard case for
// blur-v4's constant-memory broadcast). Layers and maps are generated (blur::noise_image,
// blur::radial_map).
//
// Per workload and launch: one warm-up run, then runs until 3 repetitions and ~1 s have
// passed (at most 25); a warm-up longer than 3 s (seq) is the one timing. Medians. One line
// each for the compute time (CPU: the whole apply; CUDA: the kernels, CUDA events) and the
// total (host layers in, host outputs out):
//   version workload method threads ms reps Mpixel/s Gmul-add/s %imad checksum
// where a multiply-add is one tap of a full window (side^2 per blurred pixel and layer),
// %imad that rate against the GPU's data-sheet IMAD peak (measure_peak; "-" on the CPU), and
// checksum an FNV-1a 64 of all outputs (every version but blur-v1/v2 must agree).
// --tpb LIST runs the ladder's threads-per-block sweep (methods compute-tpbN, total-tpbN):
// the same number of threads, grouped in blocks of N. --peak first prints the measured rates:
//   peak version sms clock_ghz imad_sheet/s imad_measured/s dp2a_measured/s
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli.hpp"
#include "blur/blur.hpp"
#include "common/config.hpp"
#include "cli/subcommands.hpp"

namespace parvis {

namespace {

struct Workload {
  const char* name;
  int width, height, layers;
  double sigma_max;
  bool noise_map;
};
const Workload kWorkloads[] = {
    {"blur:3840x2160x8-s4-radial", 3840, 2160, 8, 4, false},
    {"blur:1920x1080x32-s2-radial", 1920, 1080, 32, 2, false},
    {"blur:3840x2160x8-s4-noise", 3840, 2160, 8, 4, true},
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

bool is_gpu() {
  const std::string v = kVersionName;
  return v.rfind("cuda", 0) == 0 || v.rfind("blur-v", 0) == 0;
}

std::string threads_field() {
  if (is_gpu()) return "gpu";
  if (std::string(kVersionName) != "omp") return "1";
  if (const char* n = config::system("OMP_NUM_THREADS")) return n;
  return std::to_string(std::thread::hardware_concurrency());
}

uint64_t checksum(const std::vector<Image>& images) {
  uint64_t h = 1469598103934665603ull;
  for (const Image& img : images)
    for (uint8_t p : img.pixels) h = (h ^ p) * 1099511628211ull;
  return h;
}

struct Measured {
  std::vector<double> compute, total;
  uint64_t checksum = 0;
};

Status measure(const std::vector<Image>& layers, const Image& map, const blur::TapSets& taps,
               blur::Launch launch, double seconds, int max_reps, Measured* m) {
  std::vector<Image> out;
  Timings t;
  double t0 = now_ms();
  PARVIS_TRY(blur::apply(layers, map, taps, &out, &t, &launch));  // warm-up
  const double warm = now_ms() - t0;
  m->checksum = checksum(out);
  if (warm > 3000.0) {
    m->compute.push_back(t.compute_ms);
    m->total.push_back(warm);
    return Status::Ok();
  }
  const double start = now_ms();
  while (int(m->total.size()) < max_reps && (m->total.size() < 3 || now_ms() - start < seconds * 1000.0)) {
    t0 = now_ms();
    PARVIS_TRY(blur::apply(layers, map, taps, &out, &t, &launch));
    m->total.push_back(now_ms() - t0);
    m->compute.push_back(t.compute_ms);
  }
  return Status::Ok();
}

}  // namespace

int bench_blur(int argc, char** argv) {
  std::string only, tpb_list;
  double seconds = 1.0;
  int max_reps = 25, blocks = 0;
  bool peak = false;
  ArgParser args(
      "usage: ./main bench blur [--workload NAME] [--seconds S] [--max-reps N] [--tpb LIST]\n"
      "                         [--blocks N] [--peak]\n"
      "Times the blur map on generated layers; median of repeated runs after a warm-up. Lines:\n"
      "  version workload method threads ms reps Mpixel/s Gmul-add/s %imad checksum\n"
      "method compute (CPU: the whole call; CUDA: the kernels) or total (layers in, outputs out).\n"
      "Workloads: 3840x2160x8-s4-radial 1920x1080x32-s2-radial 3840x2160x8-s4-noise");
  args.option("--workload", &only, "NAME", "run only this workload (with or without \"blur:\")");
  args.option("--seconds", &seconds, "S", "time budget per measurement (default 1)");
  args.option("--max-reps", &max_reps, "N", "at most N timed runs (default 25)");
  args.option("--tpb", &tpb_list, "LIST",
              "threads-per-block sweep of blur-v1 ... v5, e.g. 32,64,128,256,512,1024 (same total threads)");
  args.option("--blocks", &blocks, "N", "blocks of the ladder's grid (default: the version's)");
  args.flag("--peak", &peak, "first measure the GPU's IMAD and dp2a rates");
  std::vector<std::string> pos;
  Status s = args.parse(argc, argv, 1, &pos);
  if (args.help_requested()) {
    std::printf("%s", args.help_text().c_str());
    return kExitOk;
  }
  if (!s.ok()) return report_failure(s);
  if (!pos.empty()) return report_failure(Status::usage("bench blur takes no positional arguments"));
  if (max_reps < 1 || blocks < 0) return report_failure(Status::usage("--max-reps must be >= 1, --blocks >= 0"));
  if (!only.empty() && only.rfind("blur:", 0) != 0) only = "blur:" + only;
  bool known = only.empty();
  for (const Workload& w : kWorkloads) known = known || only == w.name;
  if (!known) return report_failure(Status::usage("unknown workload '" + only + "'"));
  std::vector<int> tpbs;
  for (size_t i = 0; i < tpb_list.size();) {
    const size_t j = std::min(tpb_list.find(',', i), tpb_list.size());
    int64_t v = 0;
    s = parse_int(tpb_list.substr(i, j - i), 1, 1024, &v);
    if (!s.ok()) return report_failure(Status::usage("--tpb: " + s.message));
    tpbs.push_back(int(v));
    i = j + 1;
  }
  if (tpbs.empty()) tpbs.push_back(0);  // the version's default

  blur::PeakRates rates;
  const bool have_rates = is_gpu() && blur::measure_peak(&rates).ok();
  if (peak) {
    if (!have_rates) return report_failure(Status::runtime("--peak needs a CUDA version and a GPU"));
    std::printf("peak %s %d %.3f %.4g %.4g %.4g\n", kVersionName, rates.sms, rates.clock_ghz,
                rates.imad_sheet_per_s, rates.imad_per_s, rates.dp2a_per_s);
  }
  const std::string threads = threads_field();
  int failures = 0;
  for (const Workload& w : kWorkloads) {
    if (!only.empty() && only != w.name) continue;
    blur::TapSets taps;
    s = blur::make_tap_sets(w.sigma_max, &taps);
    std::vector<Image> layers;
    for (int l = 0; l < w.layers; ++l) layers.push_back(blur::noise_image(w.width, w.height, 7000 + uint64_t(l)));
    Image map;
    if (w.noise_map) map = blur::noise_image(w.width, w.height, 99);
    else if (s.ok()) s = blur::radial_map(w.width, w.height, &map);
    if (!s.ok()) return report_failure(s);
    uint64_t blurred = 0;
    for (uint8_t v : map.pixels) blurred += v != 0;
    const double macs = double(blurred) * w.layers * taps.side * taps.side;
    const double pixels = double(w.width) * w.height * w.layers;
    for (int tpb : tpbs) {
      blur::Launch launch;
      launch.blocks = blocks;
      launch.threads_per_block = tpb;
      Measured m;
      s = measure(layers, map, taps, launch, seconds, max_reps, &m);
      if (!s.ok()) {
        ++failures;
        std::fprintf(stderr, "bench %s: %s\n", w.name, s.message.c_str());
        continue;
      }
      const std::string suffix = tpb ? "-tpb" + std::to_string(tpb) : "";
      for (int total = 0; total < 2; ++total) {
        const double ms = median(total ? m.total : m.compute);
        const double mac_rate = macs / (ms * 1e-3);
        char pct[32] = "-";
        if (have_rates) std::snprintf(pct, sizeof pct, "%.1f", 100 * mac_rate / rates.imad_sheet_per_s);
        std::printf("%s %s %s%s %s %.3f %zu %.1f %.2f %s %016llx\n", kVersionName, w.name,
                    total ? "total" : "compute", suffix.c_str(), threads.c_str(), ms, m.total.size(),
                    pixels / (ms * 1e3), mac_rate * 1e-9, pct, (unsigned long long)m.checksum);
      }
      std::fflush(stdout);
    }
  }
  return failures ? kExitRuntime : kExitOk;
}

}  // namespace parvis
