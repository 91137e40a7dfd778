// answer(): a prepared matcher's run on one source, with what the caller asked around it.
#include "match/answer.hpp"

#include "match/mask.hpp"

namespace parvis::match {

Source::Source(const Image& image) : image_(image), shape_(gray_shape(image.width, image.height)) {}

const Image& Source::gray(double* made_ms) {
  if (image_.channels == 1) {  // already grey: read in place
    if (made_ms) *made_ms = -1.0;
    return image_;
  }
  const double t0 = now_ms();
  if (!made_) gray_ = to_gray(image_);
  if (made_ms) *made_ms = made_ ? -1.0 : now_ms() - t0;
  made_ = true;
  return gray_;
}

Status answer(const AnswerOptions& options, const Params& params, Source& src,
              const Image& gray_tpl, Matcher* matcher, Answer* out) {
  const Image& source = src.image();
  out->mask_counted = mask::active(params) ? mask::template_sums(gray_tpl, params.mask).n : 0;
  Result& res = out->res;
  bool gray_on_device = false;  // subpixel needs the grey on the host anyway
  if (source.channels == 3 && !options.subpixel)
    PARVIS_TRY(matcher_gray_on_device(matcher, source.width, source.height, &gray_on_device));
  if (gray_on_device) {
    PARVIS_TRY(matcher_run_rgb(matcher, source, &res));
  } else {
    double gray_ms = -1;
    const Image& gray_source = src.gray(&gray_ms);
    PARVIS_TRY(matcher_run(matcher, gray_source, &res));
    if (source.channels == 3) res.timings.gray_host_ms = gray_ms;  // -1: made by an earlier item
  }
  if (res.best.empty() && !options.all) return Status::runtime("match returned no position");
  out->subs.clear();
  if (options.subpixel)
    for (const Position& p : res.best)
      out->subs.push_back(subpixel_fit(src.gray(), gray_tpl, params.metric, p, &params.mask));

  // The colour verdict of each chosen match (full when at least full_ratio of its pixels
  // are in range).
  const size_t n = res.best.size();
  out->counts.assign(n, color::CountResult{});
  out->fractions.assign(n, 0.0);
  out->is_full.assign(n, false);
  out->color_ms = 0;
  if (options.color.enabled) {
    const double tc = now_ms();
    Image rgb_of_grey;  // a grey source has no colour: its pixels count as grey (S = 0)
    if (source.channels != 3) rgb_of_grey = to_rgb(source);
    for (size_t i = 0; i < n; ++i) {
      const Rect rect{res.best[i].x, res.best[i].y, gray_tpl.width, gray_tpl.height};
      PARVIS_TRY(color::count_in_rect(source.channels == 3 ? source : rgb_of_grey, rect,
                                      options.color.range, &out->counts[i]));
      out->fractions[i] = double(out->counts[i].matching) / double(out->counts[i].total);
      out->is_full[i] = out->fractions[i] >= options.color.full_ratio;
    }
    out->color_ms = now_ms() - tc;
  }
  return Status::Ok();
}

Status set_selection(bool all, int64_t max_score, double min_score, int min_distance,
                     Params* params) {
  // The threshold as a rank (Position::score): the integer S, or the normed key of S.
  uint64_t max_rank = 0;
  if (all && is_normed(params->metric)) {
    if (!(min_score >= -1.0 && min_score <= 1.0))
      return Status::usage("the minimum score of every match must lie in [-1, 1]");
    max_rank = rank_of(params->metric, min_score + 0.0);  // -0 -> +0: the same threshold
  } else if (all) {
    if (max_score < 0 || max_score > (int64_t(1) << 62))
      return Status::usage("the maximum score of every match must lie in [0, 2^62]");
    max_rank = uint64_t(max_score);
  }
  if (min_distance < 0) return Status::usage("the minimum distance must be at least 0");
  if (all || min_distance > 1) {
    params->selection.all = all;
    params->selection.max_rank = max_rank;
    params->selection.min_distance = min_distance;
  }
  return Status::Ok();
}

}  // namespace parvis::match
