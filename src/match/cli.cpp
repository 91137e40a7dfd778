// ./main match SOURCE TEMPLATE [--metric ssd|sad] [--method auto|direct|fft] [--out FILE]
//              [--map FILE.npy] [--top K] [--color NAME] [--hsv-min H,S,V] [--hsv-max H,S,V]
//              [--full-ratio R] [--json] [--explain]
// Finds the template in the source (on grey, DESIGN.md's formula), optionally counts the
// pixels of the best match that fall in an HSV range (full / empty capsule, seed 000), and
// writes the annotated source and the score map only once everything has succeeded.
#include <cstdio>
#include <string>
#include <vector>

#include "color/color.hpp"
#include "common/npy.hpp"
#include "common/output.hpp"
#include "common/subcommands.hpp"
#include "image_io.hpp"
#include "match/match_common.hpp"

#include <unistd.h>

namespace parvis {

namespace {

// "H,S,V" -> three integers in 0..255 (H is bounded to 179 by check_range).
Status parse_hsv_triple(const std::string& option, const std::string& text, int* h, int* s, int* v) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == ',') parts.emplace_back();
    else parts.back() += c;
  }
  if (parts.size() != 3) return Status::usage(option + " wants H,S,V (e.g. 100,80,50), got '" + text + "'");
  int* dst[3] = {h, s, v};
  for (int i = 0; i < 3; ++i) {
    int64_t x;
    Status st = parse_int(parts[i], 0, 255, &x);
    if (!st.ok()) return Status::usage(option + ": " + st.message);
    *dst[i] = int(x);
  }
  return Status::Ok();
}

struct ColorRequest {
  bool enabled = false;
  std::string label;  // "blue", or "in-range" for a range given only by numbers
  color::HsvRange range;
  double full_ratio = 0.2;
};

Status parse_color_request(const std::string& name, const std::string& hsv_min,
                           const std::string& hsv_max, double full_ratio, ColorRequest* out) {
  ColorRequest req;
  req.enabled = !name.empty() || !hsv_min.empty() || !hsv_max.empty();
  req.label = name.empty() ? "in-range" : name;
  if (!name.empty()) PARVIS_TRY(color::named_range(name, &req.range));
  color::HsvRange& r = req.range;
  if (!hsv_min.empty()) PARVIS_TRY(parse_hsv_triple("--hsv-min", hsv_min, &r.h_min, &r.s_min, &r.v_min));
  if (!hsv_max.empty()) PARVIS_TRY(parse_hsv_triple("--hsv-max", hsv_max, &r.h_max, &r.s_max, &r.v_max));
  PARVIS_TRY(color::check_range(r));
  if (!(full_ratio >= 0.0 && full_ratio <= 1.0))
    return Status::usage("--full-ratio must lie in [0, 1]");
  req.full_ratio = full_ratio;
  *out = req;
  return Status::Ok();
}

// Red, 2 px wide (3 px on pictures of 1000 px or more, to stay visible when scaled down).
Image annotate(const Image& source, Rect r) {
  Image img = to_rgb(source);
  const int thickness = (source.width >= 1000 || source.height >= 1000) ? 3 : 2;
  draw_rect(&img, r, Rgb{255, 0, 0}, thickness);
  return img;
}

void json_position(Json& j, const match::Position& p) {
  j.begin_object();
  j.key("x").num(p.x);
  j.key("y").num(p.y);
  j.key("score").num(p.score);
  j.end_object();
}

}  // namespace

