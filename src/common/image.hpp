// The one image type of parvis: 8-bit, 1 (grey) or 3 (RGB, in that order) channels,
// rows `stride` bytes apart, owning its pixels.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/gray.hpp"
#include "common/status.hpp"

namespace parvis {

// Largest image buffer we accept (DESIGN/issue 2: a declared image over 2^31 bytes is refused).
constexpr uint64_t kMaxImageBytes = uint64_t(1) << 31;

struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;   // 1 = grey, 3 = RGB
  size_t stride = 0;  // bytes from one row to the next (>= width * channels)
  std::vector<uint8_t> pixels;
  // Someone else's pixels, read in place (the library's image views: borrow()); null: `pixels`.
  // A borrowing image is read-only and is only handed on as `const Image&`; a copy of it owns
  // a copy of the pixels, so nothing outlives or writes through the borrow.
  const uint8_t* borrowed = nullptr;

  Image() = default;
  Image(const Image& other);
  Image& operator=(const Image& other);
  Image(Image&&) noexcept = default;
  Image& operator=(Image&&) noexcept = default;

  bool empty() const { return width == 0 || height == 0; }
  const uint8_t* data() const { return borrowed ? borrowed : pixels.data(); }
  uint8_t* data() { return borrowed ? const_cast<uint8_t*>(borrowed) : pixels.data(); }
  uint8_t* row(int y) { return data() + size_t(y) * stride; }
  const uint8_t* row(int y) const { return data() + size_t(y) * stride; }
  uint8_t* at(int x, int y) { return row(y) + size_t(x) * channels; }
  const uint8_t* at(int x, int y) const { return row(y) + size_t(x) * channels; }
};

struct Rgb {
  uint8_t r, g, b;
};

struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
};

// An image that reads `data` in place (rows `stride` bytes apart; the last row needs only
// width * channels bytes). The caller keeps `data` alive and unchanged while it is used.
Image borrow(const uint8_t* data, int width, int height, int channels, size_t stride);

// Checks that width x height x channels is a valid, representable image size.
Status check_image_size(int64_t width, int64_t height, int channels);

// The most pixels an input image or video frame may declare: --max-pixels N of the commands
// that read images (set once while parsing; default: what kMaxImageBytes allows of a grey
// image, so that only the byte limit applies).
constexpr uint64_t kDefaultMaxInputPixels = kMaxImageBytes;
void set_max_input_pixels(uint64_t pixels);
uint64_t max_input_pixels();

// check_image_size, then the pixel count against max_input_pixels(): for the size an input
// file or stream declares, before anything of that size is read or allocated (bad input).
Status check_input_size(int64_t width, int64_t height, int channels);

// Allocates a zeroed, tightly packed image (stride = width * channels), size checked.
Status image_alloc(int width, int height, int channels, Image* out);

// A grey image's size and stride without pixels: the shape a size check or a run whose
// source lies elsewhere (on the device, or as RGB bytes) needs.
Image gray_shape(int width, int height);

// The image in grey through gray_of (common/gray.hpp, OpenCV's formula). A grey input is copied.
Image to_gray(const Image& in);

// A copy of `in` with 3 channels (grey is replicated), for drawing coloured marks.
Image to_rgb(const Image& in);

// Draws the outline of `r` (clipped to the image), `thickness` pixels wide, inwards.
void draw_rect(Image* img, Rect r, Rgb color, int thickness);

// Copies the sub-rectangle `r` (must lie inside `in`).
Image crop(const Image& in, Rect r);

}  // namespace parvis
