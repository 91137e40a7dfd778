// ./main match SOURCE TEMPLATE [--metric ssd|sad|ncc|ccorr-normed] [--method auto|direct|fft]
//              [--out FILE] [--map FILE.npy] [--top K] [--all --max-score S | --min-score S]
//              [--min-distance D]
//              [--color NAME] [--hsv-min H,S,V] [--hsv-max H,S,V] [--full-ratio R] [--json]
//              [--explain] [--mask M]
// ./main match SOURCE TEMPLATE TEMPLATE... | --template TEMPLATE --sources SOURCE|DIR...
//              (batches: src/match/batch.cpp)
// Finds the template in the source (on grey, DESIGN.md's formula) — the best match, the K
// best, or every match scoring at most S, optionally at least D apart — optionally counts the
// pixels of each reported match that fall in an HSV range (full / empty capsule, seed 000),
// and writes the annotated source and the score map only once everything has succeeded.
#include <algorithm>
#include <cstdarg>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "color/color.hpp"
#include "common/npy.hpp"
#include "common/output.hpp"
#include "cli/subcommands.hpp"
#include "image_io.hpp"
#include "api/api.hpp"
#include "match/cli_match.hpp"
#include "match/mask.hpp"
#include "match/match_common.hpp"
#include "match/select.hpp"

#include <unistd.h>

