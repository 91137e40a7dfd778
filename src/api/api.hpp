// What the library's entry points (src/api/*.cpp, include/parvis/parvis.hpp) share: the
// caller's image views as the internal Image.
#pragma once
#include "common/image.hpp"
#include "parvis/parvis.hpp"

namespace parvis::api {

// The environment's switches (docs/CONFIG.md), checked once, on the first call of the library
// (as main() does for the command line): a bad value is a usage error of every call.
Status ready();

// The view's channels as they lie, read in place (a borrowing Image; BGR stays BGR): for the
// operations that treat every channel alike (filter, blur), whose results keep that order. Bad
// input (exit 2): no pixels, a size check_image_size refuses, a stride shorter than a row.
// `what` names the image in the message ("source", "template", ...).
Status channels_of(const ImageView& view, const char* what, Image* out);

// The view as an Image in the internal order: channels_of, BGR converted to an RGB copy.
Status image_of(const ImageView& view, const char* what, Image* out);

// The view made grey (a grey view is read in place), for the operations that work on grey.
Status gray_of_view(const ImageView& view, const char* what, Image* out);

// An owned result back to the caller: packed rows, channels as they are.
void buffer_of(const Image& image, ImageBuffer* out);

}  // namespace parvis::api
