// The library's colour check, filter, blur map and integral image (include/parvis/parvis.hpp):
// each one the operation's own entry points, as `./main color|filter|blur|integral` call them.
#include <memory>
#include <string>
#include <vector>

#include "api/api.hpp"
#include "blur/blur.hpp"
#include "color/color.hpp"
#include "filter/filter.hpp"
#include "integral/integral.hpp"

namespace parvis {

// ---------------------------------------------------------------------------- colour
Status named_range(const std::string& name, HsvRange* out) {
  color::HsvRange r;
  PARVIS_TRY(color::named_range(name, &r));
  *out = HsvRange{r.h_min, r.h_max, r.s_min, r.s_max, r.v_min, r.v_max};
  return Status::Ok();
}

Status count_in_range(const ImageView& view, int x, int y, int w, int h, const HsvRange& range,
                      uint64_t* matching, uint64_t* total) {
  if (view.order == PixelOrder::Gray)
    return Status::bad_input("the colour filter needs an RGB image (3 channels), got 1");
  const color::HsvRange r{range.h_min, range.h_max, range.s_min, range.s_max, range.v_min, range.v_max};
  PARVIS_TRY(color::check_range(r));
  Image image;
  PARVIS_TRY(api::image_of(view, "image", &image));
  const Rect rect{x, y, w, h};
  PARVIS_TRY(color::check_count_input(image, rect));
  color::CountResult c;
  PARVIS_TRY(color::count_in_rect(image, rect, r, &c));
  *matching = c.matching;
  *total = c.total;
  return Status::Ok();
}

// ---------------------------------------------------------------------------- filters
struct Filter::Impl {
  filter::FilterPtr filter;
  PixelOrder order = PixelOrder::Gray;
  int width = 0, height = 0;
  Image out;
  Timings timings;
};

Filter::Filter() = default;
Filter::~Filter() = default;
Filter::Filter(Filter&&) noexcept = default;
Filter& Filter::operator=(Filter&&) noexcept = default;

namespace {
Status kernel_of(const FilterOptions& o, filter::Kernel* kernel, filter::Border* border) {
  PARVIS_TRY(filter::parse_border(o.border, border));
  if (!o.kernel_text.empty()) return filter::parse_kernel_text(o.kernel_text, kernel);
  return filter::builtin_kernel(o.kernel, o.size, kernel);
}
}  // namespace

Status Filter::prepare(const FilterOptions& options, int width, int height, PixelOrder order) {
  PARVIS_TRY(api::ready());
  auto impl = std::make_unique<Impl>();
  filter::Kernel kernel;
  filter::Border border;
  PARVIS_TRY(kernel_of(options, &kernel, &border));
  const int channels = order == PixelOrder::Gray ? 1 : 3;
  PARVIS_TRY(check_image_size(width, height, channels));
  PARVIS_TRY(filter::filter_create(kernel, border, width, height, channels,
                                   filter::tuning_from_config(), &impl->filter));
  impl->order = order;
  impl->width = width;
  impl->height = height;
  impl_ = std::move(impl);
  return Status::Ok();
}

Status Filter::run(const ImageView& view, ImageBuffer* out) {
  if (!impl_) return Status::usage("Filter::run before a successful prepare");
  if (view.width != impl_->width || view.height != impl_->height ||
      view.channels() != (impl_->order == PixelOrder::Gray ? 1 : 3))
    return Status::bad_input("the image is " + std::to_string(view.width) + "x" +
                             std::to_string(view.height) + "x" + std::to_string(view.channels()) +
                             " but the filter was prepared for " + std::to_string(impl_->width) +
                             "x" + std::to_string(impl_->height) + "x" +
                             std::to_string(impl_->order == PixelOrder::Gray ? 1 : 3));
  Image image;  // each channel filtered alike: BGR stays BGR
  PARVIS_TRY(api::channels_of(view, "image", &image));
  impl_->timings = Timings{};
  PARVIS_TRY(filter::filter_run(impl_->filter.get(), image, &impl_->out, &impl_->timings));
  api::buffer_of(impl_->out, out);
  return Status::Ok();
}

const Timings& Filter::timings() const {
  static const Timings kNone;
  return impl_ ? impl_->timings : kNone;
}
std::string Filter::tuning() const {
  return impl_ ? filter::filter_tuning(impl_->filter.get()).describe() : std::string();
}
std::string Filter::path() const {
  return impl_ ? filter::filter_describe(impl_->filter.get()) : std::string();
}

Status apply_filter(const ImageView& image, const FilterOptions& options, ImageBuffer* out) {
  Filter f;
  PARVIS_TRY(f.prepare(options, image.width, image.height, image.order));
  return f.run(image, out);
}

// ---------------------------------------------------------------------------- blur map
struct Blur::Impl {
  blur::TapSets taps;
  Timings timings;
  std::string note;
};

Blur::Blur() = default;
Blur::~Blur() = default;
Blur::Blur(Blur&&) noexcept = default;
Blur& Blur::operator=(Blur&&) noexcept = default;

Status Blur::prepare(double sigma_max) {
  PARVIS_TRY(api::ready());
  auto impl = std::make_unique<Impl>();
  PARVIS_TRY(blur::make_tap_sets(sigma_max, &impl->taps));
  impl_ = std::move(impl);
  return Status::Ok();
}

Status blur_with_map(const ImageView& view, const ImageView& map_view, double sigma_max,
                     ImageBuffer* out) {
  Blur b;
  PARVIS_TRY(b.prepare(sigma_max));
  return b.run(view, map_view, out);
}

Status Blur::run(const ImageView& view, const ImageView& map_view, ImageBuffer* out) {
  std::vector<ImageBuffer> outs;
  PARVIS_TRY(run(std::vector<ImageView>{view}, map_view, &outs));
  *out = std::move(outs[0]);
  return Status::Ok();
}

Status Blur::run(const std::vector<ImageView>& views, const ImageView& map_view,
                 std::vector<ImageBuffer>* out) {
  if (!impl_) return Status::usage("Blur::run before a successful prepare");
  if (views.empty()) return Status::usage("Blur::run needs at least one image");
  Image map;
  PARVIS_TRY(api::gray_of_view(map_view, "map", &map));
  // Every channel of every image a grey layer (each channel alike: BGR stays BGR).
  std::vector<Image> images(views.size()), layers, blurred;
  for (size_t i = 0; i < views.size(); ++i) {
    PARVIS_TRY(api::channels_of(views[i], "image", &images[i]));
    if (map.width != images[i].width || map.height != images[i].height)
      return Status::bad_input("the map is " + std::to_string(map.width) + "x" +
                               std::to_string(map.height) + " but the image is " +
                               std::to_string(images[i].width) + "x" + std::to_string(images[i].height));
    PARVIS_TRY(blur::split_channels(images[i], &layers));
  }
  impl_->timings = Timings{};
  blur::Launch launch;
  PARVIS_TRY(blur::apply(layers, map, impl_->taps, &blurred, &impl_->timings, &launch));
  impl_->note = launch.note;
  out->resize(views.size());
  size_t next_layer = 0;
  for (size_t i = 0; i < views.size(); ++i) {
    Image joined;
    PARVIS_TRY(blur::join_channels(blurred, next_layer, images[i].channels, &joined));
    next_layer += size_t(images[i].channels);
    api::buffer_of(joined, &(*out)[i]);
  }
  return Status::Ok();
}

int Blur::radius() const { return impl_ ? impl_->taps.radius : 0; }
const Timings& Blur::timings() const {
  static const Timings kNone;
  return impl_ ? impl_->timings : kNone;
}
std::string Blur::note() const { return impl_ ? impl_->note : std::string(); }

Status radial_map(int width, int height, ImageBuffer* out) {
  Image map;
  PARVIS_TRY(blur::radial_map(width, height, &map));
  api::buffer_of(map, out);
  return Status::Ok();
}

// ---------------------------------------------------------------------------- integral image
struct Integral::Impl {
  integral::Result result;
};

Integral::Integral() = default;
Integral::~Integral() = default;
Integral::Integral(Integral&&) noexcept = default;
Integral& Integral::operator=(Integral&&) noexcept = default;

IntegralType Integral::type() const {
  if (!impl_) return IntegralType::Auto;
  switch (impl_->result.type) {
    case integral::Type::U32: return IntegralType::U32;
    case integral::Type::U64: return IntegralType::U64;
    case integral::Type::F64: return IntegralType::F64;
    default: return IntegralType::Auto;
  }
}
int Integral::width() const { return impl_ ? impl_->result.width : 0; }
int Integral::height() const { return impl_ ? impl_->result.height : 0; }
const void* Integral::data() const {
  if (!impl_) return nullptr;
  const integral::Result& r = impl_->result;
  if (r.type == integral::Type::U32) return r.u32.data();
  if (r.type == integral::Type::U64) return r.u64.data();
  return r.f64.data();
}

Status integral_image(const ImageView& view, IntegralType type, bool squared, Integral* out) {
  if (view.order != PixelOrder::Gray) return Status::bad_input("the integral image needs a grey input");
  Image gray;
  PARVIS_TRY(api::image_of(view, "image", &gray));
  const integral::Type t = type == IntegralType::U32   ? integral::Type::U32
                           : type == IntegralType::U64 ? integral::Type::U64
                           : type == IntegralType::F64 ? integral::Type::F64
                                                       : integral::Type::Auto;
  auto impl = std::make_unique<Integral::Impl>();
  PARVIS_TRY(integral::compute(gray, t, squared, &impl->result));
  out->impl_ = std::move(impl);
  return Status::Ok();
}

}  // namespace parvis
