// Filter selftest: the shared arithmetic (borders, rounding, the bank, kernel files) and
// small hand-checked convolutions run through the linked version's filter::apply.
#include <string>

#include "cli/cli.hpp"
#include "cli/selftest.hpp"
#include "filter/filter.hpp"

namespace parvis {

namespace {

using filter::Border;

Image grey_image(int w, int h, const std::vector<int>& px) {
  Image img;
  image_alloc(w, h, 1, &img);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img.at(x, y)[0] = uint8_t(px[size_t(y) * w + x]);
  return img;
}

// A small deterministic noise image (an LCG), so flat data cannot hide wrong arithmetic.
Image noise_image(int w, int h, int channels, uint32_t seed) {
  Image img;
  image_alloc(w, h, channels, &img);
  for (uint8_t& p : img.pixels) {
    seed = seed * 1664525u + 1013904223u;
    p = uint8_t(seed >> 24);
  }
  return img;
}

// "" when equal, else where the first difference is.
std::string compare(const Image& got, const Image& want) {
  if (got.width != want.width || got.height != want.height || got.channels != want.channels)
    return "shape differs";
  for (int y = 0; y < want.height; ++y)
    for (int x = 0; x < want.width; ++x)
      for (int c = 0; c < want.channels; ++c)
        if (got.at(x, y)[c] != want.at(x, y)[c])
          return "at (" + std::to_string(x) + "," + std::to_string(y) + ") channel " +
                 std::to_string(c) + ": got " + std::to_string(got.at(x, y)[c]) + ", want " +
                 std::to_string(want.at(x, y)[c]);
  return "";
}

// Runs the filter and compares with `want`; false when the version lacks it.
bool check_filter(SelftestReport& r, const std::string& name, const Image& in,
                  const filter::Kernel& k, Border border, const Image& want) {
  Image out;
  const Status s = filter::apply(in, k, border, filter::tuning_from_config(), &out, nullptr);
  if (!r.expect_ok(name, s)) return false;
  const std::string diff = compare(out, want);
  r.check(name, diff.empty(), diff);
  return true;
}

filter::Kernel bank(const std::string& name, int size) {
  filter::Kernel k;
  filter::builtin_kernel(name, size, &k);
  return k;
}

void shared_arithmetic(SelftestReport& r) {
  // Borders: n = 3 is 0 1 2; reflect101 folds ..2 1 | 0 1 2 | 1 0 1 2.., also twice over.
  bool ok = true;
  const int reflect3[][2] = {{-1, 1}, {-2, 2}, {-3, 1}, {-4, 0}, {3, 1}, {4, 0}, {5, 1}, {6, 2}};
  for (auto& p : reflect3) ok = ok && filter::border_index(p[0], 3, Border::Reflect101) == p[1];
  ok = ok && filter::border_index(-1, 2, Border::Reflect101) == 1 &&
       filter::border_index(2, 2, Border::Reflect101) == 0 &&
       filter::border_index(-2, 1, Border::Reflect101) == 0 &&
       filter::border_index(-2, 5, Border::Replicate) == 0 &&
       filter::border_index(7, 5, Border::Replicate) == 4 &&
       filter::border_index(-1, 5, Border::Zero) == -1 &&
       filter::border_index(5, 5, Border::Zero) == -1 &&
       filter::border_index(4, 5, Border::Zero) == 4;
  r.check("filter border_index (zero, replicate, reflect101 incl. sides of 1 and 2)", ok);

  // round_clamp == clamp(floor((2 sum + d) / 2d), 0, 255) with floor division.
  ok = true;
  std::string detail;
  for (int d : {1, 2, 3, 8, 9, 16, 25, 256, 1000}) {
    for (int sum = -3000; sum <= 70000 && ok; ++sum) {
      const int64_t n = 2 * int64_t(sum) + d, m = 2 * int64_t(d);
      int64_t q = n / m;
      if (n % m != 0 && n < 0) --q;
      const int want = int(q < 0 ? 0 : q > 255 ? 255 : q);
      if (filter::round_clamp(sum, d) != want) {
        ok = false;
        detail = "sum " + std::to_string(sum) + " / " + std::to_string(d);
      }
    }
  }
  r.check("filter round_clamp = floor((2 sum + d) / 2d), clamped", ok, detail);

  // The bank: every kernel keeps flat areas (taps sum to the divisor), edge sums to 0.
  ok = true;
  for (const char* name : {"identity", "sharpen", "edge", "gaussian", "box", "unsharp"})
    for (int size : {3, 5}) {
      filter::Kernel k;
      if (!filter::builtin_kernel(name, size, &k).ok() || !filter::check_kernel(k).ok()) {
        ok = false;
        continue;
      }
      int64_t sum = 0;
      for (int32_t t : k.taps) sum += t;
      ok = ok && k.size == size && sum == (std::string(name) == "edge" ? 0 : k.divisor);
    }
  const filter::Kernel u5 = bank("unsharp", 5);
  ok = ok && u5.divisor == 256 && u5.taps[12] == 476 && u5.taps[0] == -1 && u5.taps[7] == -24;
  r.check("filter kernel bank (sums; unsharp 5x5 = -1/256 gaussian with centre -476)", ok);

  filter::Kernel k;
  ok = filter::parse_kernel_text("# a blur\n1 2 1\n2 4 2\n1 2 1\n\n16\n", &k).ok() &&
       k.size == 3 && k.divisor == 16 && k.taps == bank("gaussian", 3).taps;
  ok = ok && filter::parse_kernel_text("7\n2\n", &k).ok() && k.size == 1 && k.taps[0] == 7;
  ok = ok && !filter::parse_kernel_text("1 2\n3 4\n1\n", &k).ok();         // even side
  ok = ok && !filter::parse_kernel_text("1 2 1\n2 4\n1 2 1\n16\n", &k).ok();  // ragged row
  ok = ok && !filter::parse_kernel_text("1 1 1\n1 1 1\n1 1 1\n0\n", &k).ok();  // divisor 0
  ok = ok && !filter::parse_kernel_text("1 1 1\n1 x 1\n1 1 1\n9\n", &k).ok();  // not a number
  ok = ok && !filter::parse_kernel_text("1 1 1\n1 1 1\n1 1 1\n", &k).ok();  // no divisor line
  ok = ok && !filter::parse_kernel_text("9000000\n1\n", &k).ok();  // |tap| * 255 > 2^30
  r.check("filter kernel file parsing (good and bad files)", ok);
}

void convolutions(SelftestReport& r) {
  // Identity returns its input, whatever the border and size.
  const Image noise = noise_image(7, 5, 3, 42);
  for (int size : {3, 5})
    for (Border b : {Border::Zero, Border::Replicate, Border::Reflect101})
      if (!check_filter(r, "filter identity " + std::to_string(size) + "x" + std::to_string(size) +
                               " " + filter::border_name(b) + " returns the input",
                        noise, bank("identity", size), b, noise))
        return;  // the version has no filter: one skip is enough

  // Gaussian 3x3 on [10 20 30; 40 50 60; 70 80 90], by hand:
  //   zero, (0,0): (4*10 + 2*20 + 2*40 + 50) / 16 = 210/16 = 13.1 -> 13
  //   zero, (1,0): (2*10 + 4*20 + 2*30 + 40 + 2*50 + 60) / 16 = 360/16 = 22.5 -> 23 (half up)
  //   replicate, (0,0): rows 10 10 20 | 10 10 20 | 40 40 50 -> 320/16 = 20
  //   reflect101, (0,0): rows 50 40 50 | 20 10 20 | 50 40 50 -> 480/16 = 30
  //   the centre is 800/16 = 50 for every border.
  const Image patch = grey_image(3, 3, {10, 20, 30, 40, 50, 60, 70, 80, 90});
  const filter::Kernel g3 = bank("gaussian", 3);
  check_filter(r, "filter gaussian 3x3 zero border (hand-checked)", patch, g3, Border::Zero,
               grey_image(3, 3, {13, 23, 21, 33, 50, 43, 36, 53, 43}));
  check_filter(r, "filter gaussian 3x3 replicate border (hand-checked)", patch, g3,
               Border::Replicate, grey_image(3, 3, {20, 28, 35, 43, 50, 58, 65, 73, 80}));
  check_filter(r, "filter gaussian 3x3 reflect101 border (hand-checked)", patch, g3,
               Border::Reflect101, grey_image(3, 3, {30, 35, 40, 45, 50, 55, 60, 65, 70}));

  // Sharpen 3x3 (centre 5, cross -1), zero border: negative sums clamp to 0, e.g. (1,1) is
  // 5*10 - 4*200 = -750 -> 0; large ones to 255, e.g. (1,0) is 5*200 - 10 = 990 -> 255;
  // (3,1) is 5*100 - 90 - 200 - 120 = 90.
  check_filter(r, "filter sharpen 3x3 negative sums and clamping (hand-checked)",
               grey_image(4, 3, {0, 200, 0, 90, 200, 10, 200, 100, 0, 200, 0, 120}),
               bank("sharpen", 3), Border::Zero,
               grey_image(4, 3, {0, 255, 0, 255, 255, 0, 255, 90, 0, 255, 0, 255}));

  // Unsharp 5x5 on a 5x4 patch, reflect101 (radius 2 folds past a 4-pixel side) and zero:
  // computed independently, in exact integers.
  const Image u = grey_image(5, 4, {12, 40, 7,  90, 33, 200, 5, 60, 61, 0,
                                    9,  250, 128, 30, 77, 14, 3, 99, 180, 46});
  check_filter(r, "filter unsharp 5x5 reflect101 on 5x4", u, bank("unsharp", 5), Border::Reflect101,
               grey_image(5, 4, {0, 16, 0, 130, 18, 255, 0, 52, 63, 0,
                                 0, 255, 165, 0, 85, 0, 0, 97, 255, 12}));
  check_filter(r, "filter unsharp 5x5 zero border on 5x4", u, bank("unsharp", 5), Border::Zero,
               grey_image(5, 4, {0, 45, 0, 148, 45, 255, 0, 55, 70, 0,
                                 0, 255, 173, 0, 113, 0, 0, 131, 255, 54}));

  // A 1x1 image with a 5x5 kernel: replicate and reflect101 see only the pixel, so a
  // kernel summing to its divisor returns it; zero sees 36/256 of it (the centre tap).
  const Image one = grey_image(1, 1, {200});
  check_filter(r, "filter gaussian 5x5 on 1x1, reflect101", one, bank("gaussian", 5),
               Border::Reflect101, one);
  check_filter(r, "filter box 5x5 on 1x1, replicate", one, bank("box", 5), Border::Replicate, one);
  check_filter(r, "filter gaussian 5x5 on 1x1, zero: 200*36/256 = 28.1 -> 28", one,
               bank("gaussian", 5), Border::Zero, grey_image(1, 1, {28}));

  // RGB is filtered per channel: each channel equals the grey filtering of that channel.
  Image rgb_out;
  const filter::Kernel e5 = bank("edge", 5);
  const filter::FilterTuning tuning = filter::tuning_from_config();
  if (r.expect_ok("filter RGB per channel", filter::apply(noise, e5, Border::Replicate, tuning, &rgb_out, nullptr))) {
    std::string diff;
    for (int c = 0; c < 3 && diff.empty(); ++c) {
      Image plane, plane_out;
      image_alloc(noise.width, noise.height, 1, &plane);
      for (int y = 0; y < noise.height; ++y)
        for (int x = 0; x < noise.width; ++x) plane.at(x, y)[0] = noise.at(x, y)[c];
      filter::apply(plane, e5, Border::Replicate, tuning, &plane_out, nullptr);
      for (int y = 0; y < noise.height && diff.empty(); ++y)
        for (int x = 0; x < noise.width; ++x)
          if (rgb_out.at(x, y)[c] != plane_out.at(x, y)[0]) {
            diff = "channel " + std::to_string(c) + " at (" + std::to_string(x) + "," +
                   std::to_string(y) + ")";
            break;
          }
    }
    r.check("filter RGB per channel", diff.empty(), diff);
  }
}

// Custom kernels that reach each exact path of the fast versions (see filter_exact.cases).
std::vector<filter::Kernel> custom_kernels() {
  std::vector<filter::Kernel> out;
  const char* texts[] = {
      "-1 -2 -1\n0 7 0\n2 1 -3\n3\n",                                  // negative, divisor 3
      "1 -20 31 -20 1\n5 120 -300 120 5\n-7 300 600 300 -7\n5 120 -300 120 5\n1 -20 31 -20 2\n1000\n",
      "0 -32896 0\n32639 100 -5\n1 2 3\n65537\n",                       // two s8 planes' limits
      "1 -3 1\n2 40000 2\n1 -3 1\n40001\n",                             // beyond two planes
      "3\n2\n",                                                           // 1x1
      "100 200 100\n200 65000 200\n100 200 100\n65536\n",               // 2^16 divisor
  };
  for (const char* t : texts) {
    filter::Kernel k;
    if (filter::parse_kernel_text(t, &k).ok()) out.push_back(k);
  }
  for (int size : {7, 15}) {  // two k-chunks on RGB in cuda-opt
    filter::Kernel k;
    k.name = "custom";
    k.size = size;
    for (int i = 0; i < size * size; ++i) k.taps.push_back(i % 5 - 2);
    k.divisor = size == 7 ? 7 : 97;
    out.push_back(k);
  }
  return out;
}

// The tunings held against the default: every other variant of this version, and each kept
// value of cuda-opt's sep fields (FilterTuning): the register kernel, which is the only one
// below compute capability 8.0, and strips of 7 rows (not a multiple of K) in both kernels.
std::vector<filter::FilterTuning> tunings_to_check() {
  const std::vector<std::string> names = filter::variant_names();
  std::vector<filter::FilterTuning> out;
  for (size_t v = 1; v < names.size(); ++v) {
    filter::FilterTuning t;
    t.variant = names[v];
    out.push_back(t);
    if (names[v] != "sep") continue;
    t.sep_async = 0;
    out.push_back(t);
    t.sep_rows = 7;
    out.push_back(t);
    t.sep_async = -1;
    out.push_back(t);
  }
  return out;
}

// Every tuning of tunings_to_check gives apply()'s bytes, through the prepared filter, on the
// bank, the custom kernels above, every border, grey and RGB, tiny and odd sizes.
void variants(SelftestReport& r) {
  const std::vector<filter::FilterTuning> tunings = tunings_to_check();
  const filter::FilterTuning base = filter::tuning_from_config();  // apply()'s, as the CLI runs it
  std::vector<filter::Kernel> kernels = custom_kernels();
  for (const char* name : {"identity", "sharpen", "edge", "gaussian", "box", "unsharp"})
    for (int size : {3, 5}) kernels.push_back(bank(name, size));
  const Image images[] = {noise_image(37, 11, 3, 7), noise_image(131, 5, 1, 8),
                          noise_image(2, 3, 3, 9), noise_image(1, 1, 1, 10)};
  for (const filter::FilterTuning& t : tunings) {
    std::string diff;
    int runs = 0, refused = 0;
    for (const Image& img : images)
      for (const filter::Kernel& k : kernels)
        for (Border b : {Border::Zero, Border::Replicate, Border::Reflect101}) {
          if (!diff.empty()) break;
          Image want, got;
          Status s = filter::apply(img, k, b, base, &want, nullptr);
          if (!s.ok()) {
            diff = "apply: " + s.message;
            break;
          }
          filter::FilterPtr f;
          s = filter::filter_create(k, b, img.width, img.height, img.channels, t, &f);
          if (s.code == kExitBadInput) {  // a path this kernel or device cannot take
            ++refused;
            continue;
          }
          if (s.ok()) s = filter::filter_run(f.get(), img, &got, nullptr);
          ++runs;
          if (!s.ok()) diff = s.message;
          else if (!(diff = compare(got, want)).empty())
            diff = std::to_string(k.size) + "x" + std::to_string(k.size) + " /" +
                   std::to_string(k.divisor) + " " + filter::border_name(b) + " on " +
                   std::to_string(img.width) + "x" + std::to_string(img.height) + "x" +
                   std::to_string(img.channels) + ": " + diff;
        }
    r.check("filter " + t.describe() + " equals the default (" + std::to_string(runs) +
                " runs" + (refused ? ", " + std::to_string(refused) + " kernels it does not take" : "") + ")",
            diff.empty(), diff);
  }
}

}  // namespace

void selftest_filter(SelftestReport& r) {
  shared_arithmetic(r);
  convolutions(r);
  variants(r);
}

}  // namespace parvis
