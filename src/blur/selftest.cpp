// Blur selftest: the shared tap sets, rounding and radial map, then hand-checked pixels
// run through the linked version's blur::apply.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "cli/cli.hpp"
#include "blur/blur.hpp"
#include "cli/selftest.hpp"

namespace parvis {

namespace {

Image noise_layer(int w, int h, uint32_t seed) {
  Image img;
  image_alloc(w, h, 1, &img);
  for (uint8_t& p : img.pixels) {
    seed = seed * 1664525u + 1013904223u;
    p = uint8_t(seed >> 24);
  }
  return img;
}

Image flat_map(int w, int h, uint8_t v) {
  Image map;
  image_alloc(w, h, 1, &map);
  for (uint8_t& p : map.pixels) p = v;
  return map;
}

void shared_parts(SelftestReport& r) {
  blur::TapSets ts;
  bool ok = blur::make_tap_sets(5, &ts).ok() && ts.radius == 15 && ts.side == 31;
  // Every set: symmetric in x, y and the diagonal, centre the largest (2^K, the same for
  // all sets), and the sums can never overflow: sum(tap) * 255 < 2^31.
  const int s = ts.side, c = ts.radius;
  for (int v = 1; v <= 255 && ok; ++v) {
    const int32_t* t = ts.set(v);
    const int32_t centre = t[c * s + c];
    int64_t sum = 0;
    for (int y = 0; y < s; ++y)
      for (int x = 0; x < s; ++x) {
        const int32_t tap = t[y * s + x];
        sum += tap;
        ok = ok && tap >= 0 && tap <= centre && tap == t[(s - 1 - y) * s + x] &&
             tap == t[y * s + (s - 1 - x)] && tap == t[x * s + y];
      }
    ok = ok && centre == ts.set(1)[c * s + c] && (centre & (centre - 1)) == 0 &&
         sum * 255 < (int64_t(1) << 31);
  }
  // A wider sigma spreads more: the tap next to the centre grows with v.
  ok = ok && ts.set(1)[c * s + c + 1] < ts.set(128)[c * s + c + 1] &&
       ts.set(128)[c * s + c + 1] < ts.set(255)[c * s + c + 1];
  r.check("blur tap sets (symmetric, centre 2^K largest, no overflow, wider with v)", ok);

  ok = blur::make_tap_sets(16, &ts).ok() && ts.radius == 48 && !blur::make_tap_sets(0, &ts).ok() &&
       !blur::make_tap_sets(16.5, &ts).ok() && !blur::make_tap_sets(1e-170, &ts).ok() &&
       !blur::make_tap_sets(0.0099, &ts).ok() && blur::make_tap_sets(0.01, &ts).ok() &&
       ts.radius == 1 && ts.set(1)[4] == (1 << ts.k) && ts.set(1)[3] == 0;
  r.check("blur sigma_max range [0.01, 16] (0.01: the smallest sets copy the pixel)", ok);

  // divide_round == floor((2 a + b) / 2b), i.e. half up.
  ok = true;
  for (uint32_t b : {1u, 2u, 3u, 7u, 64u, 65536u, 145036u})
    for (uint32_t a = 0; a <= 255 * b && ok; a += (b > 64 ? 97 : 1))
      ok = blur::divide_round(a, b) == (2 * uint64_t(a) + b) / (2 * uint64_t(b));
  r.check("blur divide_round rounds half up", ok);

  // Radial map: 0 at the centre of an odd image, 255 on the rim, rising from the centre.
  Image map;
  ok = blur::radial_map(9, 7, &map).ok() && map.at(4, 3)[0] == 0 && map.at(0, 0)[0] == 255 &&
       map.at(4, 0)[0] == 255 && map.at(4, 6)[0] == 255 && map.at(0, 3)[0] == 255;
  for (int x = 4; x < 8 && ok; ++x) ok = map.at(x, 3)[0] < map.at(x + 1, 3)[0] || map.at(x, 3)[0] == 255;
  // One pixel above the centre: d = 2 half pixels, r = 6, so v = floor(255 * 2 / 6) = 85.
  ok = ok && map.at(4, 2)[0] == 85;
  Image thin;
  ok = ok && blur::radial_map(5, 1, &thin).ok() && thin.at(2, 0)[0] == 255;
  r.check("blur radial map (sharp centre, rim 255, v = floor(255 d / r))", ok);
}

void blurs(SelftestReport& r) {
  blur::TapSets ts5;
  blur::make_tap_sets(5, &ts5);
  const std::vector<Image> layers = {noise_layer(23, 17, 1), noise_layer(23, 17, 2)};
  std::vector<Image> out;
  if (!r.expect_ok("blur all-zero map returns the input",
                   blur::apply(layers, flat_map(23, 17, 0), ts5, &out, nullptr)))
    return;
  r.check("blur all-zero map returns the input",
          out.size() == 2 && out[0].pixels == layers[0].pixels && out[1].pixels == layers[1].pixels);

  // sigma_max 1 (R = 3, K = 16), map 255 (sigma 1): taps round(65536 exp(-d^2/2)) are
  // 65536 (d^2 = 0), 39750 (1), 8869 (4). On the row [0 255 0], only in-bounds taps count:
  //   x = 1: 255*65536 / (39750 + 65536 + 39750) = 16711680 / 145036 = 115.2 -> 115
  //   x = 0: 255*39750 / (65536 + 39750 + 8869)  = 10136250 / 114155 = 88.8  -> 89
  blur::TapSets ts1;
  blur::make_tap_sets(1, &ts1);
  const int32_t* t = ts1.set(255);
  const int c = ts1.radius, s = ts1.side;
  r.check("blur taps for sigma 1 (hand-checked)", t[c * s + c] == 65536 && t[c * s + c + 1] == 39750 &&
                                                      t[c * s + c + 2] == 8869 &&
                                                      t[(c + 1) * s + c + 1] == 24109);
  Image row;
  image_alloc(3, 1, 1, &row);
  row.at(1, 0)[0] = 255;
  if (r.expect_ok("blur one row, sigma 1 (hand-checked)",
                  blur::apply({row}, flat_map(3, 1, 255), ts1, &out, nullptr))) {
    const uint8_t* o = out[0].row(0);
    r.check("blur one row, sigma 1 (hand-checked)", o[0] == 89 && o[1] == 115 && o[2] == 89,
            std::to_string(o[0]) + " " + std::to_string(o[1]) + " " + std::to_string(o[2]));
  }

  // A flat layer stays flat under any map (the weights are normalised), and layers are
  // independent: blurring [A, B] together equals blurring each alone.
  Image radial;
  blur::radial_map(23, 17, &radial);
  std::vector<Image> both, a_only, flat_out;
  const Image flat = flat_map(23, 17, 77);
  if (r.expect_ok("blur layers", blur::apply(layers, radial, ts5, &both, nullptr)) &&
      r.expect_ok("blur layers", blur::apply({layers[1]}, radial, ts5, &a_only, nullptr)) &&
      r.expect_ok("blur layers", blur::apply({flat}, radial, ts5, &flat_out, nullptr))) {
    r.check("blur layers are independent", both[1].pixels == a_only[0].pixels);
    r.check("blur keeps a flat layer flat", flat_out[0].pixels == flat.pixels);
  }
}

// This version's apply() against the contract's reference_pixel on noise: sizes that clip
// windows on every side and cut tiles short, sigma_max with k = 16 (split taps), 15, 13 and 9,
// radial and noise maps (with zeros), 1 to 9 layers. Bit for bit, or within the version's
// rounding tolerance (blur-v1/v2: +-1 on at most 2 % of the pixels).
void against_reference(SelftestReport& r) {
  struct Case {
    int width, height, layers;
    double sigma_max;
    bool noise_map;
  };
  const Case cases[] = {{1, 1, 1, 0.5, false}, {2, 3, 3, 4, true},   {37, 29, 9, 1.5, true},
                        {70, 33, 3, 4, false}, {23, 17, 1, 16, true}, {130, 5, 2, 2, true}};
  const int tolerance = blur::rounding_tolerance();
  for (const Case& c : cases) {
    const std::string name = "blur against the reference " + std::to_string(c.width) + "x" +
                             std::to_string(c.height) + " x" + std::to_string(c.layers) +
                             " sigma_max " + std::to_string(c.sigma_max).substr(0, 4) +
                             (c.noise_map ? " noise map" : " radial map");
    blur::TapSets taps;
    blur::make_tap_sets(c.sigma_max, &taps);
    std::vector<Image> layers;
    for (int l = 0; l < c.layers; ++l) layers.push_back(noise_layer(c.width, c.height, uint32_t(100 + l)));
    Image map;
    if (c.noise_map) {
      map = noise_layer(c.width, c.height, 7);
      for (size_t i = 0; i < map.pixels.size(); i += 5) map.pixels[i] = 0;  // some sharp pixels
    } else {
      blur::radial_map(c.width, c.height, &map);
    }
    std::vector<Image> out;
    if (!r.expect_ok(name, blur::apply(layers, map, taps, &out, nullptr))) continue;
    int worst = 0;
    size_t differ = 0, total = 0;
    for (int l = 0; l < c.layers; ++l)
      for (int y = 0; y < c.height; ++y)
        for (int x = 0; x < c.width; ++x, ++total) {
          const int d = std::abs(int(out[size_t(l)].at(x, y)[0]) -
                                 int(blur::reference_pixel(layers[size_t(l)], map, taps, x, y)));
          differ += d != 0;
          worst = std::max(worst, d);
        }
    r.check(name, worst <= tolerance && double(differ) <= std::ceil(0.02 * double(total)),
            std::to_string(differ) + " of " + std::to_string(total) + " pixels differ, max " +
                std::to_string(worst));
  }
}

}  // namespace

void selftest_blur(SelftestReport& r) {
  shared_parts(r);
  blurs(r);
  against_reference(r);
}

}  // namespace parvis
