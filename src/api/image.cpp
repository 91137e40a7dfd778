// The library's image views (include/parvis/parvis.hpp) and the owned results it hands back.
#include <cstring>
#include <string>
#include <utility>

#include "api/api.hpp"
#include "common/config.hpp"
#include "common/device.hpp"
#include "image_io.hpp"

namespace parvis {

const char* version() { return kVersionName; }

Status device_name(std::string* name) { return device_describe(name); }

Status read_image(const std::string& path, ImageBuffer* out) {
  Image image;
  PARVIS_TRY(image_read(path, &image));
  api::buffer_of(image, out);
  return Status::Ok();
}

namespace api {

Status ready() {
  static const Status checked = config::check();  // thread-safe: a static's first use
  return checked;
}

Status channels_of(const ImageView& view, const char* what, Image* out) {
  PARVIS_TRY(ready());
  const int channels = view.channels();
  PARVIS_TRY(check_image_size(view.width, view.height, channels));
  const size_t row_bytes = size_t(view.width) * size_t(channels);
  const size_t stride = view.stride == 0 ? row_bytes : view.stride;
  if (stride < row_bytes)
    return Status::bad_input(std::string(what) + ": stride " + std::to_string(stride) +
                             " is shorter than a row of " + std::to_string(row_bytes) + " bytes");
  if (view.data == nullptr) return Status::bad_input(std::string(what) + ": no pixels (null data)");
  *out = borrow(view.data, view.width, view.height, channels, stride);
  return Status::Ok();
}

Status image_of(const ImageView& view, const char* what, Image* out) {
  Image as_given;
  PARVIS_TRY(channels_of(view, what, &as_given));
  if (view.order != PixelOrder::BGR) {
    *out = std::move(as_given);
    return Status::Ok();
  }
  PARVIS_TRY(image_alloc(view.width, view.height, 3, out));
  for (int y = 0; y < view.height; ++y) {
    const uint8_t* s = as_given.row(y);
    uint8_t* d = out->row(y);
    for (int x = 0; x < view.width; ++x) {
      d[3 * x] = s[3 * x + 2];
      d[3 * x + 1] = s[3 * x + 1];
      d[3 * x + 2] = s[3 * x];
    }
  }
  return Status::Ok();
}

Status gray_of_view(const ImageView& view, const char* what, Image* out) {
  Image image;
  PARVIS_TRY(image_of(view, what, &image));
  *out = image.channels == 1 ? std::move(image) : to_gray(image);
  return Status::Ok();
}

ImageView view_of(const Image& image) {
  return ImageView{image.data(), image.width, image.height, image.stride,
                   image.channels == 1 ? PixelOrder::Gray : PixelOrder::RGB};
}

Image image_of(ImageBuffer&& buffer) {
  Image image;
  image.width = buffer.width;
  image.height = buffer.height;
  image.channels = buffer.channels;
  image.stride = size_t(buffer.width) * size_t(buffer.channels);
  image.pixels = std::move(buffer.pixels);
  return image;
}

void buffer_of(const Image& image, ImageBuffer* out) {
  out->width = image.width;
  out->height = image.height;
  out->channels = image.channels;
  const size_t row_bytes = size_t(image.width) * size_t(image.channels);
  out->pixels.resize(row_bytes * size_t(image.height));
  for (int y = 0; y < image.height; ++y)
    std::memcpy(out->pixels.data() + size_t(y) * row_bytes, image.row(y), row_bytes);
}

}  // namespace api
}  // namespace parvis
