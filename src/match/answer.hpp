// One source's answer to a prepared matcher: the chosen positions with their sub-pixel fits and
// colour verdicts. What `./main match` prints (src/match/cli.cpp), a batch item, and the
// library's Matcher::run (src/api/match.cpp) all come from answer(): one path.
#pragma once
#include <cstdint>
#include <vector>

#include "color/color.hpp"
#include "common/image.hpp"
#include "match/match_common.hpp"

namespace parvis::match {

// A source as given (grey or RGB) and its grey, made on the host only when something needs it:
// cuda-opt can make an RGB source's grey on the GPU instead (matcher_gray_on_device). A batch
// of templates shares one: the grey is made at most once.
class Source {
 public:
  explicit Source(const Image& image);
  const Image& image() const { return image_; }
  // The grey source's shape (1 channel, no pixels): for the size checks.
  const Image& shape() const { return shape_; }
  // The grey (to_gray; a grey source is read in place), made on the first call; *made_ms gets
  // the time this call took to make it (-1 when it was already made or not needed).
  const Image& gray(double* made_ms = nullptr);

 private:
  const Image& image_;
  Image shape_, gray_;
  bool made_ = false;
};

// What answer() adds to the version's run.
struct AnswerOptions {
  bool all = false;        // --all: no position at all is an answer too
  bool subpixel = false;   // --subpixel: a fit around each chosen position
  color::ColorCheck color; // --color: each chosen rectangle's verdict
};

struct Answer {
  uint64_t mask_counted = 0;  // --mask: the template pixels that count
  Result res;
  std::vector<Subpixel> subs;
  std::vector<color::CountResult> counts;
  std::vector<double> fractions;
  std::vector<bool> is_full;
  double color_ms = 0;
};

// Runs `matcher` (made from gray_tpl with `params`) on the source and fills *out. An RGB
// source goes to the version as RGB where it makes the grey on the device (and subpixel does
// not need it on the host); otherwise its grey is made here. The colour check counts the
// source's own pixels (a grey source's as grey: S = 0).
Status answer(const AnswerOptions& options, const Params& params, Source& source,
              const Image& gray_tpl, Matcher* matcher, Answer* out);

// The choice of every match scoring at least as well as the threshold (`all`: at most
// max_score for ssd and sad, in [0, 2^62]; at least min_score in [-1, 1] for the normed
// metrics) and of positions at least `min_distance` apart, into params->selection
// (params->metric already set). Usage errors otherwise.
Status set_selection(bool all, int64_t max_score, double min_score, int min_distance,
                     Params* params);

}  // namespace parvis::match
