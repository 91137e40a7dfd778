// What the library's entry points (src/api/*.cpp, include/parvis/parvis.hpp) share: the
// caller's image views as the internal Image.
#pragma once
#include "common/image.hpp"
#include "match/answer.hpp"
#include "match/match.hpp"
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

// An internal image as a view (grey or RGB), read in place: the command line's images, read by
// its own reader, handed to the library.
ImageView view_of(const Image& image);

// The library's result as an internal image, its pixels moved (the command line writes it).
Image image_of(ImageBuffer&& buffer);

// An owned result back to the caller: packed rows, channels as they are.
void buffer_of(const Image& image, ImageBuffer* out);

// The public enums as the operations' own.
match::Metric metric_of(Metric m);
Metric public_metric(match::Metric m);
match::Method method_of(Method m);
Method public_method(match::Method m);

}  // namespace parvis::api

namespace parvis {
// Matcher::prepare and run are these, with no cache and a source of their own. The command
// line's batch of templates on one source calls them directly: every matcher prepared to share
// `cache` (what a version keeps of the source between templates: its spectrum, its upload), and
// each run on the one Source, whose grey is made once for all of them.
struct MatcherAccess {
  static Status prepare(Matcher* m, const ImageView& templ, const MatchOptions& options,
                        match::SourceCache* cache);
  static Status run(Matcher* m, match::Source& source, MatchResult* out);
};
}  // namespace parvis
