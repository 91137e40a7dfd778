// The library's matcher (include/parvis/parvis.hpp): the options into match::Params, the run
// through match::answer. `./main match` (src/match/cli.cpp) runs through it too.
#include <memory>
#include <string>

#include "api/api.hpp"
#include "match/answer.hpp"
#include "match/mask.hpp"

namespace parvis {

struct Matcher::Impl {
  match::Params params;
  match::AnswerOptions answer_options;
  Image gray_template;
  match::MatcherPtr matcher;
  match::Answer answer;  // kept from run to run: its vectors' memory is reused
};

namespace api {

match::Metric metric_of(Metric m) {
  switch (m) {
    case Metric::SAD: return match::Metric::SAD;
    case Metric::NCC: return match::Metric::NCC;
    case Metric::CCorrNormed: return match::Metric::CCorrNormed;
    default: return match::Metric::SSD;
  }
}
Metric public_metric(match::Metric m) {
  switch (m) {
    case match::Metric::SAD: return Metric::SAD;
    case match::Metric::NCC: return Metric::NCC;
    case match::Metric::CCorrNormed: return Metric::CCorrNormed;
    default: return Metric::SSD;
  }
}
match::Method method_of(Method m) {
  return m == Method::Direct ? match::Method::Direct
                             : m == Method::FFT ? match::Method::FFT : match::Method::Auto;
}
Method public_method(match::Method m) {
  return m == match::Method::Direct ? Method::Direct
                                    : m == match::Method::FFT ? Method::FFT : Method::Auto;
}

}  // namespace api

namespace {

// The colour check MatchOptions asks for: a named range, and/or a range given as numbers.
Status color_check_of(const MatchOptions& o, color::ColorCheck* out) {
  color::ColorCheck c;
  PARVIS_TRY(color::parse_color_check(o.color, "", "", o.full_ratio, &c));
  if (o.use_range) {
    c.enabled = true;
    c.range = color::HsvRange{o.range.h_min, o.range.h_max, o.range.s_min,
                              o.range.s_max, o.range.v_min, o.range.v_max};
    PARVIS_TRY(color::check_range(c.range));
  }
  *out = c;
  return Status::Ok();
}

}  // namespace

Matcher::Matcher() = default;
Matcher::~Matcher() = default;
Matcher::Matcher(Matcher&&) noexcept = default;
Matcher& Matcher::operator=(Matcher&&) noexcept = default;

Status MatcherAccess::prepare(Matcher* m, const ImageView& templ, const MatchOptions& o,
                              match::SourceCache* cache) {
  PARVIS_TRY(api::ready());
  auto impl = std::make_unique<Matcher::Impl>();
  match::Params& p = impl->params;
  p.metric = api::metric_of(o.metric);
  p.method = api::method_of(o.method);
  p.top_k = o.top;
  p.want_map = o.want_map;
  p.source_cache = cache;
  PARVIS_TRY(match::check_params(p));
  if (o.all && !match::is_normed(p.metric) && o.threshold != double(int64_t(o.threshold)))
    return Status::usage("the maximum score of every match is an integer for ssd and sad");
  PARVIS_TRY(match::set_selection(o.all, match::is_normed(p.metric) ? 0 : int64_t(o.threshold),
                                  o.threshold, o.min_distance, &p));
  impl->answer_options.all = o.all;
  impl->answer_options.subpixel = o.subpixel;
  PARVIS_TRY(color_check_of(o, &impl->answer_options.color));
  PARVIS_TRY(api::gray_of_view(templ, "template", &impl->gray_template));
  impl->gray_template = Image(impl->gray_template);  // owned: the caller may free its pixels
  if (o.mask.data != nullptr) {
    Image mask;
    PARVIS_TRY(api::gray_of_view(o.mask, "mask", &mask));
    p.mask = Image(mask);
  }
  PARVIS_TRY(match::matcher_create(impl->gray_template, p, &impl->matcher));
  m->impl_ = std::move(impl);
  return Status::Ok();
}

Status MatcherAccess::run(Matcher* m, match::Source& src, MatchResult* out) {
  Matcher::Impl* impl = m->impl_.get();
  if (!impl) return Status::usage("Matcher::run before a successful prepare");
  match::Answer& a = impl->answer;
  match::reset_result(&a.res);
  PARVIS_TRY(match::answer(impl->answer_options, impl->params, src, impl->gray_template,
                           impl->matcher.get(), &a));
  const match::Metric metric = impl->params.metric;
  const bool color = impl->answer_options.color.enabled;
  out->matches.resize(a.res.best.size());
  for (size_t i = 0; i < a.res.best.size(); ++i) {
    const match::Position& p = a.res.best[i];
    Match& r = out->matches[i];
    r = Match{};
    r.x = p.x;
    r.y = p.y;
    r.score = match::score_value(metric, p.score);
    r.sx = p.x;
    r.sy = p.y;
    if (i < a.subs.size()) {
      r.fitted = a.subs[i].fitted;
      r.sx = a.subs[i].x;
      r.sy = a.subs[i].y;
    }
    if (color) {
      r.matching = a.counts[i].matching;
      r.total = a.counts[i].total;
      r.fraction = a.fractions[i];
      r.full = a.is_full[i];
    }
  }
  out->map_width = a.res.map_width;
  out->map_height = a.res.map_height;
  out->map.swap(a.res.map);
  out->method_used = api::public_method(a.res.method_used);
  out->explain = a.res.explain;
  out->mask_pixels = a.mask_counted;
  out->timings = a.res.timings;
  out->color_ms = color ? a.color_ms : 0;
  out->color_timings = color && !a.counts.empty() ? a.counts[0].timings : Timings{};
  return Status::Ok();
}

Status Matcher::prepare(const ImageView& templ, const MatchOptions& o) {
  return MatcherAccess::prepare(this, templ, o, nullptr);
}

Status Matcher::run(const ImageView& source, MatchResult* out) {
  if (!impl_) return Status::usage("Matcher::run before a successful prepare");
  Image image;
  PARVIS_TRY(api::image_of(source, "source", &image));
  match::Source src(image);
  return MatcherAccess::run(this, src, out);
}

Status match_template(const ImageView& source, const ImageView& templ,
                      const MatchOptions& options, MatchResult* out) {
  Matcher m;
  PARVIS_TRY(m.prepare(templ, options));
  return m.run(source, out);
}

}  // namespace parvis
