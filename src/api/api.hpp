// What the library's entry points (src/api/*.cpp, include/parvis/parvis.hpp) share: the
// caller's image views as the internal Image.
#pragma once
#include "common/image.hpp"
#include "parvis/parvis.hpp"

namespace parvis::api {

// The environment's switches (docs/CONFIG.md), checked once, on the first call of the library
// (as main() does for the command line): a bad value is a usage error of every call.
Status ready();

// The view as an Image: grey and RGB read in place (a borrowing Image), BGR converted to an
// RGB copy. Bad input (exit 2): no pixels, a size check_image_size refuses, a stride shorter
// than a row. `what` names the image in the message ("source", "template", ...).
Status image_of(const ImageView& view, const char* what, Image* out);

// The view made grey (a grey view is read in place), for the operations that work on grey.
Status gray_of_view(const ImageView& view, const char* what, Image* out);

// An owned result back to the caller: packed rows; 3-channel results in `order`.
void buffer_of(const Image& image, PixelOrder order, ImageBuffer* out);

}  // namespace parvis::api
