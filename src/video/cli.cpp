// ./main video IN TEMPLATE [options] — seed 000's production line: every frame of a video
// matched against a template prepared once, the matched capsule called full or empty by its
// pixels in an HSV range. One result line per frame on stdout, a summary at the end.
#include <csignal>
#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

#include "color/color.hpp"
#include "cli/cli.hpp"
#include "common/config.hpp"
#include "common/output.hpp"
#include "cli/subcommands.hpp"
#include "image_io.hpp"
#include "match/cli_match.hpp"
#include "match/match_common.hpp"
#include "video/run.hpp"

namespace parvis {

namespace {

// "A:B" (frames A .. B-1), "A:" (A to the end), ":B", or "N" (that frame alone).
Status parse_frames(const std::string& text, int64_t* first, int64_t* last) {
  const size_t colon = text.find(':');
  int64_t a = 0, b = -1;
  Status s;
  if (colon == std::string::npos) {
    s = parse_int(text, 0, INT64_MAX - 1, &a);
    b = a + 1;
  } else {
    if (colon > 0) s = parse_int(text.substr(0, colon), 0, INT64_MAX - 1, &a);
    if (s.ok() && colon + 1 < text.size()) s = parse_int(text.substr(colon + 1), 1, INT64_MAX, &b);
  }
  if (!s.ok()) return Status::usage("--frames wants A:B, A:, :B or N (frame numbers from 0), got '" + text + "'");
  if (b >= 0 && b <= a) return Status::usage("--frames " + text + " selects no frame (B must be greater than A)");
  *first = a, *last = b;
  return Status::Ok();
}

Status parse_save_frame(const std::string& text, video::SaveFrame* out) {
  const size_t colon = text.find(':');
  int64_t n = 0;
  if (colon == std::string::npos || colon + 1 == text.size() ||
      !parse_int(text.substr(0, colon), 0, INT64_MAX, &n).ok())
    return Status::usage("--save-frame wants N:FILE (e.g. 12:frame12.ppm), got '" + text + "'");
  out->index = n;
  out->path = text.substr(colon + 1);
  const std::string ext = file_extension(out->path);
  if (ext != "ppm" && ext != "bmp" && ext != "png" && ext != "pgm" && ext != "jpg" && ext != "jpeg")
    return Status::usage("--save-frame writes an image (.ppm, .bmp, .png), not '" + out->path + "'");
  if (ext == "pgm") return Status::usage("--save-frame writes the frame's RGB: .ppm, .bmp or .png, not .pgm");
  return Status::Ok();
}

}  // namespace

int cli_video(int argc, char** argv) {
  std::string metric_text = "ssd", method_text = "auto", color_name, hsv_min, hsv_max;
  std::string out_path, frames_text, raw_size, pix_fmt, range_text = "auto", matrix_text = "bt601";
  std::string ffmpeg = "ffmpeg";
  std::vector<std::string> save_texts;
  double full_ratio = 0.2;
  int jobs = 1, top_k = 1;
  match_cli::ChoiceOptions choice;
  bool csv = false, json = false, no_time = false;
  ArgParser args(
      "usage: ./main video IN TEMPLATE [--metric ssd|sad] [--method auto|direct|fft]\n"
      "                    [--top K] [--all --max-score S] [--min-distance D]\n"
      "                    [--color blue | --hsv-min H,S,V --hsv-max H,S,V] [--full-ratio R]\n"
      "                    [--out annotated.y4m] [--csv | --json] [--frames A:B]\n"
      "                    [--raw WxH --pix-fmt rgb24|bgr24|gray|yuv420p|yuv422p|yuv444p]\n"
      "Matches TEMPLATE (prepared once) in every frame of IN, on grey, exactly as ./main match\n"
      "does on that frame written out as an image; with --color, counts the matched rectangle's\n"
      "pixels in an HSV range and calls it full or empty. IN: a Y4M file or - (Y4M on stdin;\n"
      "4:2:0, 4:2:2, 4:1:1, 4:4:4, mono), raw frames with --raw, or any other video through\n"
      "ffmpeg. One line per frame on stdout (frame, x, y, score, count, fraction, verdict,\n"
      "frame time), then a summary; a progress line on stderr when it is a terminal. With\n"
      "--all, --top K or --min-distance a frame reports every chosen match (as ./main match\n"
      "chooses them), each with its own verdict: a frame line and one line per match (text), a\n"
      "row per match (CSV; a frame without one: match 0, empty fields), or a \"matches\" array.\n"
      "YUV becomes RGB by one integer formula (docs/DESIGN.md, \"Video\"): BT.601, full or\n"
      "limited range as the Y4M tag XCOLORRANGE says (limited without it).");
  args.option("--metric", &metric_text, "ssd|sad", "the score (default ssd)");
  args.option("--method", &method_text, "auto|direct|fft", "as ./main match (default auto)");
  args.option("--top", &top_k, "K", "report the K best positions of each frame (default 1)");
  args.flag("--all", &choice.all, "report every position of a frame scoring at most --max-score");
  args.option("--max-score", &choice.max_score_text, "S", "with --all: the largest score reported");
  args.option("--min-distance", &choice.min_distance, "D",
              "no two reported matches of a frame closer than D in both x and y (the better one is kept)");
  args.option("--color", &color_name, "NAME", "count each match's pixels in a named range: blue");
  args.option("--hsv-min", &hsv_min, "H,S,V", "lower bounds of the range (default blue's 100,80,50)");
  args.option("--hsv-max", &hsv_max, "H,S,V", "upper bounds of the range (default blue's 130,255,255)");
  args.option("--full-ratio", &full_ratio, "R", "full when at least this fraction is in range (default 0.2)");
  args.option("--out", &out_path, "FILE",
              "the frames with a red rectangle on each match: .y4m, or through ffmpeg (.mp4, .mkv, ...)");
  args.flag("--csv", &csv, "results as CSV (a header line, then one row per frame; summary on stderr)");
  args.flag("--json", &json, "results as JSON lines (one object per frame, then {\"summary\":...})");
  args.option("--frames", &frames_text, "A:B", "only frames A .. B-1 (from 0; A:, :B, or N alone)");
  args.option("--raw", &raw_size, "WxH", "IN holds raw frames of this size, no header");
  args.option("--pix-fmt", &pix_fmt, "FMT", "layout of raw frames: rgb24 (default), bgr24, gray, yuv420p, yuv422p, yuv444p");
  args.option("--range", &range_text, "auto|full|limited",
              "YUV range: auto = the Y4M XCOLORRANGE tag, limited without it (raw YUV: limited)");
  args.option("--matrix", &matrix_text, "bt601|bt709", "YUV matrix (default bt601)");
  args.repeated("--save-frame", &save_texts, "N:FILE",
                "also write frame N as matched (its RGB) to FILE (.ppm, .bmp, .png); repeatable");
  args.flag("--no-time", &no_time, "leave the times out of the results (reproducible output)");
  args.option("--jobs", &jobs, "N",
              "match N frames at once, one matcher each (default 1); with omp set OMP_NUM_THREADS "
              "to cores / N");
  args.option("--ffmpeg", &ffmpeg, "PATH", "the ffmpeg to run for other formats (default: ffmpeg on PATH)");
  args.max_pixels_option();
  std::vector<std::string> pos;
  if (int rc = args.parse_command(argc, argv, &pos); rc >= 0) return rc;
  if (pos.size() != 2) return report_failure(Status::usage("video needs IN and TEMPLATE (see --help)"));

  // Every usage error before any file is read.
  video::RunOptions o;
  o.source.path = pos[0];
  o.source.raw_size = raw_size;
  o.source.ffmpeg = ffmpeg;
  match::Params& params = o.pipeline.match;
  params.top_k = top_k;
  Status s = match::parse_metric(metric_text, &params.metric);
  if (s.ok()) s = match::parse_method(method_text, &params.method);
  if (s.ok()) s = match::check_params(params);
  if (s.ok() && match::is_normed(params.metric))
    s = Status::usage("video matches with --metric ssd or sad (" + metric_text + " is for ./main match)");
  if (s.ok()) s = match_cli::parse_choice(choice, metric_text, &params);
  if (s.ok())
    s = color::parse_color_check(color_name, hsv_min, hsv_max, full_ratio, &o.pipeline.color);
  if (s.ok() && !frames_text.empty()) s = parse_frames(frames_text, &o.first, &o.last);
  if (s.ok() && csv && json) s = Status::usage("--csv and --json exclude each other");
  if (s.ok() && (jobs < 1 || jobs > 64)) s = Status::usage("--jobs must lie in 1..64");
  o.pipeline.jobs = jobs;
  o.pipeline.host_convert = config::tuning_flag("video.host_convert", false);
  if (s.ok() && !pix_fmt.empty() && raw_size.empty()) s = Status::usage("--pix-fmt goes with --raw WxH");
  if (s.ok() && !pix_fmt.empty()) {
    video::FrameFormat f;
    s = video::parse_pix_fmt(pix_fmt, &f);
    o.source.pix_fmt = pix_fmt;
  }
  if (s.ok()) {
    if (range_text == "auto") o.source.range = video::RangeChoice::Auto;
    else if (range_text == "full") o.source.range = video::RangeChoice::Full;
    else if (range_text == "limited") o.source.range = video::RangeChoice::Limited;
    else s = Status::usage("--range must be auto, full or limited");
  }
  if (s.ok()) {
    if (matrix_text == "bt601") o.source.matrix = video::YuvMatrix::Bt601;
    else if (matrix_text == "bt709") o.source.matrix = video::YuvMatrix::Bt709;
    else s = Status::usage("--matrix must be bt601 or bt709");
  }
  if (s.ok() && (out_path == "-" || (!out_path.empty() && file_extension(out_path).empty())))
    s = Status::usage("--out wants a file name with an extension (.y4m, or one ffmpeg knows), not '" + out_path + "'");
  for (const std::string& t : save_texts) {
    if (!s.ok()) break;
    video::SaveFrame sf;
    s = parse_save_frame(t, &sf);
    o.save.push_back(sf);
  }
  if (!s.ok()) return report_failure(s);
  o.format = json ? video::OutputFormat::Json : csv ? video::OutputFormat::Csv : video::OutputFormat::Text;
  o.times = !no_time;
  o.out_path = out_path;
  o.progress = ::isatty(2) != 0;
  // Every output checked before any file is read (common/output.hpp).
  Outputs outputs;
  o.outputs = &outputs;
  if (!out_path.empty()) s = outputs.declare(out_path);
  for (size_t i = 0; s.ok() && i < o.save.size(); ++i) s = image_declare(&outputs, o.save[i].path);
  if (!s.ok()) return report_failure(s);

  Image tpl;
  s = image_read(pos[1], &tpl);
  if (!s.ok()) return report_failure(s);
  // A dead ffmpeg must be an error we report, not a signal that kills us mid-write.
  std::signal(SIGPIPE, SIG_IGN);
  video::RunStats stats;
  const double t0 = now_ms();
  s = video::run_video(o, to_gray(tpl), &stats);
  if (!s.ok()) return report_failure(s);
  const double total_ms = now_ms() - t0;
  if (stats.frames > 0)
    std::fprintf(stderr,
                 "time video: total %.3f ms, %lld frames of %s: %.3f ms per frame converting on the "
                 "reader thread, %.3f ms per frame of work (convert + match + colour)\n",
                 total_ms, (long long)stats.frames, stats.format.describe().c_str(),
                 stats.prepare_ms / double(stats.frames), stats.frame_ms / double(stats.frames));
  return kExitOk;
}

}  // namespace parvis
