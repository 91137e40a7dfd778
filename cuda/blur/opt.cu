// Blur map, cuda-opt: past seed 002's V5. The work is compute-bound (a 25 x 25 window is 625
// multiply-adds per pixel and layer, on one byte of input), so the gains are in arithmetic:
//
//   1. upload: the layers into zero-margined rows (padded: no bounds test in the loop, the
//      pixels outside the image add nothing), the map, the pre-shifted 16-bit tap pairs of
//      every set (opt_kernel.cuh) and the weight prefix table (blur.hpp, WeightTable);
//   2. blur_dp2a: a thread computes 4 neighbouring outputs of a row for up to 8 layers; per
//      window row it loads each output's taps once (two 16-byte loads per 16 taps) and, per
//      layer, 5 words of pixels, then 2 dp2a per 4 taps: two exact multiply-adds per
//      instruction, the taps of one load feeding every layer; the map value, the tap set and
//      the weight are fetched once per output for all layers. Blocks of 8 x 16 threads
//      (32 x 16 outputs; a warp reads 4 rows of 32 consecutive bytes);
//   3. download.
//
// Floor (bench/README.md "Blur map"): an IMAD rate of 64 per SM per clock x 132 SMs x 1.98 GHz
// = 16.7 T multiply-adds/s makes 3840x2160 x 8 layers with sigma_max 4 (41.5 G multiply-adds)
// 2.5 ms; dp2a does two per instruction. Times: bench/run_blur.sh (bench/RESULTS.md).
#include <algorithm>
#include <string>

#include "blur/batch.cuh"
#include "blur/opt_kernel.cuh"

namespace parvis::blur {

namespace {

using opt::kBlockX;
using opt::kBlockY;

template <int LT, int D>
__global__ __launch_bounds__(kBlockX* kBlockY) void blur_dp2a(opt::Args a, int tiles_y, int groups) {
  const int x0 = (int(blockIdx.x) * kBlockX + int(threadIdx.x)) * opt::kQuad;
  if (x0 >= a.g.width) return;
  for (int ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
    const int y = ty * kBlockY + int(threadIdx.y);
    if (y >= a.g.height) break;  // the next tiles lie further down
    for (int group = blockIdx.z; group < groups; group += gridDim.z)
      opt::blur_quad<LT, D>(a, x0, y, group * LT);
  }
}

template <int LT>
Status launch(const opt::Args& a, dim3 grid, int tiles_y, int groups) {
  const dim3 block(kBlockX, kBlockY);
  switch (a.g.r4 - a.g.radius) {
    case 0: blur_dp2a<LT, 0><<<grid, block>>>(a, tiles_y, groups); break;
    case 1: blur_dp2a<LT, 1><<<grid, block>>>(a, tiles_y, groups); break;
    case 2: blur_dp2a<LT, 2><<<grid, block>>>(a, tiles_y, groups); break;
    default: blur_dp2a<LT, 3><<<grid, block>>>(a, tiles_y, groups); break;
  }
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

}  // namespace

Status apply(const std::vector<Image>& layers, const Image& map, const TapSets& taps,
             std::vector<Image>* out, Timings* timings, Launch*) {
  PARVIS_TRY(check_apply_inputs(layers, map, taps));
  PARVIS_TRY(cuda::require_device());
  const opt::Geometry g = opt::Geometry::make(map.width, map.height, int(layers.size()), taps);
  const std::vector<uint32_t> pairs = opt::make_pair_table(taps, g);
  WeightTable weights;
  make_weight_table(taps, &weights);

  Timings t;
  cuda::DeviceBuffer<uint8_t> d_padded, d_map, d_out;
  cuda::DeviceBuffer<uint32_t> d_pairs, d_prefix;
  const size_t plane = size_t(g.width) * size_t(g.height);
  PARVIS_TRY(d_padded.alloc(g.layer_size * layers.size()));
  PARVIS_TRY(d_out.alloc(plane * layers.size()));
  PARVIS_TRY(d_map.alloc(plane));
  PARVIS_TRY(d_pairs.alloc(pairs.size()));
  PARVIS_TRY(d_prefix.alloc(weights.prefix.size()));
  cuda::EventTimer timer;
  PARVIS_TRY(timer.start());
  CUDA_CHECK(cudaMemsetAsync(d_padded.get(), 0, g.layer_size * layers.size()));
  for (size_t l = 0; l < layers.size(); ++l)
    CUDA_CHECK(cudaMemcpy2DAsync(d_padded.get() + l * g.layer_size + size_t(g.radius) * g.stride + size_t(g.r4),
                                 g.stride, layers[l].data(), layers[l].stride, size_t(g.width),
                                 size_t(g.height), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy2DAsync(d_map.get(), size_t(g.width), map.data(), map.stride,
                               size_t(g.width), size_t(g.height), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpyAsync(d_pairs.get(), pairs.data(), pairs.size() * sizeof(uint32_t),
                             cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpyAsync(d_prefix.get(), weights.prefix.data(), weights.prefix.size() * sizeof(uint32_t),
                             cudaMemcpyHostToDevice));
  float ms = 0;
  PARVIS_TRY(timer.stop(&ms));
  t.upload_ms = ms;

  opt::Args a{g, d_padded.get(), d_map.get(), d_pairs.get(), d_prefix.get(), d_out.get()};
  const int lt = g.layers >= 6 ? 8 : g.layers >= 3 ? 4 : g.layers;
  const int tiles_y = int(cuda::div_up(size_t(g.height), kBlockY));
  const int groups = int(cuda::div_up(size_t(g.layers), size_t(lt)));
  const dim3 grid(cuda::div_up(size_t(g.width), size_t(kBlockX * opt::kQuad)),
                  unsigned(std::min(tiles_y, 65535)), unsigned(std::min(groups, 65535)));
  PARVIS_TRY(timer.start());
  switch (lt) {
    case 8: PARVIS_TRY(launch<8>(a, grid, tiles_y, groups)); break;
    case 4: PARVIS_TRY(launch<4>(a, grid, tiles_y, groups)); break;
    case 2: PARVIS_TRY(launch<2>(a, grid, tiles_y, groups)); break;
    default: PARVIS_TRY(launch<1>(a, grid, tiles_y, groups)); break;
  }
  PARVIS_TRY(timer.stop(&ms));
  t.compute_ms = ms;

  std::vector<Image> results(layers.size());
  for (Image& img : results) PARVIS_TRY(image_alloc(g.width, g.height, 1, &img));
  PARVIS_TRY(timer.start());
  for (size_t l = 0; l < layers.size(); ++l)
    CUDA_CHECK(cudaMemcpy(results[l].data(), d_out.get() + l * plane, plane, cudaMemcpyDeviceToHost));
  PARVIS_TRY(timer.stop(&ms));
  t.download_ms = ms;
  *out = std::move(results);
  if (timings) *timings = t;
  return Status::Ok();
}

}  // namespace parvis::blur
