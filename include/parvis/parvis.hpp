// parvis as a library: the one public header of every version (docs/API.md).
//
// Link lib/libparvis-<version>.a (`make lib`): the same header, the same answers bit for bit,
// only the speed differs. Every function returns a Status (include/parvis/status.hpp): ok, or
// the exit code the command line would give (1 usage, 2 bad input, 3 runtime/device) and one
// reason. Nothing prints and nothing exits. Inputs are views of the caller's pixels, read in
// place where the layout fits (grey and RGB; BGR too for the filter and the blur map, converted
// once where colour matters).
//
//   parvis::Matcher m;
//   parvis::MatchOptions o;  o.metric = parvis::Metric::NCC;
//   parvis::Status s = m.prepare(parvis::gray_view(tpl, tw, th), o);
//   parvis::MatchResult r;   if (s.ok()) s = m.run(parvis::rgb_view(frame, w, h), &r);
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "parvis/status.hpp"
#include "parvis/timings.hpp"

namespace parvis {

// The version this library is ("seq", "simd", "omp", "cuda-naive", "cuda-opt", ...).
const char* version();
// What it computes on: "cpu (N hardware threads)" or the CUDA device's name (runtime error
// without a usable device).
Status device_name(std::string* name);

// ---------------------------------------------------------------------------- images
enum class PixelOrder { Gray, RGB, BGR };

// The caller's pixels: 8-bit, rows `stride` bytes apart (0: packed), 1 channel (Gray) or 3
// (RGB or BGR, in that order in memory). Never owned: the caller keeps them alive during a call.
struct ImageView {
  const uint8_t* data = nullptr;
  int width = 0, height = 0;
  size_t stride = 0;
  PixelOrder order = PixelOrder::Gray;
  int channels() const { return order == PixelOrder::Gray ? 1 : 3; }
};
inline ImageView gray_view(const uint8_t* data, int width, int height, size_t stride = 0) {
  return ImageView{data, width, height, stride, PixelOrder::Gray};
}
inline ImageView rgb_view(const uint8_t* data, int width, int height, size_t stride = 0) {
  return ImageView{data, width, height, stride, PixelOrder::RGB};
}
inline ImageView bgr_view(const uint8_t* data, int width, int height, size_t stride = 0) {
  return ImageView{data, width, height, stride, PixelOrder::BGR};
}

// An image the library made: packed rows, 1 channel or 3 in the input's order.
struct ImageBuffer {
  int width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;  // width * channels bytes per row, no gap
};

// Image files: BMP, PGM/PPM, and PNG/JPEG/TGA where the build has stb (as `./main` reads them):
// grey stays grey, anything else becomes RGB.
Status read_image(const std::string& path, ImageBuffer* out);

// ---------------------------------------------------------------------------- matching
enum class Metric { SSD, SAD, NCC, CCorrNormed };  // ssd, sad, ncc, ccorr-normed
enum class Method { Auto, Direct, FFT };

// HSV in OpenCV's 8-bit convention (H 0..179, S and V 0..255), bounds included.
struct HsvRange {
  int h_min = 100, h_max = 130;
  int s_min = 80, s_max = 255;
  int v_min = 50, v_max = 255;
};

// What `./main match` is asked on its command line, typed. The defaults are its defaults.
struct MatchOptions {
  Metric metric = Metric::SSD;
  Method method = Method::Auto;
  int top = 1;           // the K best positions (--top K)
  bool all = false;      // every position scoring at least as well as `threshold` (--all)
  double threshold = 0;  // with `all`: the largest SSD/SAD (an integer), or the smallest normed score
  int min_distance = 0;  // > 1: drop a position within D in x and y of a better one
  bool subpixel = false; // a parabola fit around each match (--subpixel)
  bool want_map = false; // MatchResult::map gets every score (--map)
  // --mask: grey, the template's size; a nonzero pixel counts. Empty (data null): all count.
  ImageView mask;
  // The colour check (--color NAME / --hsv-min / --hsv-max / --full-ratio): each match's
  // pixels in the range; full when at least full_ratio of them are. Off unless `color` names
  // a range ("blue") or `use_range` is set.
  std::string color;
  bool use_range = false;  // `range` instead of (or over) the named one
  HsvRange range;
  double full_ratio = 0.2;
};

struct Match {
  int x = 0, y = 0;   // the template's top-left corner in the source
  double score = 0;   // the exact SSD/SAD (an integer), or the normed score
  bool fitted = false;     // subpixel: whether the fit was kept
  double sx = 0, sy = 0;   // subpixel: the fitted position (fitted), else x, y
  uint64_t matching = 0, total = 0;  // colour check: pixels in range / in the rectangle
  double fraction = 0;
  bool full = false;
};

struct MatchResult {
  std::vector<Match> matches;  // best first; the choice of top / all / min_distance
  int map_width = 0, map_height = 0;
  std::vector<double> map;     // want_map: row-major scores
  Method method_used = Method::Direct;
  std::string explain;         // why `auto` chose the method it did
  uint64_t mask_pixels = 0;    // with a mask: the template pixels that count
  Timings timings;             // the version's run: upload, compute, download
  double color_ms = 0;         // the colour check of every match
  Timings color_timings;       // the colour check of the first match, as the version split it
};

struct MatcherAccess;

// A template prepared once (spectra, plans, device buffers), run on many sources. One run at a
// time per matcher; two matchers may run in two threads.
class Matcher {
 public:
  Matcher();
  ~Matcher();
  Matcher(Matcher&&) noexcept;
  Matcher& operator=(Matcher&&) noexcept;
  // The template (made grey) and the options; a usage or bad-input Status otherwise.
  Status prepare(const ImageView& templ, const MatchOptions& options);
  // The source (made grey by the version; at least as large as the template).
  Status run(const ImageView& source, MatchResult* out);
  struct Impl;