int cli_match(int argc, char** argv) {
  std::string metric_text = "ssd", method_text = "auto", out_path, map_path;
  std::string color_name, hsv_min, hsv_max;
  int top_k = 1;
  double full_ratio = 0.2;
  bool json = false, explain = false;
  ArgParser args(
      "usage: ./main match SOURCE TEMPLATE [--metric ssd|sad] [--method auto|direct|fft]\n"
      "                    [--out annotated.png] [--map scores.npy] [--top K]\n"
      "                    [--color blue] [--hsv-min H,S,V] [--hsv-max H,S,V] [--full-ratio R]\n"
      "Finds TEMPLATE in SOURCE (both made grey) by the exact sum of squared (ssd) or absolute\n"
      "(sad) differences; the best match has the smallest score, ties go to the smallest y,\n"
      "then x. With --color, counts the pixels of the best match inside an HSV range (OpenCV's\n"
      "8-bit convention: H 0..179, S and V 0..255) and calls it full or empty.");
  args.option("--metric", &metric_text, "ssd|sad", "the score (default ssd)");
  args.option("--method", &method_text, "auto|direct|fft",
              "direct sums, or SSD through FFT cross-correlation (default auto)");
  args.option("--out", &out_path, "FILE", "the source with a red rectangle on the best match");
  args.option("--map", &map_path, "FILE.npy", "every score, float64, shape (H-h+1, W-w+1)");
  args.option("--top", &top_k, "K", "list the K best positions (default 1)");
  args.option("--color", &color_name, "NAME", "count the best match's pixels in a named range: blue");
  args.option("--hsv-min", &hsv_min, "H,S,V", "lower bounds of the range (default blue's 100,80,50)");
  args.option("--hsv-max", &hsv_max, "H,S,V", "upper bounds of the range (default blue's 130,255,255)");
  args.option("--full-ratio", &full_ratio, "R",
              "full when at least this fraction is in range (default 0.2)");
  args.flag("--json", &json, "print the result as one JSON object");
  args.flag("--explain", &explain, "also say which method ran and why (differs between versions)");
  std::vector<std::string> pos;
  if (int rc = args.parse_command(argc, argv, &pos); rc >= 0) return rc;
  Status s;
  if (pos.size() != 2) return report_failure(Status::usage("match needs SOURCE and TEMPLATE (see --help)"));

  // Every usage error before any file is read.
  match::Params params;
  params.top_k = top_k;
  params.want_map = !map_path.empty();
  s = match::parse_metric(metric_text, &params.metric);
  if (s.ok()) s = match::parse_method(method_text, &params.method);
  if (s.ok()) s = match::check_params(params);
  if (!s.ok()) return report_failure(s);
  if (!map_path.empty() && file_extension(map_path) != "npy")
    return report_failure(Status::usage("--map writes a .npy file, not '" + map_path + "'"));
  ColorRequest color_req;
  s = parse_color_request(color_name, hsv_min, hsv_max, full_ratio, &color_req);
  if (!s.ok()) return report_failure(s);

  const double t0 = now_ms();
  Image source, tpl;
  s = image_read(pos[0], &source);
  if (s.ok()) s = image_read(pos[1], &tpl);
  if (!s.ok()) return report_failure(s);
  const Image gray_source = to_gray(source);
  const Image gray_tpl = to_gray(tpl);

  match::MatcherPtr matcher;
  match::Result res;
  s = match::matcher_create(gray_tpl, params, &matcher);
  if (s.ok()) s = match::matcher_run(matcher.get(), gray_source, &res);
  if (!s.ok()) return report_failure(s);
  if (res.best.empty()) return report_failure(Status::runtime("match returned no position"));
  const match::Position best = res.best[0];
  const Rect best_rect{best.x, best.y, tpl.width, tpl.height};

  color::CountResult count;
  double color_ms = 0;
  if (color_req.enabled) {
    const double tc = now_ms();
    Image rgb_of_grey;  // a grey source has no colour: its pixels count as grey (S = 0)
    if (source.channels != 3) rgb_of_grey = to_rgb(source);
    s = color::count_in_rect(source.channels == 3 ? source : rgb_of_grey, best_rect,
                             color_req.range, &count);
    color_ms = now_ms() - tc;
    if (!s.ok()) return report_failure(s);
  }

  // Outputs: encode everything first, then write; if a later write fails, remove the
  // earlier ones, so that a failure leaves no file behind.
  std::vector<uint8_t> out_bytes, map_bytes;
  if (!out_path.empty()) s = image_encode(annotate(source, best_rect), file_extension(out_path), &out_bytes);
  if (s.ok() && !map_path.empty())
    s = npy_encode(DType::F64, res.map.data(),
                   {size_t(res.map_height), size_t(res.map_width)}, &map_bytes);
  if (!s.ok()) return report_failure(s);
  if (!out_path.empty()) s = write_file_atomic(out_path, out_bytes.data(), out_bytes.size());
  if (s.ok() && !map_path.empty()) {
    s = write_file_atomic(map_path, map_bytes.data(), map_bytes.size());
    if (!s.ok() && !out_path.empty() && out_path != "-") ::unlink(out_path.c_str());
  }
  if (!s.ok()) return report_failure(s);
  const double total_ms = now_ms() - t0;

  const double fraction = color_req.enabled ? double(count.matching) / double(count.total) : 0.0;
  const bool full = fraction >= color_req.full_ratio;
  if (json) {
    Json j;
    j.begin_object();
    j.key("operation").str("match");
    j.key("metric").str(match::metric_name(params.metric));
    j.key("method").str(match::method_name(params.method));
    j.key("source").begin_object().key("width").num(source.width).key("height").num(source.height).end_object();
    j.key("template").begin_object().key("width").num(tpl.width).key("height").num(tpl.height).end_object();
    j.key("x").num(best.x);
    j.key("y").num(best.y);
    j.key("score").num(best.score);
    j.key("top").begin_array();
    for (const match::Position& p : res.best) json_position(j, p);
    j.end_array();
    if (!map_path.empty())
      j.key("map").begin_object().key("width").num(res.map_width).key("height").num(res.map_height).end_object();
    if (color_req.enabled) {
      const color::HsvRange& r = color_req.range;
      j.key("color").begin_object();
      j.key("name").str(color_req.label);
      j.key("hsv_min").begin_array().num(r.h_min).num(r.s_min).num(r.v_min).end_array();
      j.key("hsv_max").begin_array().num(r.h_max).num(r.s_max).num(r.v_max).end_array();
      j.key("matching").num(count.matching);
      j.key("total").num(count.total);
      j.key("fraction").num(fraction);
      j.key("full_ratio").num(color_req.full_ratio);
      j.key("verdict").str(full ? "full" : "empty");
      j.end_object();
    }
    if (explain) {
      j.key("method_used").str(match::method_name(res.method_used));
      j.key("explain").str(res.explain);
    }
    j.end_object();
    std::printf("%s\n", j.text().c_str());
  } else {
    std::printf("match %s at x=%d y=%d score=%llu (template %dx%d in %dx%d)\n",
                match::metric_name(params.metric), best.x, best.y,
                static_cast<unsigned long long>(best.score), tpl.width, tpl.height, source.width,
                source.height);
    for (size_t i = 1; i < res.best.size(); ++i)
      std::printf("  #%zu at x=%d y=%d score=%llu\n", i + 1, res.best[i].x, res.best[i].y,
                  static_cast<unsigned long long>(res.best[i].score));
    if (color_req.enabled)
      std::printf("color: %llu/%llu %s pixels (%.1f%%) -> %s\n",
                  static_cast<unsigned long long>(count.matching),
                  static_cast<unsigned long long>(count.total), color_req.label.c_str(),
                  100.0 * fraction, full ? "full" : "empty");
    if (explain)
      std::printf("method: %s (%s)\n", match::method_name(res.method_used), res.explain.c_str());
  }
  print_timings("match", total_ms, res.timings);
  if (color_req.enabled) print_timings("color", color_ms, count.timings);
  return kExitOk;
}

}  // namespace parvis
