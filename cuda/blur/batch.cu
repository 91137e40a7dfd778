// The blur's host side shared by every CUDA version (batch.cuh).
#include <string>

#include "blur/batch.cuh"

namespace parvis::blur::gpu {

Status upload(const std::vector<Image>& layers, const Image& map, DeviceBatch* b, Timings* t) {
  PARVIS_TRY(cuda::require_device());
  b->width = map.width;
  b->height = map.height;
  b->layers = int(layers.size());
  b->plane = size_t(map.width) * size_t(map.height);
  const size_t total = b->plane * layers.size();
  PARVIS_TRY(b->in.alloc(total));
  PARVIS_TRY(b->out.alloc(total));
  PARVIS_TRY(b->map.alloc(b->plane));
  cuda::EventTimer timer;
  PARVIS_TRY(timer.start());
  // Images are tightly packed (stride = width for grey), but copy row by row through
  // cudaMemcpy2D so that any stride works.
  CUDA_CHECK(cudaMemcpy2D(b->map.get(), size_t(map.width), map.data(), map.stride,
                          size_t(map.width), size_t(map.height), cudaMemcpyHostToDevice));
  for (size_t l = 0; l < layers.size(); ++l)
    CUDA_CHECK(cudaMemcpy2D(b->in.get() + l * b->plane, size_t(map.width), layers[l].data(),
                            layers[l].stride, size_t(map.width), size_t(map.height),
                            cudaMemcpyHostToDevice));
  float ms = 0;
  PARVIS_TRY(timer.stop(&ms));
  if (t) t->upload_ms = ms;
  return Status::Ok();
}

Status download(const DeviceBatch& b, std::vector<Image>* out, Timings* t) {
  std::vector<Image> results(size_t(b.layers));
  for (Image& img : results) PARVIS_TRY(image_alloc(b.width, b.height, 1, &img));
  cuda::EventTimer timer;
  PARVIS_TRY(timer.start());
  for (size_t l = 0; l < results.size(); ++l)
    CUDA_CHECK(cudaMemcpy(results[l].data(), b.out.get() + l * b.plane, b.plane,
                          cudaMemcpyDeviceToHost));
  float ms = 0;
  PARVIS_TRY(timer.stop(&ms));
  if (t) t->download_ms = ms;
  *out = std::move(results);
  return Status::Ok();
}

Status upload_taps(const TapSets& taps, cuda::DeviceBuffer<int32_t>* d) {
  PARVIS_TRY(d->alloc(taps.taps.size()));
  CUDA_CHECK(cudaMemcpy(d->get(), taps.taps.data(), taps.taps.size() * sizeof(int32_t),
                        cudaMemcpyHostToDevice));
  return Status::Ok();
}

// ------------------------------------------------------------------ peak multiply-add rates
namespace {

constexpr int kChains = 8;      // independent accumulators per thread
constexpr int kSteps = 4096;    // multiply-adds per chain

// Each step is one IMAD (or one dp2a) per chain, fed by the chain's previous value and by
// operands that depend on the thread and on `seed`: the compiler can neither fold nor hoist.
template <bool kDp2a>
__global__ void multiply_add_chains(uint32_t seed, uint32_t* sink) {
  uint32_t acc[kChains];
  const uint32_t a = seed + threadIdx.x, b = seed ^ blockIdx.x;
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = a + uint32_t(c);
  for (int s = 0; s < kSteps; ++s) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = kDp2a ? __dp2a_lo(acc[c], b, acc[c]) : acc[c] * b + a;
  }
  uint32_t r = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) r ^= acc[c];
  if (r == 0x12345678u) *sink = r;  // practically never: keeps the work alive
}

template <class Kernel>
Status time_chains(Kernel kernel, int sms, double* per_s) {
  cuda::DeviceBuffer<uint32_t> sink;
  PARVIS_TRY(sink.alloc(1));
  const unsigned blocks = unsigned(sms) * 8, threads = 256;
  kernel<<<blocks, threads>>>(1u, sink.get());  // warm-up
  CUDA_CHECK_LAUNCH();
  cuda::EventTimer timer;
  PARVIS_TRY(timer.start());
  kernel<<<blocks, threads>>>(2u, sink.get());
  CUDA_CHECK_LAUNCH();
  float ms = 0;
  PARVIS_TRY(timer.stop(&ms));
  *per_s = double(blocks) * threads * kChains * kSteps / (double(ms) * 1e-3);
  return Status::Ok();
}

}  // namespace

}  // namespace parvis::blur::gpu

namespace parvis::blur {

Status measure_peak(PeakRates* out) {
  PARVIS_TRY(cuda::require_device());
  int dev = 0, sms = 0, khz = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
  PeakRates p;
  p.sms = sms;
  p.clock_ghz = khz * 1e-6;
  p.imad_sheet_per_s = double(sms) * 64 * khz * 1e3;
  PARVIS_TRY(gpu::time_chains(gpu::multiply_add_chains<false>, sms, &p.imad_per_s));
  PARVIS_TRY(gpu::time_chains(gpu::multiply_add_chains<true>, sms, &p.dp2a_per_s));
  *out = p;
  return Status::Ok();
}

}  // namespace parvis::blur
