// parvis-gen: the project's own image generator. It makes the committed sample pictures
// (images/), the test inputs (build/testdata) and large bench inputs, all from a seeded
// PRNG with integer arithmetic only, so every platform and compiler writes the same bytes.
//
//   parvis-gen samples DIR      the committed samples (capsule scenes and their templates)
//   parvis-gen testdata DIR     every input the test cases use
//   parvis-gen crop IN X Y W H OUT
//   parvis-gen noise WxH OUT [--seed S] [--gray]
//   parvis-gen scene WxH OUT [--seed S] [--kind capsules|natural] [--scale N]
//                            [--template TPL_OUT] [--template-size WxH]
//
// No floating point anywhere: value noise, shading and geometry are fixed point, so the
// result does not depend on libm or on how a compiler contracts float expressions.
//
// The generator's parts, one file per family (all in namespace parvis::gen, declared in gen.hpp):
//   gen_images.cpp    noise, grey maps, gradient, flat and all-colours images
//   gen_natural.cpp   the natural-looking aerial scene (fixed-point value noise)
//   gen_capsules.cpp  the capsule line scene and its templates
//   gen_video.cpp     the Y4M writer and the production line clip
//   gen_testdata.cpp  the sample and test data sets
// This file: output helpers, the subcommands and main.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/output.hpp"
#include "image_io.hpp"

#include "gen.hpp"

