// One video run, end to end (run.hpp). The lines are formatted into a fixed buffer (no
// allocation per frame); timings are the only fields that differ between runs, and --no-time
// leaves them out.
#include "video/run.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdlib>
#include <memory>

#include "cli/cli.hpp"
#include "common/output.hpp"
#include "image_io.hpp"
#include "video/reader.hpp"
#include "video/sink.hpp"

namespace parvis::video {

namespace {

// The shortest of %.15g..%.17g that reads back as the same double (as Json::num does).
void shortest(char* buf, size_t n, double v) {
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, n, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) return;
  }
}

// Each frame's result: one line for its match (the default), or, when a frame may report
// several (--all, --top K, --min-distance), a line for the frame and one per match (text), a row
// per match (CSV: a frame without one has a row with match 0 and empty fields), or one object
// with a "matches" array (JSON lines).
class ResultWriter {
 public:
  explicit ResultWriter(const RunOptions& o)
      : o_(o), several_(o.pipeline.match.selection.active() || o.pipeline.match.top_k > 1) {
    line_.reserve(512);
  }

  void header() {
    if (o_.format != OutputFormat::Csv) return;
    std::fprintf(o_.results, "frame,%sx,y,score%s%s\n", several_ ? "match," : "",
                 o_.pipeline.color.enabled ? ",matching,total,fraction,verdict" : "", o_.times ? ",ms" : "");
  }

  void frame(const FrameResult& r) {
    line_.clear();
    if (several_) {
      several(r);
    } else {
      const FrameMatch& m = r.matches.at(0);
      const long long index = r.index;
      switch (o_.format) {
        case OutputFormat::Text: add("frame %lld: ", index); break;
        case OutputFormat::Csv: add("%lld,", index); break;
        case OutputFormat::Json: add("{\"frame\": %lld, ", index); break;
      }
      match_fields(r, m);
      frame_time(r);
      if (o_.format == OutputFormat::Json) add("}");
      add("\n");
    }
    std::fputs(line_.c_str(), o_.results);
  }

  void summary(const RunStats& s) {
    const double fps = s.seconds > 0 ? double(s.frames) / s.seconds : 0.0;
    const long long frames = s.frames, matches = s.matches, full = s.full, empty = s.empty;
    const bool color = o_.pipeline.color.enabled;
    switch (o_.format) {
      case OutputFormat::Text:
      case OutputFormat::Csv: {
        // CSV stays a table: its summary goes to stderr.
        std::FILE* f = o_.format == OutputFormat::Csv ? stderr : o_.results;
        std::fprintf(f, "summary: %lld frames", frames);
        if (several_) std::fprintf(f, ", %lld match%s", matches, matches == 1 ? "" : "es");
        if (color) std::fprintf(f, ", %lld full, %lld empty", full, empty);
        if (o_.times) std::fprintf(f, ", %.3f s, %.1f frames/s", s.seconds, fps);
        std::fprintf(f, "\n");
        break;
      }
      case OutputFormat::Json:
        std::fprintf(o_.results, "{\"summary\": {\"frames\": %lld", frames);
        if (several_) std::fprintf(o_.results, ", \"matches\": %lld", matches);
        if (color) std::fprintf(o_.results, ", \"full\": %lld, \"empty\": %lld", full, empty);
        if (o_.times) std::fprintf(o_.results, ", \"seconds\": %.6f, \"fps\": %.3f", s.seconds, fps);
        std::fprintf(o_.results, "}}\n");
        break;
    }
  }

 private:
  // x, y, score and the colour verdict of one match, in the output's form.
  void match_fields(const FrameResult& r, const FrameMatch& m) {
    const unsigned long long score = m.at.score, matching = m.matching, total = m.total;
    const double fraction = r.have_color ? double(m.matching) / double(m.total) : 0.0;
    const char* verdict = m.full ? "full" : "empty";
    switch (o_.format) {
      case OutputFormat::Text:
        add("x=%d y=%d score=%llu", m.at.x, m.at.y, score);
        if (r.have_color)
          add(" %s=%llu/%llu (%.1f%%) %s", o_.pipeline.color.label.c_str(), matching, total, 100.0 * fraction,
              verdict);
        break;
      case OutputFormat::Csv: {
        add("%d,%d,%llu", m.at.x, m.at.y, score);
        char frac[40];
        shortest(frac, sizeof frac, fraction);
        if (r.have_color) add(",%llu,%llu,%s,%s", matching, total, frac, verdict);
        break;
      }
      case OutputFormat::Json: {
        add("\"x\": %d, \"y\": %d, \"score\": %llu", m.at.x, m.at.y, score);
        char frac[40];
        shortest(frac, sizeof frac, fraction);
        if (r.have_color)
          add(", \"matching\": %llu, \"total\": %llu, \"fraction\": %s, \"verdict\": \"%s\"", matching, total, frac,
              verdict);
        break;
      }
    }
  }

