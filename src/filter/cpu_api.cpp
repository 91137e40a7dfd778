// The filter's entry points for the CPU versions, over the version's cpu::convolve: the prepared
// filter (no copies: upload keeps a reference to the input, compute writes the filter's own output
// image, download moves it out).
#include "filter/cpu_filter.hpp"

namespace parvis::filter {

struct Filter {
  Kernel kernel;
  Border border = Border::Zero;
  int width = 0, height = 0, channels = 0;
  int variant = 0;
  FilterTuning tuning;  // what ran: the variant, the only field a CPU version takes
  const Image* in = nullptr;
  Image out;
};

void FilterDeleter::operator()(Filter* f) const { delete f; }

namespace {
Status check_shape(const Filter& f, const Image& img) {
  if (img.width != f.width || img.height != f.height || img.channels != f.channels)
    return Status::bad_input("filter: image is " + std::to_string(img.width) + "x" +
                             std::to_string(img.height) + "x" + std::to_string(img.channels) +
                             ", the filter was prepared for " + std::to_string(f.width) + "x" +
                             std::to_string(f.height) + "x" + std::to_string(f.channels));
  return Status::Ok();
}
}  // namespace

Status version_create(const Kernel& kernel, Border border, int width, int height, int channels,
                      const FilterTuning&, int variant, FilterPtr* out) {
  PARVIS_TRY(check_image_size(width, height, channels));
  FilterPtr f(new Filter);
  f->kernel = kernel;
  f->border = border;
  f->width = width;
  f->height = height;
  f->channels = channels;
  f->variant = variant;
  f->tuning.variant = variant_names()[size_t(variant)];
  *out = std::move(f);
  return Status::Ok();
}

Status filter_upload(Filter* f, const Image& in, Timings* timings) {
  PARVIS_TRY(check_shape(*f, in));
  f->in = &in;
  if (timings) timings->upload_ms = -1;
  return Status::Ok();
}

Status filter_compute(Filter* f, Timings* timings) {
  if (!f->in) return Status::runtime("filter_compute before filter_upload");
  if (f->out.pixels.empty()) PARVIS_TRY(image_alloc(f->width, f->height, f->channels, &f->out));
  const double t0 = now_ms();
  PARVIS_TRY(cpu::convolve(*f->in, f->kernel, f->border, f->variant, &f->out));
  if (timings) timings->compute_ms = now_ms() - t0;
  return Status::Ok();
}

Status filter_download(Filter* f, Image* out, Timings* timings) {
  if (f->out.pixels.empty()) return Status::runtime("filter_download before filter_compute");
  *out = std::move(f->out);
  f->out = Image();
  if (timings) timings->download_ms = -1;
  return Status::Ok();
}

std::string filter_describe(const Filter* f) {
  return cpu::describe(f->kernel, f->border, f->width, f->height, f->channels, f->variant);
}

FilterTuning filter_tuning(const Filter* f) { return f->tuning; }

}  // namespace parvis::filter
