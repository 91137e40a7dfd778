// parvis-gen's file sets: the committed samples (`samples`) and every test input (`testdata`).

#include "gen.hpp"

namespace parvis::gen {

namespace {

// The seeds of the committed and test pictures: change one and the pinned test hashes change.
constexpr uint64_t kSeedCapsules = 20250001;
constexpr uint64_t kSeedSmall = 20250002;
constexpr uint64_t kSeed720p = 20250003;

// capsules_small.bmp is frame 0 of capsules.y4m before the conversion to YCbCr.
constexpr int kVideoW = 320, kVideoH = 200, kVideoFrames = 12, kVideoSpeed = 5;

void write_video(const std::string& path) {
  const Y4mSpec spec;  // C420jpeg, full range, tagged
  std::vector<uint8_t> bytes;
  const std::string header = y4m_header_of(spec, kVideoW, kVideoH);
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (int f = 0; f < kVideoFrames; ++f) {
    CapsuleScene sc;
    sc.width = kVideoW, sc.height = kVideoH, sc.scale = 1, sc.seed = kSeedSmall;
    sc.belt_shift = f * kVideoSpeed;
    sc.frame = f;
    append_y4m_frame(render_capsules(sc, nullptr), spec, &bytes);
  }
  write_bytes(path, bytes, std::to_string(kVideoW) + "x" + std::to_string(kVideoH) + ", " +
                               std::to_string(kVideoFrames) + " frames, C420jpeg full range");
}

}  // namespace

void write_samples(const std::string& dir) {
  Status s = make_dirs(dir);
  if (!s.ok()) die(s);
  const CapsuleSet big = make_capsule_set(800, 500, 2, kSeedCapsules);
  write_image(dir, "capsules.bmp", big.image);
  write_image(dir, "capsule_template.bmp", big.full_tpl);
  write_image(dir, "capsule_empty_template.bmp", big.empty_tpl);
  describe_capsules("capsules.bmp", big);
  const CapsuleSet small = make_capsule_set(kVideoW, kVideoH, 1, kSeedSmall);
  write_image(dir, "capsules_small.bmp", small.image);
  write_image(dir, "capsules_small_template.bmp", small.full_tpl);
  describe_capsules("capsules_small.bmp", small);
}

// The test clips: line.y4m (4:2:0, full range) and the same frames in every layout the
// reader knows, raw RGB and grey, the template and the ground truth; an odd-sized clip.
void write_line_testdata(const std::string& dir) {
  const LineClip clip;
  Image tpl;
  std::vector<LineTruth> truth;
  const std::vector<Image> frames = render_line(clip, &tpl, &truth);
  write_image(dir, "line_template.bmp", tpl);
  const std::string csv = truth_csv(truth);
  write_bytes(join_path(dir, "line_truth.csv"), std::vector<uint8_t>(csv.begin(), csv.end()),
              std::to_string(truth.size()) + " capsules in view");
  struct Variant {
    const char* name;
    Y4mSpec spec;
  };
  using video::YuvRange;
  const Variant variants[] = {
      {"line.y4m", {"420jpeg", 2, 2, false, YuvRange::Full, true}},
      {"line_422.y4m", {"422", 2, 1, false, YuvRange::Limited, true}},
      {"line_411.y4m", {"411", 4, 1, false, YuvRange::Limited, true}},
      {"line_444.y4m", {"444", 1, 1, false, YuvRange::Full, true}},
      {"line_mono.y4m", {"mono", 1, 1, true, YuvRange::Full, true}},
      {"line_limited.y4m", {"420mpeg2", 2, 2, false, YuvRange::Limited, false}},  // untagged
  };
  for (const Variant& v : variants)
    write_bytes(join_path(dir, v.name), line_y4m(frames, v.spec),
                std::to_string(frames.size()) + " frames, C" + v.spec.colourspace);
  std::vector<uint8_t> rgb, gray;
  for (const Image& f : frames) {
    rgb.insert(rgb.end(), f.pixels.begin(), f.pixels.end());
    const Image g = to_gray(f);
    gray.insert(gray.end(), g.pixels.begin(), g.pixels.end());
  }
  write_bytes(join_path(dir, "line.rgb"), rgb, "raw rgb24");
  write_bytes(join_path(dir, "line.gray"), gray, "raw gray");
  // Raw yuv420p (limited): the Y4M frames without their header and FRAME lines.
  std::vector<uint8_t> yuv;
  const Y4mSpec raw420{"420", 2, 2, false, YuvRange::Limited, false};
  for (const Image& f : frames) {
    std::vector<uint8_t> one;
    append_y4m_frame(f, raw420, &one);
    yuv.insert(yuv.end(), one.begin() + 6, one.end());
  }
  write_bytes(join_path(dir, "line.yuv"), yuv, "raw yuv420p, limited range");

  // Noise straight into the planes (every Y, Cb, Cr value, no structure): the conversion's
  // test, pinned by video.cases and checked against numpy by tests/video_yuv_reference.py.
  auto noise_y4m = [&](const std::string& name, const std::string& header, size_t frame_bytes, int frames, uint64_t seed) {
    std::vector<uint8_t> bytes(header.begin(), header.end());
    Rng rng(seed);
    for (int f = 0; f < frames; ++f) {
      static const char kFrame[] = "FRAME\n";
      bytes.insert(bytes.end(), kFrame, kFrame + 6);
      for (size_t i = 0; i < frame_bytes; ++i) bytes.push_back(uint8_t(rng.next() >> 56));
    }
    write_bytes(join_path(dir, name), bytes, "YUV noise");
  };
  noise_y4m("yuv_noise_1027x769_420.y4m", "YUV4MPEG2 W1027 H769 F25:1 C420jpeg XCOLORRANGE=LIMITED\n",
            1027 * 769 + 2 * 514 * 385, 2, 108);
  noise_y4m("yuv_noise_333x111_444.y4m", "YUV4MPEG2 W333 H111 F25:1 C444 XCOLORRANGE=FULL\n", 333 * 111 * 3, 1, 109);

  LineClip odd;
  odd.width = 161, odd.height = 87, odd.frames = 6;
  write_bytes(join_path(dir, "line_odd.y4m"),
              line_y4m(render_line(odd, nullptr, nullptr), {"420", 2, 2, false, YuvRange::Limited, false}),
              "161x87, C420, odd chroma sizes");
}

void write_testdata(const std::string& dir) {
  Status s = make_dirs(dir);
  if (!s.ok()) die(s);
  const Image noise_big = noise_image(1027, 769, 3, 101);
  write_image(dir, "noise_1027x769.bmp", noise_big);
  write_image(dir, "noise_1027x769_tpl.bmp", crop(noise_big, {101, 57, 37, 23}));
  write_image(dir, "noise_1027x769_gray.pgm", noise_image(1027, 769, 1, 102));
  write_image(dir, "noise_1x1.bmp", noise_image(1, 1, 3, 103));
  write_image(dir, "noise_3x2.bmp", noise_image(3, 2, 3, 104));
  const Image noise_vga = noise_image(640, 480, 3, 105);
  write_image(dir, "noise_640x480.bmp", noise_vga);
  write_image(dir, "noise_640x480_tpl16.bmp", crop(noise_vga, {200, 100, 16, 16}));
  write_image(dir, "noise_31x17.bmp", noise_image(31, 17, 3, 106));
  write_image(dir, "gradient_257x129.bmp", gradient_image(257, 129));
  write_image(dir, "flat_64x48.bmp", flat_image(64, 48, 1, {128, 128, 128}));
  write_image(dir, "flat_rgb_33x21.bmp", flat_image(33, 21, 3, {200, 120, 40}));
  write_image(dir, "map_radial_257x129.pgm", radial_map(257, 129));
  write_image(dir, "map_noise_257x129.pgm", noise_map(257, 129, 107));
  write_image(dir, "all_colours_4096x4096.bmp", all_colours_image());

  const CapsuleSet big = make_capsule_set(800, 500, 2, kSeedCapsules);
  write_image(dir, "capsules.bmp", big.image);
  write_image(dir, "capsule_template.bmp", big.full_tpl);
  write_image(dir, "capsule_empty_template.bmp", big.empty_tpl);
  const CapsuleSet small = make_capsule_set(kVideoW, kVideoH, 1, kSeedSmall);
  write_image(dir, "capsules_small.bmp", small.image);
  write_image(dir, "capsules_small_template.bmp", small.full_tpl);
  const CapsuleSet hd = make_capsule_set(1280, 720, 2, kSeed720p);
  write_image(dir, "capsules_720p.bmp", hd.image);
  write_image(dir, "capsules_720p_template.bmp", hd.full_tpl);
  describe_capsules("capsules_720p.bmp", hd);
  write_video(join_path(dir, "capsules.y4m"));
  write_line_testdata(dir);

  // A directory of sources for `match --sources` (issue 14): odd and different sizes, two of
  // 333x251 (the template's plan reused), grey and colour, BMP, PGM and PPM.
  const std::string batch = join_path(dir, "batch_sources");
  s = make_dirs(batch);
  if (!s.ok()) die(s);
  write_image(batch, "a_noise_333x251.bmp", crop(noise_big, {0, 0, 333, 251}));
  write_image(batch, "b_noise_333x251.pgm", noise_image(333, 251, 1, 108));
  write_image(batch, "c_noise_640x480.bmp", noise_vga);
  write_image(batch, "d_gradient_257x129.bmp", gradient_image(257, 129));
  write_image(batch, "e_noise_401x177.ppm", crop(noise_big, {17, 9, 401, 177}));
}

}  // namespace parvis::gen