  void frame_time(const FrameResult& r) {
    if (!o_.times) return;
    switch (o_.format) {
      case OutputFormat::Text: add(" %.3f ms", r.ms); break;
      case OutputFormat::Csv: add(",%.3f", r.ms); break;
      case OutputFormat::Json: add(", \"ms\": %.3f", r.ms); break;
    }
  }

  void several(const FrameResult& r) {
    const long long index = r.index;
    const size_t n = r.matches.size();
    size_t full = 0;
    for (const FrameMatch& m : r.matches) full += m.full ? 1 : 0;
    switch (o_.format) {
      case OutputFormat::Text:
        add("frame %lld: %zu match%s", index, n, n == 1 ? "" : "es");
        if (r.have_color) add(" (%zu full, %zu empty)", full, n - full);
        frame_time(r);
        add("\n");
        for (const FrameMatch& m : r.matches) {
          add("  ");
          match_fields(r, m);
          add("\n");
        }
        break;
      case OutputFormat::Csv:
        if (n == 0) {
          add("%lld,0,,,%s", index, r.have_color ? ",,,," : "");
          frame_time(r);
          add("\n");
        }
        for (size_t i = 0; i < n; ++i) {
          add("%lld,%zu,", index, i + 1);
          match_fields(r, r.matches[i]);
          frame_time(r);
          add("\n");
        }
        break;
      case OutputFormat::Json:
        add("{\"frame\": %lld, \"matches\": [", index);
        for (size_t i = 0; i < n; ++i) {
          add(i ? ", {" : "{");
          match_fields(r, r.matches[i]);
          add("}");
        }
        add("]");
        if (r.have_color) add(", \"full\": %zu, \"empty\": %zu", full, n - full);
        frame_time(r);
        add("}\n");
        break;
    }
  }

  // Appends to line_ (its memory stays from frame to frame).
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  void add(const char* fmt, ...) {
    char buf[512];
    va_list args;
    va_start(args, fmt);
    const int n = std::vsnprintf(buf, sizeof buf, fmt, args);
    va_end(args);
    if (n > 0) line_.append(buf, std::min(size_t(n), sizeof buf - 1));
  }

  const RunOptions& o_;
  const bool several_;
  std::string line_;
};

// "\rframe 120 of 795, 245.1 frames/s" on stderr, at most five times a second.
class Progress {
 public:
  Progress(bool on, int64_t total) : on_(on), total_(total) {}
  void update(int64_t done, double elapsed_ms) {
    if (!on_ || elapsed_ms - last_ms_ < 200.0) return;
    last_ms_ = elapsed_ms;
    const double fps = elapsed_ms > 0 ? 1000.0 * double(done) / elapsed_ms : 0.0;
    if (total_ > 0) std::fprintf(stderr, "\rframe %lld of %lld, %.1f frames/s ", (long long)done, (long long)total_, fps);
    else std::fprintf(stderr, "\rframe %lld, %.1f frames/s ", (long long)done, fps);
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
    shown_ = false;
  }
  ~Progress() { clear(); }

 private:
  bool on_;
  int64_t total_;
  double last_ms_ = -1e9;
  bool shown_ = false;
};

}  // namespace

