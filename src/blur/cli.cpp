// ./main blur IN OUT [IN2 OUT2 ...] [--map MAP | --radial] [--sigma-max S] [--json]
// Every input is cut into grey layers (its channels), all layers of all inputs are
// blurred in one call with the one shared map (the seed's batch of layers), and each
// output is put back together from its layers.
#include <cstdio>

#include "cli/cli.hpp"
#include "blur/blur.hpp"
#include "common/output.hpp"
#include "cli/subcommands.hpp"
#include "image_io.hpp"

namespace parvis {

namespace {

std::string size_text(const Image& img) {
  return std::to_string(img.width) + "x" + std::to_string(img.height);
}

}  // namespace

int cli_blur(int argc, char** argv) {
  std::string map_path;
  bool radial = false, json = false;
  double sigma_max = blur::kDefaultSigmaMax;
  ArgParser args(
      "usage: ./main blur IN OUT [IN2 OUT2 ...] [--map MAP | --radial] [--sigma-max S]\n"
      "Blurs each pixel with a Gaussian whose sigma = S * v / 255 comes from the 8-bit map\n"
      "value v (0 keeps the pixel sharp); a colour image is blurred per channel. All inputs\n"
      "share the map and must have its size.");
  args.option("--map", &map_path, "MAP", "map image of the inputs' size (a colour one is made grey)");
  args.flag("--radial", &radial, "the default map: sharp centre, blurred rim");
  args.option("--sigma-max", &sigma_max, "S", "sigma at v = 255, in [0.01, 16] (default 5)");
  args.flag("--json", &json, "print the result as JSON");
  args.max_pixels_option();
  std::vector<std::string> pos;
  if (int rc = args.parse_command(argc, argv, &pos); rc >= 0) return rc;
  Status s;
  if (pos.empty() || pos.size() % 2 != 0)
    return report_failure(Status::usage("blur needs pairs IN OUT (see --help)"));
  if (radial && !map_path.empty())
    return report_failure(Status::usage("give --map or --radial, not both"));
  Outputs outputs;  // every OUT checked before any work, all committed together at the end
  for (size_t i = 1; i < pos.size(); i += 2) {
    s = image_declare(&outputs, pos[i]);
    if (!s.ok()) return report_failure(s);
  }

  blur::TapSets taps;
  s = blur::make_tap_sets(sigma_max, &taps);
  if (!s.ok()) return report_failure(s);

  const size_t count = pos.size() / 2;
  std::vector<Image> inputs(count);
  for (size_t i = 0; i < count; ++i) {
    s = image_read(pos[2 * i], &inputs[i]);
    if (s.ok()) s = image_check_channels(pos[2 * i + 1], inputs[i].channels);  // before the work
    if (!s.ok()) return report_failure(s);
    if (inputs[i].width != inputs[0].width || inputs[i].height != inputs[0].height)
      return report_failure(Status::bad_input(pos[2 * i] + " is " + size_text(inputs[i]) + " but " +
                                              pos[0] + " is " + size_text(inputs[0]) +
                                              ": all inputs share one map and need one size"));
  }

  Image map;
  if (!map_path.empty()) {
    s = image_read(map_path, &map);
    if (!s.ok()) return report_failure(s);
    if (map.channels != 1) map = to_gray(map);
    if (map.width != inputs[0].width || map.height != inputs[0].height)
      return report_failure(Status::bad_input("map " + map_path + " is " + size_text(map) +
                                              " but " + pos[0] + " is " + size_text(inputs[0])));
  } else {
    s = blur::radial_map(inputs[0].width, inputs[0].height, &map);
    if (!s.ok()) return report_failure(s);
  }

  // The channels of every input become grey layers.
  std::vector<Image> layers;
  for (const Image& in : inputs) {
    s = blur::split_channels(in, &layers);
    if (!s.ok()) return report_failure(s);
  }

  std::vector<Image> blurred;
  Timings timings;
  blur::Launch launch;
  const double t0 = now_ms();
  s = blur::apply(layers, map, taps, &blurred, &timings, &launch);
  const double total = now_ms() - t0;
  if (!s.ok()) return report_failure(s);

  // Put the layers back together; every output goes into the set, committed at the end.
  size_t next_layer = 0;
  for (size_t i = 0; i < count; ++i) {
    Image out;
    s = blur::join_channels(blurred, next_layer, inputs[i].channels, &out);
    next_layer += size_t(inputs[i].channels);
    if (s.ok()) s = image_put(&outputs, pos[2 * i + 1], out);
    if (!s.ok()) return report_failure(s);
  }

  uint64_t blurred_pixels = 0;
  for (int y = 0; y < map.height; ++y)
    for (int x = 0; x < map.width; ++x) blurred_pixels += map.at(x, y)[0] != 0;
  const std::string map_name = map_path.empty() ? "radial" : "file";
  if (json) {
    Json j;
    j.begin_object();
    j.key("operation").str("blur");
    j.key("images").num(int64_t(count));
    j.key("layers").num(int64_t(layers.size()));
    j.key("width").num(map.width);
    j.key("height").num(map.height);
    j.key("map").str(map_name);
    j.key("blurred_pixels").num(blurred_pixels);
    j.key("sigma_max").num(taps.sigma_max);
    j.key("radius").num(taps.radius);
    j.end_object();
    std::printf("%s\n", j.text().c_str());
  } else {
    std::printf("blur %zu image%s %s (%zu layer%s), %s map blurs %llu of %llu pixels, "
                "sigma_max %g: %dx%d taps\n",
                count, count == 1 ? "" : "s", size_text(map).c_str(), layers.size(),
                layers.size() == 1 ? "" : "s",
                map_name.c_str(), (unsigned long long)blurred_pixels,
                (unsigned long long)(uint64_t(map.width) * uint64_t(map.height)), taps.sigma_max,
                taps.side, taps.side);
  }
  s = outputs.commit();
  if (!s.ok()) return report_failure(s);
  if (!launch.note.empty()) std::fprintf(stderr, "%s: %s\n", kVersionName, launch.note.c_str());
  print_timings("blur", total, timings);
  return kExitOk;
}

}  // namespace parvis
