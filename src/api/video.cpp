// The library's video frames (include/parvis/parvis.hpp): `./main video`'s sources and its one
// conversion to RGB (src/video/source.hpp, convert.cpp).
#include <memory>
#include <vector>

#include "api/api.hpp"
#include "video/source.hpp"
#include "video/video.hpp"

namespace parvis {

struct VideoReader::Impl {
  std::unique_ptr<video::FrameSource> source;
  std::vector<uint8_t> bytes;
  Image rgb, gray;
  bool ended = false;
};

VideoReader::VideoReader() = default;
VideoReader::~VideoReader() {
  if (impl_ && impl_->source && !impl_->ended) (void)impl_->source->finish(true);
}
VideoReader::VideoReader(VideoReader&&) noexcept = default;
VideoReader& VideoReader::operator=(VideoReader&&) noexcept = default;

Status VideoReader::open(const std::string& path) {
  PARVIS_TRY(api::ready());
  auto impl = std::make_unique<Impl>();
  video::SourceOptions options;
  options.path = path;
  PARVIS_TRY(video::open_source(options, &impl->source));
  const video::FrameFormat& f = impl->source->format();
  PARVIS_TRY(image_alloc(f.width, f.height, 3, &impl->rgb));
  PARVIS_TRY(image_alloc(f.width, f.height, 1, &impl->gray));
  impl->bytes.resize(f.frame_bytes());
  impl_ = std::move(impl);
  return Status::Ok();
}

int VideoReader::width() const { return impl_ ? impl_->rgb.width : 0; }
int VideoReader::height() const { return impl_ ? impl_->rgb.height : 0; }

Status VideoReader::next(ImageBuffer* rgb, bool* end) {
  if (!impl_) return Status::usage("VideoReader::next before a successful open");
  *end = impl_->ended;
  if (impl_->ended) return Status::Ok();
  PARVIS_TRY(impl_->source->read_frame(impl_->bytes.data(), end));
  if (*end) {
    impl_->ended = true;
    return impl_->source->finish(false);
  }
  video::frame_to_rgb_gray(impl_->source->format(), impl_->bytes.data(), &impl_->rgb, &impl_->gray);
  api::buffer_of(impl_->rgb, rgb);
  return Status::Ok();
}

}  // namespace parvis
