// The device video pipeline (device_pipeline.cu): each frame's planes, read by the reader thread
// into pinned slots, go up on a copy stream while the previous frame computes; on the matcher's
// stream a kernel converts them into the matcher's grey source (frame_pixel.cuh: the host's
// integer formula and gray_of, same bits), the matcher runs there, and a second kernel counts the
// HSV range over the matched rectangle's RGB, converted from the same planes. The host converts
// nothing unless an output wants whole RGB frames (--out, --save-frame).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "video/video.hpp"

namespace parvis::video {

// What the device pipeline needs from the version's matcher (match/device_source.cuh): passed
// in by the version's make_pipeline, so that this file links into every CUDA version.
struct DeviceMatchOps {
  Status (*source)(match::Matcher*, int W, int H, uint8_t** d_src, size_t* pitch, cudaStream_t* stream);
  Status (*run)(match::Matcher*, match::Result*);
};

Status make_device_pipeline(const Image& gray_template, const PipelineConfig& config,
                            DeviceMatchOps ops, std::unique_ptr<Pipeline>* out);

}  // namespace parvis::video
