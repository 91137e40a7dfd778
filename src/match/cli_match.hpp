// The parts of `./main match` that a single call (src/match/cli.cpp) and a batch
// (src/match/batch.cpp: several templates against one source, one template against many
// sources) share: the parsed request, one item's computation, its text or JSON, and the
// annotated source. One piece of code per idea: a batch's item is exactly a single call.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "color/color.hpp"
#include "cli/cli.hpp"
#include "common/image.hpp"
#include "match/match_common.hpp"

namespace parvis::match_cli {

// Every option of the command line, checked (usage errors come before any file is read).
struct Request {
  match::Params params;
  std::string metric_text, out_path, map_path;
  bool json = false, explain = false, all = false, subpixel = false;
  bool selecting = false;  // --all or --min-distance > 1: chosen from the exact map
  bool normed = false;
  int top_k = 1, min_distance = 0;
  int64_t max_score = 0;
  double min_score = 0;
  uint64_t max_rank = 0;
  std::string threshold_text;  // --max-score / --min-score as given
  color::ColorCheck color;
};

// --all with its threshold (--max-score S for ssd and sad, --min-score S in [-1, 1] for the
// normed metrics) and --min-distance D, as given; parse_choice fills min_score.
struct ChoiceOptions {
  bool all = false;
  std::string max_score_text, min_score_text;
  int min_distance = 0;
  double min_score = 0;  // --min-score, parsed
};
// The options into params->selection (params->metric already set); usage errors name the option.
// `match` and `video` share it.
Status parse_choice(ChoiceOptions& options, const std::string& metric_text, match::Params* params);

// One (source, template) pair's answer: what a single call prints and draws.
struct Item {
  std::string source_path, template_path;
  int source_width = 0, source_height = 0, template_width = 0, template_height = 0;
  uint64_t mask_counted = 0;  // --mask: the template pixels that count (JSON "mask")
  match::Result res;
  std::vector<Rect> rects;  // every reported match
  std::vector<match::Subpixel> subs;
  std::vector<color::CountResult> counts;
  std::vector<double> fractions;
  std::vector<bool> is_full;
  int n_full = 0;
  double color_ms = 0, total_ms = 0;
};

// A source as read (grey or RGB) and its grey, made on the host only when something needs it:
// cuda-opt can make an RGB source's grey on the GPU instead (match::matcher_gray_on_device).
// A batch of templates shares one: the grey is made at most once.
class Source {
 public:
  explicit Source(const Image& image);
  const Image& image() const { return image_; }
  // The grey source's shape (1 channel, no pixels): for the size checks.
  const Image& shape() const { return shape_; }
  // The grey (to_gray), made on the first call; *made_ms gets the time this call took to make
  // it (-1 when it was already made).
  const Image& gray(double* made_ms = nullptr);

 private:
  const Image& image_;
  Image shape_, gray_;
  bool made_ = false;
};

// --mask M: reads M into params->mask, made grey (mask.hpp checks it against a template);
// nothing when `path` is empty.
Status read_mask(const std::string& path, match::Params* params);

// Runs `matcher` (made from gray_tpl with req.params) on the source and fills *item: the
// selection, the sub-pixel fits and the colour verdicts (--color counts the source's own
// pixels). An RGB source goes to the version as RGB where it makes the grey on the device
// (and --subpixel does not need it on the host); otherwise its grey is made here.
Status run_item(const Request& req, Source& source, const Image& gray_tpl,
                match::Matcher* matcher, Item* item);

// The item's output: the text lines of a single call, or its JSON object (no newline).
std::string item_output(const Request& req, const Item& item);

// The rectangles --out outlines: the best match; with --all or --min-distance every one.
std::vector<Rect> outlined(const Request& req, const Item& item);

// The source as RGB with each group of rectangles drawn in colour `colors[i]`.
Image annotate(const Image& source, const std::vector<std::vector<Rect>>& groups,
               const std::vector<Rgb>& colors);

// The colour of the i-th template of a batch on --out (red first: a batch of one draws what a
// single call draws).
Rgb item_color(size_t i);

// Prints the item's timings on stderr (match, and color when it ran).
void print_item_timings(const Request& req, const Item& item);

}  // namespace parvis::match_cli

namespace parvis {
// The batch forms of `./main match` (batch.cpp): `positional` are SOURCE TEMPLATE... or, with
// --sources, the sources (files and directories) of `template_path`.
int match_batch(const match_cli::Request& req, const std::vector<std::string>& positional,
                bool sources_mode, const std::string& template_path);
}  // namespace parvis
