// The command form of seed 002, on every version:
//   ./main <number of blocks> <number of imgs> <save data> [--size WxH] [--sigma-max S]
//          [--tpb N] [--map MAP] [--out-dir DIR] [--seed S]
// blurs <number of imgs> generated grey layers (noise, fixed seed) with the radial map (or
// MAP) in one call, prints what ran on stdout and the grid and the timings on stderr, and
// with <save data> = 1 writes the blurred layers as DIR/blurred_NNN.pgm. The grid (blocks,
// threads per block) is what seed 002's ladder, blur-v1 … blur-v5, launches; the other
// versions do not use it and say so.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli/cli.hpp"
#include "blur/blur.hpp"
#include "cli/subcommands.hpp"
#include "image_io.hpp"

namespace parvis {

namespace {

bool is_ladder() { return std::strncmp(kVersionName, "blur-v", 6) == 0; }

}  // namespace

bool is_blur_seed_form(const char* first_argument) {
  if (!first_argument || !*first_argument) return false;
  for (const char* p = first_argument; *p; ++p)
    if (*p < '0' || *p > '9') return false;
  return true;
}

int cli_blur_seed(int argc, char** argv) {
  std::string size = "1920x1080", map_path, out_dir = "blur_out";
  double sigma_max = 4;
  int tpb = 0, seed = 1;
  ArgParser args(
      "usage: ./main <number of blocks> <number of imgs> <save data> [options]\n"
      "Seed 002's command form: blurs <number of imgs> generated grey layers (noise) of one size\n"
      "with one map (default: radial, sharp centre) in one call; prints what ran on stdout and\n"
      "the grid and the timings (upload, compute, download) on stderr. <save data> 1 writes the\n"
      "blurred layers as DIR/blurred_NNN.pgm, 0 writes nothing. <number of blocks> and --tpb are\n"
      "the grid of seed 002's ladder (blur-v1 ... blur-v5); other versions do not use them.\n"
      "Defaults: 1920x1080 layers, sigma_max 4 (25x25 taps), the version's threads per block\n"
      "(32 for blur-v1 ... v4, 256 for blur-v5, the seed's findings).");
  args.option("--size", &size, "WxH", "layer size (default 1920x1080)");
  args.option("--sigma-max", &sigma_max, "S", "sigma at map value 255, in [0.01, 16] (default 4)");
  args.option("--tpb", &tpb, "N", "threads per block, 1 ... 1024 (blur-v*; default: the version's)");
  args.option("--map", &map_path, "MAP", "map image of the layers' size instead of the radial map");
  args.option("--out-dir", &out_dir, "DIR", "where <save data> 1 writes (default blur_out)");
  args.option("--seed", &seed, "S", "seed of the generated layers (default 1)");
  args.max_pixels_option();
  std::vector<std::string> pos;
  if (int rc = args.parse_command(argc, argv, &pos); rc >= 0) return rc;
  if (pos.size() != 3)
    return report_failure(Status::usage("the seed's form takes <number of blocks> <number of imgs> <save data> (see --help)"));
  int64_t blocks = 0, imgs = 0, save = 0;
  Status s = parse_int(pos[0], 1, 0x7fffffff, &blocks);
  if (s.ok()) s = parse_int(pos[1], 1, 4096, &imgs);
  if (s.ok()) s = parse_int(pos[2], 0, 1, &save);
  if (!s.ok()) return report_failure(Status::usage(s.message + " (blocks >= 1, imgs 1 ... 4096, save data 0 or 1)"));
  if (tpb < 0 || tpb > 1024) return report_failure(Status::usage("--tpb must be in 1 ... 1024"));
  if (seed < 0) return report_failure(Status::usage("--seed must not be negative"));
  int width = 0, height = 0;
  s = parse_size(size, &width, &height);
  if (!s.ok()) return report_failure(Status::usage(s.message));
  s = check_image_size(width, height, 1);
  if (!s.ok()) return report_failure(s);
  if (uint64_t(width) * uint64_t(height) * uint64_t(imgs) > (uint64_t(1) << 32))
    return report_failure(Status::bad_input("the layers would exceed 4 GiB"));

  // <save data> 1: the directory made (one level) and every layer's file checked before any work.
  Outputs outputs;
  std::vector<std::string> names;
  if (save) {
    s = outputs.make_dir(out_dir);
    for (int64_t i = 0; s.ok() && i < imgs; ++i) {
      char name[48];
      std::snprintf(name, sizeof name, "/blurred_%03lld.pgm", (long long)i);
      names.push_back(out_dir + name);
      s = image_declare(&outputs, names.back());
    }
    if (!s.ok()) return report_failure(s);
  }
  blur::TapSets taps;
  s = blur::make_tap_sets(sigma_max, &taps);
  if (!s.ok()) return report_failure(s);
  Image map;
  if (!map_path.empty()) {
    s = image_read(map_path, &map);
    if (!s.ok()) return report_failure(s);
    if (map.channels != 1) map = to_gray(map);
    if (map.width != width || map.height != height)
      return report_failure(Status::bad_input("map " + map_path + " is " + std::to_string(map.width) + "x" +
                                              std::to_string(map.height) + ", the layers " + size));
  } else {
    s = blur::radial_map(width, height, &map);
    if (!s.ok()) return report_failure(s);
  }
  std::vector<Image> layers;
  for (int64_t i = 0; i < imgs; ++i) layers.push_back(blur::noise_image(width, height, uint64_t(seed) * 1000 + uint64_t(i)));

  blur::Launch launch;
  launch.blocks = int(blocks);
  launch.threads_per_block = tpb;
  std::vector<Image> out;
  Timings timings;
  const double t0 = now_ms();
  s = blur::apply(layers, map, taps, &out, &timings, &launch);
  const double total = now_ms() - t0;
  if (!s.ok()) return report_failure(s);

  for (size_t i = 0; save && i < out.size(); ++i) {
    s = image_put(&outputs, names[i], out[i]);
    if (!s.ok()) return report_failure(s);
  }
  std::printf("seed form: %lld image%s %dx%d, %s map, sigma_max %g (%dx%d taps)%s\n", (long long)imgs,
              imgs == 1 ? "" : "s", width, height, map_path.empty() ? "radial" : "file", taps.sigma_max,
              taps.side, taps.side, save ? ", saved" : "");
  s = outputs.commit();
  if (!s.ok()) return report_failure(s);
  if (save) std::fprintf(stderr, "wrote %zu blurred layers to %s\n", out.size(), out_dir.c_str());
  if (is_ladder())
    std::fprintf(stderr, "grid: %d blocks x %d threads per block\n", launch.blocks, launch.threads_per_block);
  else
    std::fprintf(stderr, "grid: <number of blocks> and --tpb are for blur-v1 ... blur-v5; %s does not use them\n",
                 kVersionName);
  if (!launch.note.empty()) std::fprintf(stderr, "%s: %s\n", kVersionName, launch.note.c_str());
  print_timings("blur", total, timings);
  return kExitOk;
}

}  // namespace parvis
