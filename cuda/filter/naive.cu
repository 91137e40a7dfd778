// Convolution filter, CUDA naive: seed 001's two kernels, as the seed describes them.
//
//   1. convolve_nonvec ("non-vectorized", Algorithm 5, the default): one thread per pixel AND
//      channel; blocks of bx x by x C threads, threadIdx.z is the channel.
//   2. convolve_vec ("vectorized", Algorithm 7): one thread per pixel, a loop over the channels.
//
// Both read the taps from constant memory (the seed's `const_kernel`, here integer taps of up to
// 15 x 15), read the image straight from global memory (rows packed, no pitch) and sum tap * pixel
// over the window, skipping or mapping the pixels outside by border_index (the seed ignores
// them: our zero border). Departures from the seed, for the numerical contract (DESIGN.md):
// integer taps and an int32 sum instead of floats, the three borders, and round_clamp (divide by
// the kernel's divisor, round half up, clamp) instead of a plain clamp. Grey images are the
// same kernels with one channel.
//
// Threads per block: FilterTuning::block_threads is the number of pixels per block (bx = min(32, n),
// by = n / bx; the seed's "number of threads"), default 256; nonvec blocks hold C times as many
// threads, so for RGB by shrinks until bx by C <= 1024. Rows beyond gridDim.y's limit of 65535
// blocks are covered by launching again further down.
//
// Bench: bench/run_filter.sh (bench/README.md "Convolution filters"; times in bench/RESULTS.md).
#include <algorithm>
#include <string>
#include <vector>

#include "filter/device_image.cuh"

namespace parvis::filter {

using cuda_filter::DeviceImages;

namespace {

__constant__ int32_t c_naive_taps[kMaxKernelSize * kMaxKernelSize];

struct Shape {
  int width, height, channels, size;
  int32_t divisor;
  Border border;
};

// The seed's applyKernel: the window sum of one pixel and channel, from global memory.
__device__ uint8_t apply_kernel(const uint8_t* in, const Shape& s, int x, int y, int c) {
  const int offset = s.size / 2;
  int32_t acc = 0;
  for (int i = -offset; i <= offset; ++i) {
    const int ny = border_index(y + i, s.height, s.border);
    if (ny < 0) continue;
    for (int j = -offset; j <= offset; ++j) {
      const int nx = border_index(x + j, s.width, s.border);
      if (nx < 0) continue;
      const size_t idx = (size_t(ny) * s.width + nx) * s.channels + c;
      acc += int32_t(in[idx]) * c_naive_taps[(i + offset) * s.size + (j + offset)];
    }
  }
  return round_clamp(acc, s.divisor);
}

// Algorithm 5: one thread per pixel and channel (threadIdx.z).
__global__ void convolve_nonvec(const uint8_t* in, uint8_t* out, Shape s, int y_first) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = y_first + blockIdx.y * blockDim.y + threadIdx.y;
  const int c = threadIdx.z;
  if (x >= s.width || y >= s.height || c >= s.channels) return;
  out[(size_t(y) * s.width + x) * s.channels + c] = apply_kernel(in, s, x, y, c);
}

// Algorithm 7: one thread per pixel, the channels one after the other.
__global__ void convolve_vec(const uint8_t* in, uint8_t* out, Shape s, int y_first) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = y_first + blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= s.width || y >= s.height) return;
  for (int c = 0; c < s.channels; ++c)
    out[(size_t(y) * s.width + x) * s.channels + c] = apply_kernel(in, s, x, y, c);
}

}  // namespace

std::vector<std::string> variant_names() { return {"nonvec", "vec"}; }

struct Filter {
  uint64_t id = 0;  // cuda_filter::next_filter_id()
  DeviceImages images;
  Shape shape{};
  std::vector<int32_t> taps;
  bool vectorized = false;
  dim3 block;
  FilterTuning tuning;  // what runs: the variant and the pixels a block
};

void FilterDeleter::operator()(Filter* f) const { delete f; }

namespace {
uint64_t g_taps_owner = 0;  // whose taps c_naive_taps holds
}  // namespace

Status version_create(const Kernel& kernel, Border border, int width, int height, int channels,
                      const FilterTuning& tuning, int variant, FilterPtr* out) {
  PARVIS_TRY(cuda::require_device());
  const int pixels = tuning.block_threads == 0 ? 256 : tuning.block_threads;
  PARVIS_TRY(cuda_filter::check_block_threads(pixels));
  FilterPtr f(new Filter);
  f->tuning.variant = variant_names()[size_t(variant)];
  f->tuning.block_threads = pixels;
  f->id = cuda_filter::next_filter_id();
  PARVIS_TRY(f->images.init(width, height, channels, 1));
  f->shape = Shape{width, height, channels, kernel.size, kernel.divisor, border};
  f->taps = kernel.taps;
  f->vectorized = variant == 1;
  const int bx = std::min(pixels, 32);
  int by = pixels / bx;
  if (!f->vectorized)
    while (by > 1 && bx * by * channels > 1024) by /= 2;
  f->block = dim3(unsigned(bx), unsigned(by), f->vectorized ? 1u : unsigned(channels));
  *out = std::move(f);
  return Status::Ok();
}

Status filter_upload(Filter* f, const Image& in, Timings* timings) {
  return f->images.upload(in, timings);
}

Status filter_compute(Filter* f, Timings* timings) {
  PARVIS_TRY(cuda_filter::ensure_constant_taps(c_naive_taps, &g_taps_owner, f->id, f->taps,
                                               f->images.stream()));
  return f->images.compute(
      [&](cudaStream_t stream) -> Status {
        const Shape& s = f->shape;
        const int rows_per_launch = 65535 * int(f->block.y);
        for (int y0 = 0; y0 < s.height; y0 += rows_per_launch) {
          const int rows = std::min(rows_per_launch, s.height - y0);
          const dim3 grid(cuda::div_up(size_t(s.width), f->block.x),
                          cuda::div_up(size_t(rows), f->block.y));
          if (f->vectorized)
            convolve_vec<<<grid, f->block, 0, stream>>>(f->images.in(), f->images.out(), s, y0);
          else
            convolve_nonvec<<<grid, f->block, 0, stream>>>(f->images.in(), f->images.out(), s, y0);
          CUDA_CHECK_LAUNCH();
        }
        return Status::Ok();
      },
      timings);
}

Status filter_download(Filter* f, Image* out, Timings* timings) {
  return f->images.download(out, timings);
}

std::string filter_describe(const Filter* f) {
  return std::string(f->vectorized ? "vec" : "nonvec") + " " + std::to_string(f->block.x) + "x" +
         std::to_string(f->block.y) + "x" + std::to_string(f->block.z);
}

FilterTuning filter_tuning(const Filter* f) { return f->tuning; }

}  // namespace parvis::filter
