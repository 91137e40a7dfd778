// The parts of `./main match` that a single call (src/match/cli.cpp) and a batch
// (src/match/batch.cpp: several templates against one source, one template against many
// sources) share: the parsed request, the library's options it makes, an item's text or JSON,
// and the annotated source. Every item is a run of the library's Matcher
// (include/parvis/parvis.hpp): a batch's item is exactly a single call.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "color/color.hpp"
#include "cli/cli.hpp"
#include "common/image.hpp"
#include "common/output.hpp"
#include "match/match_common.hpp"
#include "parvis/parvis.hpp"

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

// One (source, template) pair's answer, as the library gives it, and where they came from.
struct Item {
  std::string source_path, template_path;
  int source_width = 0, source_height = 0, template_width = 0, template_height = 0;
  MatchResult result;
  double total_ms = 0;
};

// The request as the library's options (the mask: a view of params.mask).
MatchOptions options_of(const Request& req);

// --mask M: reads M into params->mask, made grey (mask.hpp checks it against a template);
// nothing when `path` is empty.
Status read_mask(const std::string& path, match::Params* params);

// The item's output: the text lines of a single call, or its JSON object (no newline).
std::string item_output(const Request& req, const Item& item);

// The item's map (--map) as a .npy file into the outputs.
Status put_map(const std::string& path, const Item& item, Outputs* outputs);

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
