// What every CUDA version of the blur map shares on the host (batch.cu, linked into each of
// them): the layers and the map on the device, the outputs back, the int32 tap sets; and
// blur::measure_peak, the rate of the multiply-add instructions (`./main bench blur --peak`).
#pragma once
#include <vector>

#include "blur/blur.hpp"
#include "common.cuh"

namespace parvis::blur::gpu {

// The layers one after another, [L][H][W] bytes, the map [H][W] and room for the outputs.
struct DeviceBatch {
  int width = 0, height = 0, layers = 0;
  size_t plane = 0;  // W * H
  cuda::DeviceBuffer<uint8_t> in, map, out;
};

// Needs a device; allocates and uploads (timed into t->upload_ms). The caller has checked the
// inputs (check_apply_inputs).
Status upload(const std::vector<Image>& layers, const Image& map, DeviceBatch* b, Timings* t);

// The outputs back into one image per layer (timed into t->download_ms).
Status download(const DeviceBatch& b, std::vector<Image>* out, Timings* t);

// check_apply_inputs, upload, `compute(batch)` timed with CUDA events (t->compute_ms),
// download: the frame of every CUDA version's apply() but cuda-opt's.
template <class ComputeFn>
Status run(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
           std::vector<Image>* out, Timings* timings, ComputeFn compute) {
  PARVIS_TRY(check_apply_inputs(layers, map, taps));
  Timings t;
  DeviceBatch batch;
  PARVIS_TRY(upload(layers, map, &batch, &t));
  if (batch.layers > 0 && batch.plane > 0) {
    cuda::EventTimer timer;
    PARVIS_TRY(timer.start());
    PARVIS_TRY(compute(batch));
    float ms = 0;
    PARVIS_TRY(timer.stop(&ms));
    t.compute_ms = ms;
  }
  PARVIS_TRY(download(batch, out, &t));
  if (timings) *timings = t;
  return Status::Ok();
}

// The 255 tap sets as they are (TapSets::taps), for the versions that read them from
// global memory.
Status upload_taps(const TapSets& taps, cuda::DeviceBuffer<int32_t>* d);

// Calls fn(dx, dy, index of pixel (x + dx, y + dy)) for every offset of the (2R+1)^2 window
// of pixel (x, y) that lies inside the width x height image: the walk of seq's loop.
template <class Fn>
__device__ inline void for_each_in_window(int x, int y, int width, int height, int radius, Fn fn) {
  for (int dy = -radius; dy <= radius; ++dy) {
    const int sy = y + dy;
    if (sy < 0 || sy >= height) continue;
    for (int dx = -radius; dx <= radius; ++dx) {
      const int sx = x + dx;
      if (sx < 0 || sx >= width) continue;
      fn(dx, dy, size_t(sy) * width + sx);
    }
  }
}

// The contract's arithmetic for pixel (x, y) with one shared tap set (seq's loop,
// reference_pixel): blur-v3 and cuda-naive.
__device__ inline uint8_t tap_pixel(const uint8_t* img, const int32_t* set, int x, int y,
                                    int width, int height, int radius) {
  const int side = 2 * radius + 1;
  uint32_t weighted = 0, weight = 0;
  for_each_in_window(x, y, width, height, radius, [&](int dx, int dy, size_t at) {
    const uint32_t tap = uint32_t(set[(dy + radius) * side + dx + radius]);
    weighted += tap * img[at];
    weight += tap;
  });
  return divide_round(weighted, weight);
}

}  // namespace parvis::blur::gpu