 private:
  friend struct MatcherAccess;  // the command line's batches (src/api/api.hpp)
  std::unique_ptr<Impl> impl_;
};

// One source, one template: prepare and run.
Status match_template(const ImageView& source, const ImageView& templ, const MatchOptions& options,
             MatchResult* out);

// ---------------------------------------------------------------------------- colour
// A named range ("blue"); usage error otherwise.
Status named_range(const std::string& name, HsvRange* out);
// The pixels of `rect` (x, y, w, h, inside the image; RGB or BGR) whose HSV lies in `range`.
Status count_in_range(const ImageView& image, int x, int y, int w, int h, const HsvRange& range,
                      uint64_t* matching, uint64_t* total);

// ---------------------------------------------------------------------------- filters
// `./main filter`: a built-in kernel by name (box, gaussian, sharpen, ...; its size where it
// has one) or `kernel_text` in the kernel-file format, and the border rule.
struct FilterOptions {
  std::string kernel = "box";
  int size = 3;
  std::string kernel_text;      // not empty: the kernel, as a kernel file holds it
  std::string border = "zero";  // zero, replicate, reflect101
};

// A filter prepared for one image shape, run on many images of it.
class Filter {
 public:
  Filter();
  ~Filter();
  Filter(Filter&&) noexcept;
  Filter& operator=(Filter&&) noexcept;
  Status prepare(const FilterOptions& options, int width, int height, PixelOrder order);
  Status run(const ImageView& image, ImageBuffer* out);
  // The last run's times; what runs: the tuning (PARVIS_TUNING's, the version's defaults filled
  // in) and the code path this kernel takes. Both differ between versions, never the pixels.
  const Timings& timings() const;
  std::string tuning() const;
  std::string path() const;
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};
Status apply_filter(const ImageView& image, const FilterOptions& options, ImageBuffer* out);

// ---------------------------------------------------------------------------- blur map
// `./main blur`: each channel blurred with the Gaussian whose sigma the map gives per pixel
// (0: sharp, 255: sigma_max). `map` is grey, the image's size. The tap sets of sigma_max are
// made once by prepare, for many images.
class Blur {
 public:
  Blur();
  ~Blur();
  Blur(Blur&&) noexcept;
  Blur& operator=(Blur&&) noexcept;
  Status prepare(double sigma_max);  // in [0.01, 16]
  Status run(const ImageView& image, const ImageView& map, ImageBuffer* out);
  // Images of the map's size blurred in one call (every channel of every image: the seed's
  // batch of layers, which a GPU takes at once); out[i] is images[i]'s.
  Status run(const std::vector<ImageView>& images, const ImageView& map, std::vector<ImageBuffer>* out);
  int radius() const;                // the taps: (2 radius + 1)^2 per sigma
  const Timings& timings() const;    // the last run's
  std::string note() const;          // the last run's remark, if any (blur-v4: where its taps live)
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};
Status blur_with_map(const ImageView& image, const ImageView& map, double sigma_max,
                     ImageBuffer* out);
// The radial map of `./main blur --radial` (sharp centre, blurred edges).
Status radial_map(int width, int height, ImageBuffer* out);

// ---------------------------------------------------------------------------- integral image
enum class IntegralType { Auto, U32, U64, F64 };

// The integral image of a grey image (or of its squares): inclusive sums, the image's size,
// row-major. `type` Auto takes the smallest exact one.
class Integral {
 public:
  Integral();
  ~Integral();
  Integral(Integral&&) noexcept;
  Integral& operator=(Integral&&) noexcept;
  IntegralType type() const;
  int width() const;
  int height() const;
  const void* data() const;  // uint32_t, uint64_t or double elements, as type() says
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
Status integral_image(const ImageView& gray, IntegralType type, bool squared, Integral* out);

// ---------------------------------------------------------------------------- video frames
// The frames of a video as `./main video` reads them: a Y4M file (4:2:0, 4:2:2, 4:4:4, mono),
// or any other video through ffmpeg; YUV made RGB by its one integer formula (docs/DESIGN.md,
// "Video"), so that a frame matched here gives `./main video`'s answer.
class VideoReader {
 public:
  VideoReader();
  ~VideoReader();
  VideoReader(VideoReader&&) noexcept;
  VideoReader& operator=(VideoReader&&) noexcept;
  Status open(const std::string& path);
  int width() const;
  int height() const;
  // The next frame as RGB; at the end *end is true and nothing is read.
  Status next(ImageBuffer* rgb, bool* end);
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace parvis
