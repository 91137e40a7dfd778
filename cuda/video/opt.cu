// The video pipeline of cuda-opt: the device pipeline (device_pipeline.cuh) on cuda-opt's
// matcher, fed a source already on the device (match/device_source.cuh). The host pipeline
// (frames converted on the reader thread, grey uploaded by matcher_run) stays selectable for
// comparison: PipelineConfig::host_convert (PARVIS_TUNING=video.host_convert=1).
#include "match/device_source.cuh"
#include "video/device_pipeline.cuh"

namespace parvis::video {

Status make_pipeline(const Image& gray_template, const PipelineConfig& config,
                     std::unique_ptr<Pipeline>* out) {
  if (config.host_convert) return make_host_pipeline(gray_template, config, out);
  return make_device_pipeline(gray_template, config,
                              DeviceMatchOps{&match::matcher_device_source, &match::matcher_run_device}, out);
}

}  // namespace parvis::video
