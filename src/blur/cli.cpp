// ./main blur IN OUT [IN2 OUT2 ...] [--map MAP | --radial] [--sigma-max S] [--json]
// Every input is cut into grey layers (its channels), all layers of all inputs are
// blurred in one call with the one shared map (the seed's batch of layers), and each
// output is put back together from its layers.
#include <cstdio>

#include "api/api.hpp"
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

  // The library's blur map (include/parvis/parvis.hpp), as a program on the library would call it.
  Blur blur;
  s = blur.prepare(sigma_max);
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

  // Every input in one call: their channels are blurred together (the seed's batch of layers).
  std::vector<ImageView> views;
  size_t layers = 0;
  for (const Image& in : inputs) {
    views.push_back(api::view_of(in));
    layers += size_t(in.channels);
  }
  std::vector<ImageBuffer> blurred;
  const double t0 = now_ms();
  s = blur.run(views, api::view_of(map), &blurred);
  const double total = now_ms() - t0;
  if (!s.ok()) return report_failure(s);
  // Every output goes into the set, committed at the end.
  for (size_t i = 0; i < count; ++i) {
    s = image_put(&outputs, pos[2 * i + 1], api::image_of(std::move(blurred[i])));
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
    j.key("layers").num(int64_t(layers));
    j.key("width").num(map.width);
    j.key("height").num(map.height);
    j.key("map").str(map_name);
    j.key("blurred_pixels").num(blurred_pixels);
    j.key("sigma_max").num(sigma_max);
    j.key("radius").num(blur.radius());
    j.end_object();
    std::printf("%s\n", j.text().c_str());
  } else {
    std::printf("blur %zu image%s %s (%zu layer%s), %s map blurs %llu of %llu pixels, "
                "sigma_max %g: %dx%d taps\n",
                count, count == 1 ? "" : "s", size_text(map).c_str(), layers,
                layers == 1 ? "" : "s",
                map_name.c_str(), (unsigned long long)blurred_pixels,
                (unsigned long long)(uint64_t(map.width) * uint64_t(map.height)), sigma_max,
                2 * blur.radius() + 1, 2 * blur.radius() + 1);
  }
  s = outputs.commit();
  if (!s.ok()) return report_failure(s);
  if (!blur.note().empty()) std::fprintf(stderr, "%s: %s\n", kVersionName, blur.note().c_str());
  print_timings("blur", total, blur.timings());
  return kExitOk;
}

}  // namespace parvis