namespace parvis::gen {


[[noreturn]] void die(const Status& s) {
  std::fprintf(stderr, "parvis-gen: %s\n", s.message.c_str());
  std::exit(s.code == kExitOk ? kExitRuntime : s.code);
}

std::string join_path(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

void write_image(const std::string& dir, const std::string& name, const Image& img) {
  const std::string path = join_path(dir, name);
  Status s = image_write(path, img);
  if (!s.ok()) die(s);
  std::printf("wrote %s (%dx%d, %s)\n", path.c_str(), img.width, img.height,
              img.channels == 1 ? "grey" : "RGB");
}

// mkdir -p
Status make_dirs(const std::string& dir) {
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i < dir.size() && dir[i] != '/') continue;
    const std::string part = dir.substr(0, i);
    if (::mkdir(part.c_str(), 0777) != 0 && errno != EEXIST)
      return Status::bad_input("cannot create directory " + part + ": " + std::strerror(errno));
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::bad_input(dir + " is not a directory");
  return Status::Ok();
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes, const std::string& what) {
  Status s = write_file_atomic(path, bytes.data(), bytes.size());
  if (!s.ok()) die(s);
  std::printf("wrote %s (%s)\n", path.c_str(), what.c_str());
}

namespace {

// ------------------------------------------------------------------ subcommands

const char kUsage[] =
    "usage: parvis-gen COMMAND ...   deterministic test and sample images (own PRNG, integers only)\n"
    "\n"
    "  parvis-gen samples DIR        the committed samples: capsules.bmp (800x500),\n"
    "                                capsule_template.bmp, capsule_empty_template.bmp,\n"
    "                                capsules_small.bmp (320x200), capsules_small_template.bmp\n"
    "  parvis-gen testdata DIR       every input of the test cases (noise, odd sizes, flat,\n"
    "                                gradient, blur maps, capsule scenes, capsules.y4m,\n"
    "                                the production line clips line*.y4m)\n"
    "  parvis-gen crop IN X Y W H OUT   cut a rectangle (must lie inside IN)\n"
    "  parvis-gen noise WxH OUT [--seed S] [--gray]   uniform noise 0..255 per channel\n"
    "  parvis-gen scene WxH OUT [--seed S] [--kind capsules|natural] [--scale N]\n"
    "                  [--template TPL_OUT] [--template-size WxH]\n"
    "                                a capsule line (template: a filled capsule, exact match)\n"
    "                                or a natural-looking aerial view (template cut from it,\n"
    "                                default 479x432 where it fits); prints where it was cut\n"
    "  parvis-gen mask WxH SHAPE OUT [--seed S] [--on V]   a grey template-matching mask:\n"
    "                                V (default 255) where a pixel counts, 0 elsewhere; SHAPE\n"
    "                                full, ring, disc, holes (random, ~1/3 out), dot (the\n"
    "                                centre pixel), corner (the top-left pixel), checker, zero\n"
    "  parvis-gen line WxH OUT.y4m [--frames N] [--scale N] [--speed PX] [--seed S]\n"
    "                  [--chroma 420|422|444|mono] [--range full|limited]\n"
    "                  [--template TPL_OUT] [--truth CSV_OUT]\n"
    "                                the production line video: one lane of capsules passing\n"
    "                                the camera, full and empty; the template (the capsule in\n"
    "                                the middle of frame 0) and the ground truth per frame\n"
    "\n"
    "The output format follows the extension (.bmp, .pgm, .ppm; .png with stb).\n"
    "Exit codes: 0 ok, 1 usage, 2 bad input, 3 runtime error.\n";

int usage_error(const std::string& msg) {
  const bool says_help = msg.find("--help") != std::string::npos;
  std::fprintf(stderr, "parvis-gen: %s%s\n", msg.c_str(), says_help ? "" : " (see parvis-gen --help)");
  return kExitUsage;
}

int cmd_crop(int argc, char** argv) {
  if (argc != 8) return usage_error("crop takes IN X Y W H OUT");
  int64_t v[4];
  for (int i = 0; i < 4; ++i) {
    Status s = parse_int(argv[3 + i], i < 2 ? 0 : 1, INT32_MAX, &v[i]);
    if (!s.ok()) return usage_error("crop: " + s.message);
  }
  Image in;
  Status s = image_read(argv[2], &in);
  if (!s.ok()) die(s);
  const Rect r{int(v[0]), int(v[1]), int(v[2]), int(v[3])};
  if (!inside(in, r))
    die(Status::bad_input("crop " + std::to_string(r.w) + "x" + std::to_string(r.h) + " at (" +
                          std::to_string(r.x) + "," + std::to_string(r.y) + ") does not lie inside " +
                          std::to_string(in.width) + "x" + std::to_string(in.height) + " " +
                          argv[2]));
  s = image_write(argv[7], crop(in, r));
  if (!s.ok()) die(s);
  return kExitOk;
}

// Shared parsing of `noise` and `scene`: WxH OUT and options.
struct GenArgs {
  int w = 0, h = 0;
  std::string out;
  int seed = 1;
  bool gray = false;
  std::string kind = "capsules", tpl_out, tpl_size;
  int scale = 0;
};

int parse_gen_args(int argc, char** argv, bool scene, GenArgs* a, bool* help) {
  ArgParser p(scene ? "usage: parvis-gen scene WxH OUT [options]"
                    : "usage: parvis-gen noise WxH OUT [options]");
  p.option("--seed", &a->seed, "S", "PRNG seed (default 1)");
  if (scene) {
    p.option("--kind", &a->kind, "K", "capsules (default) or natural");
    p.option("--scale", &a->scale, "N", "capsule size: 1 = 42x22 px (default: min(W,H)/250)");
    p.option("--template", &a->tpl_out, "FILE", "also write a template cut from the scene");
    p.option("--template-size", &a->tpl_size, "WxH", "template size (natural scene only)");
  } else {
    p.flag("--gray", &a->gray, "one grey channel instead of RGB");
  }
  std::vector<std::string> pos;
  Status s = p.parse(argc, argv, 2, &pos);
  if (!s.ok()) return usage_error(s.message);
  if (p.help_requested()) {
    std::fputs(p.help_text().c_str(), stdout);
    *help = true;
    return kExitOk;
  }
  if (pos.size() != 2) return usage_error(std::string(argv[1]) + " takes WxH OUT");
  s = parse_size(pos[0], &a->w, &a->h);
  if (!s.ok()) return usage_error(s.message);
  a->out = pos[1];
  if (a->seed < 0) return usage_error("--seed must not be negative");
  if (scene && a->kind != "capsules" && a->kind != "natural")
    return usage_error("--kind must be capsules or natural");
  if (scene && a->scale < 0) return usage_error("--scale must be positive");
  if (scene && !a->tpl_size.empty() && a->kind != "natural")
    return usage_error("--template-size is for --kind natural");
  s = check_image_size(a->w, a->h, 3);
  if (!s.ok()) die(s);
  return kExitOk;
}

int cmd_noise(int argc, char** argv) {
  GenArgs a;
  bool help = false;
  if (int rc = parse_gen_args(argc, argv, false, &a, &help); rc != kExitOk || help) return rc;
  Status s = image_write(a.out, noise_image(a.w, a.h, a.gray ? 1 : 3, uint64_t(a.seed)));
  if (!s.ok()) die(s);
  return kExitOk;
}

// parvis-gen mask WxH SHAPE OUT [--seed S] [--on V]: integer geometry only (squared radii).
int cmd_mask(int argc, char** argv) {
  if (argc < 5) return usage_error("mask takes WxH SHAPE OUT [--seed S] [--on V]");
  int w = 0, h = 0;
  Status s = parse_size(argv[2], &w, &h);
  if (!s.ok()) return usage_error(s.message);
  const std::string shape = argv[3], out = argv[4];
  int64_t seed = 1, on = 255;
  for (int i = 5; i < argc; i += 2) {
    const std::string opt = argv[i];
    if (i + 1 >= argc) return usage_error(opt + " needs a value");
    if (opt == "--seed") s = parse_int(argv[i + 1], 0, INT64_MAX, &seed);
    else if (opt == "--on") s = parse_int(argv[i + 1], 1, 255, &on);
    else return usage_error("unknown option '" + opt + "'");
    if (!s.ok()) return usage_error(opt + ": " + s.message);
  }
  Image m = alloc_or_die(w, h, 1);
  // Twice the offset from the centre, so that even sizes stay symmetric in integers.
  const int64_t r_out = int64_t(std::min(w, h)) * int64_t(std::min(w, h));  // (2r)^2, r = min/2
  Rng rng{uint64_t(seed)};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int64_t dx = 2 * int64_t(x) + 1 - w, dy = 2 * int64_t(y) + 1 - h, d2 = dx * dx + dy * dy;
      bool c;
      if (shape == "full") c = true;
      else if (shape == "zero") c = false;
      else if (shape == "disc") c = d2 <= r_out;
      else if (shape == "ring") c = d2 <= r_out && 4 * d2 >= r_out;  // radii r/2 .. r
      else if (shape == "holes") c = rng.next() % 3 != 0;
      else if (shape == "dot") c = x == w / 2 && y == h / 2;
      else if (shape == "corner") c = x == 0 && y == 0;
      else if (shape == "checker") c = ((x / 3) + (y / 3)) % 2 == 0;
      else return usage_error("unknown mask shape '" + shape + "' (full, ring, disc, holes, dot, corner, checker, zero)");
      m.row(y)[x] = c ? uint8_t(on) : 0;
    }
  s = image_write(out, m);
  if (!s.ok()) die(s);
  return kExitOk;
}

int cmd_scene(int argc, char** argv) {
  GenArgs a;
  bool help = false;
  if (int rc = parse_gen_args(argc, argv, true, &a, &help); rc != kExitOk || help) return rc;
  if (a.kind == "capsules") {
    const int scale = a.scale > 0 ? a.scale : std::max(1, std::min(a.w, a.h) / 250);
    Image img;
    if (a.tpl_out.empty()) {
      CapsuleScene sc;
      sc.width = a.w, sc.height = a.h, sc.scale = scale, sc.seed = uint64_t(a.seed);
      img = render_capsules(sc, nullptr);
    } else {
      const CapsuleSet set = make_capsule_set(a.w, a.h, scale, uint64_t(a.seed));
      img = set.image;
      Status s = image_write(a.tpl_out, set.full_tpl);
      if (!s.ok()) die(s);
      std::printf("template %s: %dx%d at x=%d y=%d (a filled capsule; exact, unique match)\n",
                  a.tpl_out.c_str(), set.full_at.w, set.full_at.h, set.full_at.x, set.full_at.y);
    }
    Status s = image_write(a.out, img);
    if (!s.ok()) die(s);
    return kExitOk;
  }
  const Image img = render_natural(a.w, a.h, uint64_t(a.seed));
  if (!a.tpl_out.empty()) {
    int tw = std::min(479, a.w), th = std::min(432, a.h);
    if (!a.tpl_size.empty()) {
      Status s = parse_size(a.tpl_size, &tw, &th);
      if (!s.ok()) return usage_error(s.message);
      if (tw > a.w || th > a.h) die(Status::bad_input("--template-size is larger than the scene"));
    }
    // Somewhere away from the edges, chosen by the seed.
    Rng rng(hash_at(uint64_t(a.seed), 0x79E));
    const Rect r{int(rng.below(uint32_t(a.w - tw + 1))), int(rng.below(uint32_t(a.h - th + 1))),
                 tw, th};
    Status s = image_write(a.tpl_out, crop(img, r));
    if (!s.ok()) die(s);
    std::printf("template %s: %dx%d at x=%d y=%d\n", a.tpl_out.c_str(), tw, th, r.x, r.y);
  }
  Status s = image_write(a.out, img);
  if (!s.ok()) die(s);
  return kExitOk;
}

int cmd_line(int argc, char** argv) {
  LineClip clip;
  std::string chroma = "420", range = "full", tpl_out, truth_out;
  int seed = int(clip.seed), scale = 0;
  ArgParser p("usage: parvis-gen line WxH OUT.y4m [options]   the production line video (Y4M)");
  p.option("--frames", &clip.frames, "N", "how many frames (default 60)");
  p.option("--scale", &scale, "N", "capsule size: 1 = 42x22 px (default: H/88)");
  p.option("--speed", &clip.speed, "PX", "belt movement per frame at scale 1 (default 8)");
  p.option("--seed", &seed, "S", "PRNG seed (default 20250004, the test clip's)");
  p.option("--chroma", &chroma, "420|422|444|mono", "Y4M colour space (default 420: C420jpeg)");
  p.option("--range", &range, "full|limited", "YUV range, written as XCOLORRANGE (default full)");
  p.option("--template", &tpl_out, "FILE", "also write the template (the capsule in the middle of frame 0)");
  p.option("--truth", &truth_out, "FILE.csv", "also write the ground truth: frame,x,y,full per capsule in view");
  std::vector<std::string> pos;
  Status s = p.parse(argc, argv, 2, &pos);
  if (!s.ok()) return usage_error(s.message);
  if (p.help_requested()) {
    std::fputs(p.help_text().c_str(), stdout);
    return kExitOk;
  }
  if (pos.size() != 2) return usage_error("line takes WxH OUT.y4m");
  s = parse_size(pos[0], &clip.width, &clip.height);
  if (!s.ok()) return usage_error(s.message);
  if (clip.frames < 1 || clip.speed < 0 || seed < 0 || scale < 0) return usage_error("line: --frames, --speed, --seed, --scale must be positive");
  Y4mSpec spec;
  if (chroma == "422") spec = {"422", 2, 1, false};
  else if (chroma == "444") spec = {"444", 1, 1, false};
  else if (chroma == "mono") spec = {"mono", 1, 1, true};
  else if (chroma != "420") return usage_error("--chroma must be 420, 422, 444 or mono");
  if (range != "full" && range != "limited") return usage_error("--range must be full or limited");
  spec.range = range == "full" ? video::YuvRange::Full : video::YuvRange::Limited;
  clip.seed = uint64_t(seed);
  clip.scale = scale > 0 ? scale : std::max(1, clip.height / 88);
  clip.pitch = 120 * clip.scale;
  clip.speed *= clip.scale;
  s = check_image_size(clip.width, clip.height, 3);
  if (!s.ok()) die(s);
  std::vector<LineTruth> truth;
  Image tpl;
  std::vector<uint8_t> bytes;
  const std::string header = y4m_header_of(spec, clip.width, clip.height);
  bytes.insert(bytes.end(), header.begin(), header.end());
  const int frames = clip.frames;
  for (int f = 0; f < frames; ++f)
    append_y4m_frame(render_line_frame(clip, f, &tpl, &truth)[0], spec, &bytes);
  write_bytes(pos[1], bytes, std::to_string(frames) + " frames of " + pos[0] + ", C" + spec.colourspace);
  if (!tpl_out.empty()) {
    s = image_write(tpl_out, tpl);
    if (!s.ok()) die(s);
    std::printf("template %s: %dx%d at x=%d y=%d in frame 0\n", tpl_out.c_str(), tpl.width, tpl.height,
                truth.empty() ? 0 : truth[0].at.x, truth.empty() ? 0 : truth[0].at.y);
  }
  if (!truth_out.empty()) {
    const std::string csv = truth_csv(truth);
    write_bytes(truth_out, std::vector<uint8_t>(csv.begin(), csv.end()), "ground truth");
  }
  return kExitOk;
}

}  // namespace

}  // namespace parvis::gen

using namespace parvis;
using namespace parvis::gen;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  const std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (cmd == "samples" || cmd == "testdata") {
    if (argc != 3) return usage_error(cmd + " takes DIR");
    if (cmd == "samples") write_samples(argv[2]);
    else write_testdata(argv[2]);
    return kExitOk;
  }
  if (cmd == "crop") return cmd_crop(argc, argv);
  if (cmd == "noise") return cmd_noise(argc, argv);
  if (cmd == "scene") return cmd_scene(argc, argv);
  if (cmd == "line") return cmd_line(argc, argv);
  if (cmd == "mask") return cmd_mask(argc, argv);
  return usage_error("unknown command '" + cmd + "'");
}
