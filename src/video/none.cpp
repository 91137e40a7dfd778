// The video pipeline of the versions without one of their own (every CPU version, cuda-naive,
// the blur ladder): the host pipeline, frames converted on the reader thread (pipeline.cpp).
#include "video/video.hpp"

namespace parvis::video {

Status make_pipeline(const Image& gray_template, const PipelineConfig& config,
                     std::unique_ptr<Pipeline>* out) {
  return make_host_pipeline(gray_template, config, out);
}

}  // namespace parvis::video
