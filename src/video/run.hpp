// One video run, end to end: source -> reader thread -> pipeline -> one result line per frame
// (text, CSV or JSON lines), the annotated output and saved frames, and the summary. Shared by
// `./main video` (cli.cpp) and `./main bench video` (bench.cpp).
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/image.hpp"
#include "common/output.hpp"
#include "common/status.hpp"
#include "video/source.hpp"
#include "video/video.hpp"

namespace parvis::video {

enum class OutputFormat { Text, Csv, Json };

struct SaveFrame {
  int64_t index = 0;
  std::string path;
};

struct RunOptions {
  SourceOptions source;
  PipelineConfig pipeline;
  int64_t first = 0, last = -1;  // --frames A:B, [first, last); last < 0: to the end
  OutputFormat format = OutputFormat::Text;
  bool times = true;             // frame times and frames/s in the results (--no-time: off)
  std::FILE* results = stdout;   // where the lines go
  bool progress = false;         // the progress line on stderr
  std::string out_path;          // --out ("" = none)
  std::vector<SaveFrame> save;   // --save-frame N:FILE
  // Where --out and --save-frame were declared before any work (the CLI); run_video commits
  // it after the summary. Null: run_video declares them itself.
  Outputs* outputs = nullptr;
  int readahead = 3;             // frames the reader may keep ready beyond the pipeline's depth
};

struct RunStats {
  int64_t frames = 0, matches = 0, full = 0, empty = 0;  // full / empty: over the matches
  double seconds = 0;       // first frame asked for -> last result written
  double steady_seconds = 0;  // first result written -> last (frames - 1 frames' worth)
  double prepare_ms = 0;    // sum over frames: reading thread's conversion
  double frame_ms = 0;      // sum over frames: FrameResult::ms
  // A device pipeline's split (FrameResult::link_ms, device_ms), summed over its frames but the
  // first (which also pays for the matcher's plans and graph capture), as steady_seconds.
  double link_ms = 0, device_ms = 0;
  int64_t device_frames = 0;
  FrameFormat format;
};

// Runs the whole stream. On failure the lines of the frames before it have been written, no
// output file is left behind, and the Status says what went wrong (one line).
Status run_video(const RunOptions& opts, const Image& gray_template, RunStats* stats);

}  // namespace parvis::video