namespace parvis {

namespace match_cli {

namespace {

// A reported score: the exact integer (SSD, SAD; below 2^53, so the double holds it), or the
// normed double.
void json_score(Json& j, match::Metric metric, double score) {
  if (match::is_normed(metric)) j.num(score);
  else j.num(uint64_t(score));
}
std::string score_text(match::Metric metric, double score) {
  char buf[40];
  if (match::is_normed(metric)) std::snprintf(buf, sizeof buf, "%.9f", score);
  else std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(score));
  return buf;
}

// One reported match; with its colour verdict when `verdict` is given, with the sub-pixel
// position when `subpixel` is set.
void json_position(Json& j, match::Metric metric, const Match& m, const char* verdict,
                   bool subpixel) {
  j.begin_object();
  j.key("x").num(m.x);
  j.key("y").num(m.y);
  json_score(j.key("score"), metric, m.score);
  if (verdict) j.key("verdict").str(verdict);
  if (subpixel) j.key("sx").num(m.sx).key("sy").num(m.sy).key("fitted").boolean(m.fitted);
  j.end_object();
}

// printf onto the end of *out.
__attribute__((format(printf, 2, 3))) void appendf(std::string* out, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (size_t(n) < sizeof buf) {
    out->append(buf, size_t(n));
    return;
  }
  std::string big(size_t(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(&big[0], big.size(), fmt, ap);
  va_end(ap);
  out->append(big, 0, size_t(n));
}

// " subpixel x=... y=..." (3 decimals), or " subpixel -" where no fit was kept.
void append_subpixel(std::string* out, const Match& m) {
  if (m.fitted)
    appendf(out, " subpixel x=%.3f y=%.3f", m.sx, m.sy);
  else
    out->append(" subpixel -");
}

}  // namespace

Rgb item_color(size_t i) {
  static const Rgb kColors[] = {{255, 0, 0},   {0, 200, 0},   {0, 90, 255},  {255, 200, 0},
                                {255, 0, 255}, {0, 220, 220}, {255, 128, 0}, {140, 60, 255}};
  return kColors[i % (sizeof kColors / sizeof kColors[0])];
}

// 2 px wide (3 px on pictures of 1000 px or more, to stay visible when scaled down).
Image annotate(const Image& source, const std::vector<std::vector<Rect>>& groups,
               const std::vector<Rgb>& colors) {
  Image img = to_rgb(source);
  const int thickness = (source.width >= 1000 || source.height >= 1000) ? 3 : 2;
  for (size_t g = 0; g < groups.size(); ++g)
    for (const Rect& r : groups[g]) draw_rect(&img, r, colors[g], thickness);
  return img;
}

Status read_mask(const std::string& path, match::Params* params) {
  if (path.empty()) return Status::Ok();
  Image mask_image;
  PARVIS_TRY(image_read(path, &mask_image));
  params->mask = to_gray(mask_image);  // grey like the template (mask.hpp)
  return Status::Ok();
}

std::vector<Rect> outlined(const Request& req, const Item& item) {
  const std::vector<Match>& m = item.result.matches;
  const size_t n = req.selecting ? m.size() : std::min<size_t>(1, m.size());
  std::vector<Rect> rects;
  for (size_t i = 0; i < n; ++i) rects.push_back(Rect{m[i].x, m[i].y, item.template_width, item.template_height});
  return rects;
}

MatchOptions options_of(const Request& req) {
  MatchOptions o;
  o.metric = api::public_metric(req.params.metric);
  o.method = api::public_method(req.params.method);
  o.top = req.top_k;
  o.all = req.all;
  o.threshold = req.normed ? req.min_score : double(req.max_score);
  o.min_distance = req.min_distance;
  o.subpixel = req.subpixel;
  o.want_map = !req.map_path.empty();
  if (!req.params.mask.empty()) o.mask = api::view_of(req.params.mask);
  if (req.color.enabled) {
    const color::HsvRange& r = req.color.range;
    o.use_range = true;
    o.range = HsvRange{r.h_min, r.h_max, r.s_min, r.s_max, r.v_min, r.v_max};
    o.full_ratio = req.color.full_ratio;
  }
  return o;
}

std::string item_output(const Request& req, const Item& item) {
  // The first reported match is "the" match (x, y, score; its colour verdict as before);
  // with --all or --min-distance every reported one carries its own verdict.
  const MatchResult& res = item.result;
  const std::vector<Match>& matches = res.matches;
  const match::Metric metric = req.params.metric;
  const bool selecting = req.selecting, subpixel = req.subpixel;
  const color::ColorCheck& color_req = req.color;
  const bool any = !matches.empty();
  const Match best = any ? matches[0] : Match{};
  const int n = int(matches.size());
  int n_full = 0;
  for (const Match& m : matches) n_full += m.full;
  const char* const kVerdict[2] = {"empty", "full"};
  std::string out;
  if (req.json) {
    Json j;
    j.begin_object();
    j.key("operation").str("match");
    j.key("metric").str(match::metric_name(metric));
    j.key("method").str(match::method_name(req.params.method));
    j.key("source").begin_object().key("width").num(item.source_width).key("height").num(item.source_height).end_object();
    j.key("template").begin_object().key("width").num(item.template_width).key("height").num(item.template_height).end_object();
    if (match::mask::active(req.params))
      j.key("mask").begin_object().key("counted").num(res.mask_pixels).end_object();
    if (any) {
      j.key("x").num(best.x);
      j.key("y").num(best.y);
      json_score(j.key("score"), metric, best.score);
    }
    if (selecting) {
      j.key("count").num(n);
      if (req.all && req.normed) j.key("min_score").num(req.min_score);
      else if (req.all) j.key("max_score").num(uint64_t(req.max_score));
      j.key("min_distance").num(req.min_distance);
    }
    j.key("top").begin_array();
    for (const Match& m : matches)
      json_position(j, metric, m, selecting && color_req.enabled ? kVerdict[m.full ? 1 : 0] : nullptr,
                    subpixel);
    j.end_array();
    if (subpixel && any)
      j.key("subpixel").begin_object().key("x").num(best.sx).key("y").num(best.sy)
          .key("fitted").boolean(best.fitted).end_object();
    if (!req.map_path.empty())
      j.key("map").begin_object().key("width").num(res.map_width).key("height").num(res.map_height).end_object();
    if (color_req.enabled) {
      const color::HsvRange& r = color_req.range;
      j.key("color").begin_object();
      j.key("name").str(color_req.label);
      j.key("hsv_min").begin_array().num(r.h_min).num(r.s_min).num(r.v_min).end_array();
      j.key("hsv_max").begin_array().num(r.h_max).num(r.s_max).num(r.v_max).end_array();
      if (any) {
        j.key("matching").num(best.matching);
        j.key("total").num(best.total);
        j.key("fraction").num(best.fraction);
      }
      j.key("full_ratio").num(color_req.full_ratio);
      if (any) j.key("verdict").str(best.full ? "full" : "empty");
      if (selecting) j.key("full").num(n_full).key("empty").num(n - n_full);
      j.end_object();
    }
    if (req.explain) {
      j.key("method_used").str(match::method_name(api::method_of(res.method_used)));
      j.key("explain").str(res.explain);
    }
    j.end_object();
    return j.text();
  }
  if (any)
    appendf(&out, "match %s at x=%d y=%d score=%s (template %dx%d in %dx%d)\n",
            match::metric_name(metric), best.x, best.y, score_text(metric, best.score).c_str(),
            item.template_width, item.template_height, item.source_width, item.source_height);
  else
    appendf(&out, "match %s: no position scores %s %s (template %dx%d in %dx%d)\n",
            match::metric_name(metric), req.normed ? "at least" : "at most",
            req.threshold_text.c_str(), item.template_width, item.template_height,
            item.source_width, item.source_height);
  if (subpixel && any) {
    out.append("best:");
    append_subpixel(&out, best);
    out.append("\n");
  }
  for (int i = 1; i < n; ++i) {
    const Match& m = matches[size_t(i)];
    appendf(&out, "  #%d at x=%d y=%d score=%s", i + 1, m.x, m.y, score_text(metric, m.score).c_str());
    if (subpixel) append_subpixel(&out, m);
    if (selecting && color_req.enabled)
      appendf(&out, " -> %s (%.1f%%)", kVerdict[m.full ? 1 : 0], 100.0 * m.fraction);
    out.append("\n");
  }
  if (color_req.enabled && any)
    appendf(&out, "color: %llu/%llu %s pixels (%.1f%%) -> %s\n",
            static_cast<unsigned long long>(best.matching),
            static_cast<unsigned long long>(best.total), color_req.label.c_str(),
            100.0 * best.fraction, best.full ? "full" : "empty");
  if (selecting) appendf(&out, "matches: %d%s", n, color_req.enabled ? "" : "\n");
  if (selecting && color_req.enabled) appendf(&out, " (%d full, %d empty)\n", n_full, n - n_full);
  if (req.explain)
    appendf(&out, "method: %s (%s)\n", match::method_name(api::method_of(res.method_used)), res.explain.c_str());
  return out;
}

void print_item_timings(const Request& req, const Item& item) {
  print_timings("match", item.total_ms, item.result.timings);
  if (req.color.enabled && !item.result.matches.empty())
    print_timings("color", item.result.color_ms, item.result.color_timings);
}

Status put_map(const std::string& path, const Item& item, Outputs* outputs) {
  const MatchResult& r = item.result;
  std::vector<uint8_t> bytes;
  PARVIS_TRY(npy_encode(DType::F64, r.map.data(), {size_t(r.map_height), size_t(r.map_width)}, &bytes));
  return outputs->put(path, bytes.data(), bytes.size());
}

Status parse_choice(ChoiceOptions& o, const std::string& metric_text, match::Params* params) {
  // The threshold as a rank (Position::score): the integer S, or the normed key of S.
  const bool normed = match::is_normed(params->metric);
  const std::string& threshold_text = normed ? o.min_score_text : o.max_score_text;
  const char* threshold_option = normed ? "--min-score" : "--max-score";
  if (!(normed ? o.max_score_text : o.min_score_text).empty())
    return Status::usage(std::string(normed ? "--max-score" : "--min-score") + " does not apply to --metric " +
                         metric_text + ": use " + threshold_option);
  if (o.all != !threshold_text.empty())
    return Status::usage(std::string("--all and ") + threshold_option + " S go together");
  int64_t max_score = 0;
  if (o.all && normed) {
    char* end = nullptr;
    o.min_score = std::strtod(threshold_text.c_str(), &end);
    if (end == threshold_text.c_str() || *end != '\0' || !(o.min_score >= -1.0 && o.min_score <= 1.0))
      return Status::usage("--min-score wants a number in [-1, 1], got '" + threshold_text + "'");
    o.min_score += 0.0;  // -0 -> +0: the same threshold
  } else if (o.all) {
    const Status s = parse_int(o.max_score_text, 0, int64_t(1) << 62, &max_score);
    if (!s.ok()) return Status::usage("--max-score: " + s.message);
  }
  if (o.min_distance < 0) return Status::usage("--min-distance must be at least 0");
  return match::set_selection(o.all, max_score, o.min_score, o.min_distance, params);
}

}  // namespace match_cli

int cli_match(int argc, char** argv) {
  using namespace match_cli;
  std::string metric_text = "ssd", method_text = "auto", out_path, map_path;
  std::string color_name, hsv_min, hsv_max;
  std::string max_score_text, min_score_text;
  std::string template_path;
  std::string mask_path;
  int top_k = 1, min_distance = 0;
  double full_ratio = 0.2;
  bool json = false, explain = false, all = false, subpixel = false, sources = false;
  ArgParser args(
      "usage: ./main match SOURCE TEMPLATE [TEMPLATE...] [--metric ssd|sad|ncc|ccorr-normed]\n"
      "       ./main match --template TEMPLATE --sources SOURCE|DIR... [options]\n"
      "                    [--method auto|direct|fft] [--out annotated.png] [--map scores.npy]\n"
      "                    [--top K] [--all --max-score S | --all --min-score S]\n"
      "                    [--min-distance D] [--subpixel]\n"
      "                    [--color blue] [--hsv-min H,S,V] [--hsv-max H,S,V] [--full-ratio R]\n"
      "                    [--mask M]\n"
      "Finds TEMPLATE in SOURCE (both made grey) by the exact sum of squared (ssd) or absolute\n"
      "(sad) differences, where the smallest score is best, or by normalized cross-correlation\n"
      "(ncc: OpenCV's TM_CCOEFF_NORMED; ccorr-normed: TM_CCORR_NORMED; from exact integer sums,\n"
      "the same bits on every version), where the largest is best; ties go to the smallest y,\n"
      "then x. --all --max-score S (ssd, sad) or --all --min-score S (ncc, ccorr-normed) lists\n"
      "every position scoring at least as well as S, --min-distance D\n"
      "drops a position within D (in x and y) of a better reported one. With --color, counts\n"
      "the pixels of each reported match inside an HSV range (OpenCV's 8-bit convention:\n"
      "H 0..179, S and V 0..255) and calls it full or empty. With --mask M (an image of the\n"
      "template's size, made grey), only the template pixels where M is nonzero count: every\n"
      "metric sums over them alone (ncc: n = their number), exactly, on every version.\n"
      "Batches (one process; each item's answer is exactly its single call's): several\n"
      "TEMPLATEs against one SOURCE (read, made grey and prepared once; the FFT method reuses\n"
      "its transform), or with --sources one --template against every SOURCE, a DIR meaning its\n"
      "image files in name order (the template prepared once per source size). Options apply to\n"
      "every item; the text gives a line 'item I/N: source S template T' before each item's\n"
      "lines, --json one object with an \"items\" array of the single calls' objects. --out: one\n"
      "picture of SOURCE with every template's matches (template I in colour I: red, green,\n"
      "blue, yellow, magenta, cyan, orange, violet); with --sources one picture per source,\n"
      "NAME-I.EXT (I = 1..N); --map: one map per item, NAME-I.npy. The first item that fails\n"
      "(unreadable file, template larger than the source) stops the batch with one error line\n"
      "naming the file: nothing is printed or written. A batch with --mask uses the one mask\n"
      "for every item: every template must have the mask's size (an error otherwise).");
  args.option("--metric", &metric_text, "ssd|sad|ncc|ccorr-normed", "the score (default ssd)");
  args.option("--method", &method_text, "auto|direct|fft",
              "direct sums, or ΣI·T through FFT cross-correlation: ssd, ncc, ccorr-normed "
              "(default auto)");
  args.option("--out", &out_path, "FILE",
              "the source with a red rectangle on the best match (--all, --min-distance: on each)");
  args.option("--map", &map_path, "FILE.npy",
              "every score, float64, shape (H-h+1, W-w+1) (ncc: the scores themselves)");
  args.option("--top", &top_k, "K", "list the K best positions (default 1)");
  args.flag("--all", &all, "list every position scoring at most --max-score (best first)");
  args.option("--max-score", &max_score_text, "S", "with --all (ssd, sad): the largest score reported");
  args.option("--min-score", &min_score_text, "S",
              "with --all (ncc, ccorr-normed): the smallest score reported, in [-1, 1]");
  args.option("--min-distance", &min_distance, "D",
              "no two reported matches closer than D in both x and y (the better one is kept)");
  args.flag("--subpixel", &subpixel,
            "fractional x, y of each reported match: a quadratic fit on the 3x3 exact scores");
  args.option("--color", &color_name, "NAME",
              "count each reported match's pixels in a named range (blue): full or empty");
  args.option("--hsv-min", &hsv_min, "H,S,V", "lower bounds of the range (default blue's 100,80,50)");
  args.option("--hsv-max", &hsv_max, "H,S,V", "upper bounds of the range (default blue's 130,255,255)");
  args.option("--full-ratio", &full_ratio, "R",
              "full when at least this fraction is in range (default 0.2)");
  args.option("--mask", &mask_path, "M",
              "template-sized image: only pixels where it is nonzero count (ssd, sad, ncc, "
              "ccorr-normed; every method but fft with sad)");
  args.flag("--json", &json, "print the result as one JSON object");
  args.flag("--explain", &explain, "also say which method ran and why (differs between versions)");
  args.flag("--sources", &sources,
            "batch: every positional argument is a source (a directory: its image files)");
  args.option("--template", &template_path, "FILE", "with --sources: the one template");
  args.max_pixels_option();
  std::vector<std::string> pos;
  if (int rc = args.parse_command(argc, argv, &pos); rc >= 0) return rc;
  Status s;
  if (sources && template_path.empty())
    return report_failure(Status::usage("--sources needs --template FILE (see --help)"));
  if (!sources && !template_path.empty())
    return report_failure(Status::usage("--template goes with --sources (see --help)"));
  if (sources && pos.empty())
    return report_failure(Status::usage("--sources needs at least one SOURCE file or directory"));
  if (!sources && pos.size() < 2)
    return report_failure(Status::usage("match needs SOURCE and TEMPLATE (see --help)"));

  // Every usage error before any file is read.
  Request req;
  match::Params& params = req.params;
  params.top_k = top_k;
  params.want_map = !map_path.empty();
  s = match::parse_metric(metric_text, &params.metric);
  if (s.ok()) s = match::parse_method(method_text, &params.method);
  if (s.ok()) s = match::check_params(params);
  if (!s.ok()) return report_failure(s);
  if (!map_path.empty() && file_extension(map_path) != "npy")
    return report_failure(Status::usage("--map writes a .npy file, not '" + map_path + "'"));
  s = color::parse_color_check(color_name, hsv_min, hsv_max, full_ratio, &req.color);
  if (!s.ok()) return report_failure(s);
  // Every match / suppression: the version returns the choice (Params::selection, select.hpp),
  // exact on every version and method.
  ChoiceOptions choice{all, max_score_text, min_score_text, min_distance};
  s = parse_choice(choice, metric_text, &params);
  if (!s.ok()) return report_failure(s);
  const bool normed = match::is_normed(params.metric), selecting = params.selection.active();
  const std::string& threshold_text = normed ? min_score_text : max_score_text;
  const uint64_t max_rank = params.selection.max_rank;
  req.metric_text = metric_text;
  req.out_path = out_path;
  req.map_path = map_path;
  req.json = json;
  req.explain = explain;
  req.all = all;
  req.subpixel = subpixel;
  req.selecting = selecting;
  req.normed = normed;
  req.top_k = top_k;
  req.min_distance = min_distance;
  req.max_score = all && !normed ? int64_t(max_rank) : 0;
  req.min_score = all && normed ? choice.min_score : 0.0;
  req.max_rank = max_rank;
  req.threshold_text = threshold_text;
  if (sources || pos.size() > 2) {
    // A batch (it declares its numbered outputs itself, before any matching): one mask for every item, read before the images (match_batch checks each
    // template against it before any matching).
    s = read_mask(mask_path, &params);
    if (!s.ok()) return report_failure(s);
    return match_batch(req, pos, sources, template_path);
  }

  Outputs outputs;  // checked before any file is read, committed after the results are printed
  if (!out_path.empty()) s = image_declare(&outputs, out_path, 3);  // annotations are colour
  if (s.ok() && !map_path.empty()) s = outputs.declare(map_path);
  if (!s.ok()) return report_failure(s);

  const double t0 = now_ms();
  Image source, tpl;
  s = image_read(pos[0], &source);
  if (s.ok()) s = image_read(pos[1], &tpl);
  if (s.ok()) s = read_mask(mask_path, &params);
  if (!s.ok()) return report_failure(s);
  // The library's matcher (include/parvis/parvis.hpp), as a program on the library would call it.
  Matcher matcher;
  Item item;
  item.source_width = source.width;
  item.source_height = source.height;
  item.template_width = tpl.width;
  item.template_height = tpl.height;
  s = matcher.prepare(api::view_of(tpl), options_of(req));
  if (s.ok()) s = matcher.run(api::view_of(source), &item.result);
  if (!s.ok()) return report_failure(s);

  // Outputs: into the set, committed after the results were printed.
  // --out outlines the best match; with --all or --min-distance every reported one.
  if (!out_path.empty()) s = image_put(&outputs, out_path, annotate(source, {outlined(req, item)}, {item_color(0)}));
  if (s.ok() && !map_path.empty()) s = put_map(map_path, item, &outputs);
  if (!s.ok()) return report_failure(s);
  item.total_ms = now_ms() - t0;

  const std::string text = item_output(req, item);
  std::printf("%s%s", text.c_str(), json ? "\n" : "");
  s = outputs.commit();
  if (!s.ok()) return report_failure(s);
  print_item_timings(req, item);
  return kExitOk;
}

}  // namespace parvis
