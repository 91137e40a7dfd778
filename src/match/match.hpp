// Template matching (seeds 000 and 003): SSD or SAD of a grey template slid over a grey
// source. Every version defines the entry points below; all must agree with seq bit for bit.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/timing.hpp"
#include "common/image.hpp"
#include "common/status.hpp"

namespace parvis::match {

namespace fft {
struct Tuning;  // the CPU FFT's (src/match/fft_tuning.hpp)
}

// NCC: OpenCV's TM_CCOEFF_NORMED; CCorrNormed: TM_CCORR_NORMED (src/match/ncc.hpp). Both are
// "largest is best"; Position::score holds their rank key (ncc::key_of).
enum class Metric { SSD, SAD, NCC, CCorrNormed };
enum class Method { Auto, Direct, FFT };

// A batch's one source matched by several templates (./main match SOURCE T1 T2 ...,
// src/match/batch.cpp): a version may keep here what it computed from the source alone (the
// CPU FFT: the source's 2-D spectrum and norms, cpu_fft.cpp) and reuse it for the next
// template, when the source is the same image object, unchanged, of the same padded size. Valid
// while that image lives unchanged; a version that keeps nothing ignores it (the answers are the
// same either way: only the time differs).
struct SourceCache {
  struct State {
    virtual ~State() = default;
  };
  std::unique_ptr<State> state;
  // Runs that made / reused what the state keeps (--explain: "batch: WHAT made (kept for the
  // next templates)" or "batch: WHAT reused"; bench): the source's upload (cuda-opt: the grey
  // source on the device, copied there for every template) and the source's transform (the CPU
  // FFT's 2-D spectrum; cuda-opt's cuFFT spectrum and integral image, or its NTT row transforms).
  struct Tally {
    const char* what;
    int made = 0, reused = 0;
  };
  Tally upload{"the source's upload"}, transform{"the source's transform"};
};

// Every match, or the K best at least D apart (--all --max-score/--min-score S, --min-distance D;
// select.hpp). matcher_run returns that choice in Result::best: a version picks it from its exact
// ranks (select.hpp: select_ranks; past a double FFT's rounding bound, settle makes them exact
// wherever the choice could look), or on the device, and otherwise from the map it makes for it
// (finish_choice).
struct Selection {
  bool all = false;       // every position ranking at most max_rank
  uint64_t max_rank = 0;  // the threshold as a rank (rank_of: for the normed metrics, a key)
  int min_distance = 0;   // > 1: a kept position drops those closer than D in x and in y
  bool active() const { return all || min_distance > 1; }
};

struct Params {
  Metric metric = Metric::SSD;
  Method method = Method::Auto;
  int top_k = 1;          // how many best positions to report (>= 1)
  bool want_map = false;  // fill Result::map with every score (--map)
  Selection selection;    // the choice Result::best holds, when active()
  // CUDA versions: time each stage with events into Result::timings.stages (cuda-opt pays one
  // extra, ungraphed run for it). For the bench; CPU versions ignore it.
  bool stage_times = false;
  // Set by a batch of templates on one source (SourceCache above); null: nothing is kept.
  SourceCache* source_cache = nullptr;
  // --mask (src/match/mask.hpp): grey, the template's size; a nonzero pixel counts, a 0 is
  // ignored by every metric. Empty: every pixel counts.
  Image mask;
  // The CPU versions' FFT tuning, where the caller sets one (the selftest); null: PARVIS_TUNING's.
  // Read once, when the matcher is made. Other versions ignore it.
  const fft::Tuning* fft_tuning = nullptr;
};

// One candidate position: top-left corner of the template in the source.
struct Position {
  int x = 0, y = 0;
  // The exact integer SSD or SAD; for NCC / ccorr-normed the rank key of the double score
  // (ncc::key_of: larger score, smaller key), so that one order ranks every metric.
  uint64_t score = 0;
};

struct Result {
  // The top_k best positions: smallest score first; ties go to the smallest y, then x. With an
  // active Params::selection, its choice (in the same order).
  std::vector<Position> best;
  bool chosen = false;  // best holds the selection already (set by the version; finish_choice)
  int map_width = 0, map_height = 0;  // W - w + 1, H - h + 1
  std::vector<double> map;            // row-major scores (NCC: the doubles), only when want_map
  Method method_used = Method::Direct;
  std::string explain;  // why `auto` chose the method it did
  Timings timings;
};

// A matcher prepared once from a template (spectra, plans, device buffers live here)
// and run on many sources or video frames. Each version defines `Matcher`.
struct Matcher;
struct MatcherDeleter {
  void operator()(Matcher* m) const;
};
using MatcherPtr = std::unique_ptr<Matcher, MatcherDeleter>;

// `gray_template` has 1 channel and is not empty. Errors: bad params (exit 2).
Status matcher_create(const Image& gray_template, const Params& params, MatcherPtr* out);
// `gray_source` has 1 channel and is at least as large as the template.
Status matcher_run(Matcher* matcher, const Image& gray_source, Result* out);

// An RGB source made grey by the version itself. cuda-opt (PARVIS_GRAY=device, its default)
// uploads the RGB bytes and converts them on the GPU with gray_of, the host's bits: for a
// W x H source, *on_device says whether matcher_run_rgb will (false where the run needs the
// grey on the host: --mask, a normed metric on the host). Every other version says false
// (src/match/match.cpp's defaults): the caller makes the grey (to_gray) and calls matcher_run.
Status matcher_gray_on_device(Matcher* matcher, int W, int H, bool* on_device);
// matcher_run on the grey of `rgb_source` (3 channels), made as matcher_gray_on_device says.
Status matcher_run_rgb(Matcher* matcher, const Image& rgb_source, Result* out);

// The rows of seed 000's stage table (Timings::Stage::group), shared by the CUDA versions
// and the bench.
inline constexpr const char* kStageIntegralSource = "integral of the source";
inline constexpr const char* kStageIntegralTemplate = "integral of the template";
inline constexpr const char* kStageCrossCorrelation = "cross-correlation";
inline constexpr const char* kStageSsd = "SSD";

const char* metric_name(Metric m);
const char* method_name(Method m);

}  // namespace parvis::match