Status run_video(const RunOptions& o, const Image& gray_template, RunStats* stats) {
  *stats = RunStats();
  Outputs own;  // before the sink: ffmpeg is stopped before its temporary goes
  Outputs* outputs = o.outputs;
  if (!outputs) {
    outputs = &own;
    if (!o.out_path.empty()) PARVIS_TRY(outputs->declare(o.out_path));
    for (const SaveFrame& f : o.save) PARVIS_TRY(image_declare(outputs, f.path));
  }
  std::unique_ptr<FrameSource> source;
  PARVIS_TRY(open_source(o.source, &source));
  // Whole frames in RGB on the host only where an output needs them.
  PipelineConfig config = o.pipeline;
  config.need_host_rgb = !o.save.empty() || (!o.out_path.empty() && sink_needs_rgb(o.out_path, source->format()));
  std::unique_ptr<Pipeline> pipeline;
  PARVIS_TRY(make_pipeline(gray_template, config, &pipeline));
  stats->format = source->format();

  const int depth = pipeline->depth();
  FrameReader reader(source.get(), pipeline.get(), depth + o.readahead, o.first, o.last);
  PARVIS_TRY(reader.start());  // the template must fit the frames: checked here
  std::unique_ptr<AnnotatedSink> sink;
  if (!o.out_path.empty()) PARVIS_TRY(open_sink(outputs, o.out_path, source->format(), o.source.ffmpeg, &sink));

  // --save-frame: encoded when the frame passes, put into the outputs once everything has succeeded.
  std::vector<std::vector<uint8_t>> saved(o.save.size());
  std::vector<bool> saved_done(o.save.size(), false);

  int64_t known = source->frame_count();
  if (known >= 0) {
    if (o.last >= 0 && o.last < known) known = o.last;
    known = known > o.first ? known - o.first : 0;
  }
  Progress progress(o.progress, known);
  ResultWriter writer(o);
  writer.header();

  // Frames in flight, oldest first (at most `depth`).
  std::vector<FrameSlot*> in_flight(size_t(depth), nullptr);
  size_t head = 0, count = 0;
  FrameResult res;
  std::vector<Rect> rects;  // the matched rectangles, for --out
  const double t0 = now_ms();
  double t_first = t0;
  Status failure;
  bool more = true;
  while (more || count > 0) {
    if (more && count < size_t(depth)) {
      FrameSlot* slot = nullptr;
      failure = reader.next(&slot);
      if (slot) {
        failure = pipeline->submit(slot);
        if (!failure.ok()) break;
        in_flight[(head + count) % in_flight.size()] = slot;
        ++count;
        continue;
      }
      more = false;  // the end of the range, or a failure after the frames before it
      if (count == 0) break;
    }
    FrameSlot* slot = in_flight[head];
    head = (head + 1) % in_flight.size();
    --count;
    Status s = pipeline->collect(&res);
    rects.clear();
    for (const FrameMatch& m : res.matches)
      rects.push_back(Rect{m.at.x, m.at.y, pipeline->template_width(), pipeline->template_height()});
    if (s.ok() && sink) s = sink->write(*slot, rects);
    for (size_t i = 0; s.ok() && i < o.save.size(); ++i)
      if (o.save[i].index == res.index && slot->have_rgb) {
        s = image_encode(slot->rgb, file_extension(o.save[i].path), &saved[i]);
        saved_done[i] = s.ok();
      }
    const double prepare_ms = slot->prepare_ms;
    reader.release(slot);
    if (!s.ok()) {
      failure = s;
      break;
    }
    progress.clear();
    writer.frame(res);
    if (std::fflush(o.results) != 0) {
      failure = Status::runtime("cannot write the results (the reader of stdout went away?)");
      break;
    }
    if (stats->frames == 0) t_first = now_ms();
    ++stats->frames;
    stats->matches += int64_t(res.matches.size());
    if (res.have_color)
      for (const FrameMatch& m : res.matches) ++(m.full ? stats->full : stats->empty);
    stats->prepare_ms += prepare_ms;
    stats->frame_ms += res.ms;
    if (res.link_ms >= 0 && stats->frames > 1) {  // steady state, as steady_seconds
      stats->link_ms += res.link_ms;
      stats->device_ms += res.device_ms;
      ++stats->device_frames;
    }
    progress.update(stats->frames, now_ms() - t0);
  }
  // After a failure, frames may still be in flight on the pipeline's workers, in slots the
  // reader owns: let them finish before anything is torn down.
  while (count > 0) {
    FrameResult ignored;
    (void)pipeline->collect(&ignored);
    reader.release(in_flight[head]);
    head = (head + 1) % in_flight.size();
    --count;
  }
  const double t_end = now_ms();
  stats->seconds = (t_end - t0) / 1000.0;
  stats->steady_seconds = (t_end - t_first) / 1000.0;
  progress.clear();
  if (!failure.ok()) return failure;

  if (stats->frames == 0) {
    if (o.first > 0 || o.last >= 0)
      return Status::bad_input(source->name() + ": no frame in the range of --frames");
    return Status::bad_input(source->name() + " holds no frame");
  }
  for (size_t i = 0; i < o.save.size(); ++i)
    if (!saved_done[i])
      return Status::bad_input("--save-frame " + std::to_string(o.save[i].index) + ": no such frame in " +
                               source->name() + (o.first > 0 || o.last >= 0 ? " (within --frames)" : ""));
  if (sink) PARVIS_TRY(sink->finish());
  for (size_t i = 0; i < o.save.size(); ++i) PARVIS_TRY(outputs->put(o.save[i].path, saved[i].data(), saved[i].size()));
  writer.summary(*stats);
  if (std::fflush(o.results) != 0 || std::ferror(o.results))
    return Status::runtime("cannot write the results (the reader of stdout went away?)");
  return outputs->commit();  // nothing before this replaced any file
}

}  // namespace parvis::video
