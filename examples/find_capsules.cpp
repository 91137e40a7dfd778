// Seed 000's production line on the library: every capsule in a picture, each with its colour
// verdict. The same answer as
//   ./main match SOURCE TEMPLATE --all --max-score S --min-distance D --color blue --json
// (its "top" entries, one per line). Built by `make examples` against lib/libparvis-seq.a.
//
//   example-find_capsules images/capsules.bmp images/capsule_empty_template.bmp 18000000 50
#include <cstdio>
#include <cstdlib>

#include "parvis/parvis.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s SOURCE TEMPLATE MAX_SCORE MIN_DISTANCE\n", argv[0]);
    return 1;
  }
  parvis::ImageBuffer source, templ;
  parvis::Status s = parvis::read_image(argv[1], &source);
  if (s.ok()) s = parvis::read_image(argv[2], &templ);

  parvis::MatchOptions options;
  options.all = true;
  options.threshold = std::atof(argv[3]);
  options.min_distance = std::atoi(argv[4]);
  options.color = "blue";
  parvis::Matcher matcher;
  parvis::MatchResult result;
  auto view = [](const parvis::ImageBuffer& b) {
    return parvis::ImageView{b.pixels.data(), b.width, b.height, 0,
                             b.channels == 3 ? parvis::PixelOrder::RGB : parvis::PixelOrder::Gray};
  };
  if (s.ok()) s = matcher.prepare(view(templ), options);
  if (s.ok()) s = matcher.run(view(source), &result);
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.message.c_str());
    return s.code;
  }
  for (const parvis::Match& m : result.matches)
    std::printf("{\"x\": %d, \"y\": %d, \"score\": %.0f, \"verdict\": \"%s\"}\n", m.x, m.y, m.score,
                m.full ? "full" : "empty");
  return 0;
}
