#include "common/image.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

namespace parvis {

Status check_image_size(int64_t width, int64_t height, int channels) {
  if (width <= 0 || height <= 0)
    return Status::bad_input("image size " + std::to_string(width) + "x" + std::to_string(height) +
                             " is not positive");
  if (channels != 1 && channels != 3)
    return Status::bad_input("unsupported channel count " + std::to_string(channels));
  // width, height < 2^31 here, so the products below fit in 64 bits.
  if (uint64_t(width) * uint64_t(height) * uint64_t(channels) > kMaxImageBytes)
    return Status::bad_input("image " + std::to_string(width) + "x" + std::to_string(height) +
                             " is larger than 2^31 bytes");
  if (width > INT32_MAX || height > INT32_MAX) return Status::bad_input("image side too large");
  return Status::Ok();
}

namespace {
std::atomic<uint64_t> g_max_input_pixels{kDefaultMaxInputPixels};
}  // namespace

void set_max_input_pixels(uint64_t pixels) { g_max_input_pixels = pixels; }
uint64_t max_input_pixels() { return g_max_input_pixels; }

Status check_input_size(int64_t width, int64_t height, int channels) {
  PARVIS_TRY(check_image_size(width, height, channels));
  const uint64_t pixels = uint64_t(width) * uint64_t(height), limit = max_input_pixels();
  if (pixels > limit)
    return Status::bad_input("image " + std::to_string(width) + "x" + std::to_string(height) + " has " +
                             std::to_string(pixels) + " pixels, more than --max-pixels " +
                             std::to_string(limit));
  return Status::Ok();
}

Image::Image(const Image& other)
    : width(other.width), height(other.height), channels(other.channels), stride(other.stride) {
  if (!other.borrowed) {
    pixels = other.pixels;
  } else if (!other.empty()) {
    const size_t bytes = stride * size_t(height - 1) + size_t(width) * size_t(channels);
    pixels.assign(other.borrowed, other.borrowed + bytes);
  }
}

Image& Image::operator=(const Image& other) {
  if (this != &other) *this = Image(other);
  return *this;
}

Image borrow(const uint8_t* data, int width, int height, int channels, size_t stride) {
  Image img;
  img.width = width;
  img.height = height;
  img.channels = channels;
  img.stride = stride;
  img.borrowed = data;
  return img;
}

Status image_alloc(int width, int height, int channels, Image* out) {
  PARVIS_TRY(check_image_size(width, height, channels));
  Image img;
  img.width = width;
  img.height = height;
  img.channels = channels;
  img.stride = size_t(width) * size_t(channels);
  try {
    img.pixels.assign(img.stride * size_t(height), 0);
  } catch (const std::bad_alloc&) {
    return Status::runtime("out of memory allocating a " + std::to_string(width) + "x" +
                           std::to_string(height) + " image");
  }
  *out = std::move(img);
  return Status::Ok();
}

Image gray_shape(int width, int height) {
  Image shape;
  shape.width = width;
  shape.height = height;
  shape.channels = 1;
  shape.stride = size_t(width);
  return shape;
}

Image to_gray(const Image& in) {
  Image out;
  out.width = in.width;
  out.height = in.height;
  out.channels = 1;
  out.stride = size_t(in.width);
  out.pixels.resize(out.stride * size_t(in.height));
  for (int y = 0; y < in.height; ++y) {
    const uint8_t* s = in.row(y);
    uint8_t* d = out.row(y);
    if (in.channels == 1) {
      std::memcpy(d, s, size_t(in.width));
    } else {
      for (int x = 0; x < in.width; ++x) d[x] = gray_of(s[3 * x], s[3 * x + 1], s[3 * x + 2]);
    }
  }
  return out;
}

Image to_rgb(const Image& in) {
  Image out;
  out.width = in.width;
  out.height = in.height;
  out.channels = 3;
  out.stride = size_t(in.width) * 3;
  out.pixels.resize(out.stride * size_t(in.height));
  for (int y = 0; y < in.height; ++y) {
    const uint8_t* s = in.row(y);
    uint8_t* d = out.row(y);
    if (in.channels == 3) {
      std::memcpy(d, s, out.stride);
    } else {
      for (int x = 0; x < in.width; ++x) d[3 * x] = d[3 * x + 1] = d[3 * x + 2] = s[x];
    }
  }
  return out;
}

void draw_rect(Image* img, Rect r, Rgb color, int thickness) {
  const uint8_t grey = gray_of(color.r, color.g, color.b);
  auto put = [&](int x, int y) {
    if (x < 0 || y < 0 || x >= img->width || y >= img->height) return;
    uint8_t* p = img->at(x, y);
    if (img->channels == 3) {
      p[0] = color.r, p[1] = color.g, p[2] = color.b;
    } else {
      p[0] = grey;
    }
  };
  for (int t = 0; t < thickness; ++t) {
    const int x0 = r.x + t, y0 = r.y + t, x1 = r.x + r.w - 1 - t, y1 = r.y + r.h - 1 - t;
    if (x0 > x1 || y0 > y1) break;
    for (int x = x0; x <= x1; ++x) put(x, y0), put(x, y1);
    for (int y = y0; y <= y1; ++y) put(x0, y), put(x1, y);
  }
}

Image crop(const Image& in, Rect r) {
  Image out;
  out.width = r.w;
  out.height = r.h;
  out.channels = in.channels;
  out.stride = size_t(r.w) * size_t(in.channels);
  out.pixels.resize(out.stride * size_t(r.h));
  for (int y = 0; y < r.h; ++y)
    std::memcpy(out.row(y), in.at(r.x, r.y + y), out.stride);
  return out;
}

}  // namespace parvis
