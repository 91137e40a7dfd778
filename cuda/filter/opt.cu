// Convolution filter, CUDA optimized — cuda-opt.
//
// The work: out[y][i] = round_clamp(sum over (ky, kx) of tap[ky][kx] * in[y + ky - R][i + (kx - R) C]),
// where a row of W pixels x C channels is a row of W C bytes: grey and RGB are one loop, and the
// packed RGB bytes are never split into planes. 8K RGB 5x5 is 99.5 M outputs x 25 taps = 2.5 G
// multiply-adds, too many for the CUDA cores at the memory floor (~66 us: 2 x 99.5 MB at a
// 3.0 TB/s device copy; 2.5 G IMADs at 64 per SM and clock on 132 SMs at 1.98 GHz are ~150 us
// alone), so
// the taps go through the tensor cores, exactly: integer MMA multiplies s8 by u8 and sums in s32
// without rounding (useful work is 640 of each MMA's 4096 multiply-adds, ~16 us at the s8 peak).
//
// 1. convolve_mma_fixed<K, PLANES, RB> (K = 3, 5; sm_80+; variant mma — where the taps fit two s8
//    planes and the divisor a magic number, else the CUDA-core kernel — and auto's path for the
//    kernels sep does not take):
//    One warp computes 128 consecutive output bytes of RB consecutive rows (a "unit"). The 128
//    bytes are 8 segments of 16; per kernel row ky one mma.m16n8k32 (s8 x u8 -> s32) computes
//    all of them at once: D[m][n] = sum_k A[m][k] B[k][n], with
//      B[k][n] = source byte (segment n's first output - lead + k), k < 32 (the segment's 16
//                outputs and the halo on both sides; lead = R C rounded up to 4, so each lane
//                reads aligned 32-bit words: its two B registers are bytes 4t..4t+3 and
//                16+4t..16+4t+3 of segment g, i.e. two coalesced 128-byte row reads per warp);
//      A[m][k] = tap[ky][kx] where k = o(m) + kx C + (lead - R C), else 0: a banded Toeplitz
//                matrix of the kernel row, built once on the host for every lane's fragment.
//    o(m) orders the 16 outputs of a segment as 0 2 4 .. 14 1 3 .. 15, so that each lane's
//    four results are two pairs of adjacent bytes; one __shfl_xor with the neighbour group
//    gives each lane 4 adjacent bytes, stored as one aligned 32-bit word (128 contiguous bytes
//    per warp and row). Each source row is loaded once per unit (two words per lane) and fed to
//    the K accumulators it contributes to (register blocking over RB = 8 rows: 1.5 row loads per
//    output row at K = 5). Taps outside s8 are split in two digit planes t = lo + 256 hi (lo, hi
//    in s8, |t| <= 32767: unsharp 5x5's centre 476): one more MMA per row and plane, summed
//    exactly as acc_lo + 256 acc_hi. Products and sums are exact in s32 (|sum| <= 2^30 by
//    check_kernel); the finish is round_clamp without branches: two clamps and a multiply-high by
//    a magic number checked exact on the host for every value that can reach it (DeviceDivider;
//    divisors below 2^23).
// 2. convolve_mma_any: the same for any kernel size (1..15) and span (up to two k-chunks of
//    32 bytes), one output row per warp, fragments read from global memory (L1-cached).
// 3. convolve_direct (CUDA cores; sm_75, taps beyond two planes, divisors >= 2^23, variant
//    direct): one thread per 4 output bytes, int32 IMADs, taps in constant memory, 32-bit loads.
// Borders (all three) are applied where bytes are loaded: a word that lies inside the row is one
// aligned load, one that crosses the row's ends is gathered byte by byte through border_index; a
// row outside the image under the zero border is a zero B operand. Images live on the GPU with
// rows 16-byte aligned (pitch), so every word load is aligned; outputs are stored as whole words,
// the bytes past the row end falling in the pitch padding, which is never copied back.
//
// 4. convolve_sep<K, C, F> (variant sep; opt_sep.cuh): kernels that are a separable one plus a
//    centre tap (gaussian, box, identity, unsharp, edge 3x3) under the zero border, two passes in
//    registers (16-bit pairs, one IMAD per two bytes and tap), warps walking strips down the
//    image; other kernels and borders take the MMA path. kSepByDefault makes it auto's choice (it
//    is faster than the MMA kernel on every measured workload: docs/decisions/017). From compute
//    capability 8.0 the same arithmetic runs as convolve_sep_async<K, C, F> (opt_sep_async.cuh):
//    the source rows staged in shared memory by cp.async, 3 rows in flight a warp without
//    registers (FilterTuning::sep_async picks the form; filter.sep_async=0 the register kernel).
//    F, the finish (opt_sep.cuh SepFinish), is compiled in, so no finish pays another's registers
//    (opt_sep_plan.cuh picks the kernel and its strips).
//
// The tuning (src/filter/tuning.hpp: variant, threads, sep's form and strips) comes filled from
// PARVIS_TUNING by the caller; opt_tuning_defaults fills what it leaves open for this device.
//
// The MMA path stays about twice the memory floor even with the units away from the borders
// issuing all their row loads together and the one-plane kernel bounded to 64 registers (4
// blocks per SM): it is latency-bound, not bandwidth- or MMA-bound (Nsight Compute: DRAM and SM
// throughput both well under half; docs/decisions/016).
#include <algorithm>
#include <string>
#include <vector>

#include "filter/device_image.cuh"
#include "filter/opt_common.cuh"
#include "filter/opt_sep_plan.cuh"

namespace parvis::filter {

using cuda_filter::DeviceDivider;
using cuda_filter::DeviceImages;

namespace {

// 1. K x K kernels whose span fits one mma (K = 3, 5), RB rows per warp, fragments in registers.
template <int K, int PLANES, int RB>
__device__ __forceinline__ void convolve_mma_fixed_body(const Geometry& g, const uint4* __restrict__ frags,
                                                        const DeviceDivider& dv) {
  const int lane = threadIdx.x & 31;
  const long long unit = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (unit >= g.units) return;  // whole warps
  const int x0 = int(unit % g.units_x) * kUnitBytes, y0 = int(unit / g.units_x) * RB;
  constexpr int R = K / 2;
  uint4 a[K][PLANES];
#pragma unroll
  for (int ky = 0; ky < K; ++ky)
#pragma unroll
    for (int p = 0; p < PLANES; ++p) a[ky][p] = __ldg(&frags[(ky * PLANES + p) * 32 + lane]);
  int acc[PLANES][RB][4] = {};
  const int xb = x0 + kSegment * (lane >> 2) - g.lead + 4 * (lane & 3);
  constexpr int ROWS = RB + K - 1;
  // Units away from every border (nearly all of them) issue their 2 ROWS word loads before any
  // MMA: the loads of a unit are then in flight together instead of one row at a time, which is
  // what keeps enough bytes in flight to approach the copy rate. The words and the sums are the
  // same as on the general path below (the last lane's second word ends at x0 + 144 - lead).
  const bool inside = x0 >= g.lead && x0 + kUnitBytes + kSegment - g.lead <= g.row_bytes &&
                      y0 >= R && y0 + RB + R <= g.height;  // the same for the whole warp
  if (inside) {
    uint32_t b[ROWS][2];
    load_rows_inside(b, g.in + size_t(y0 - R) * g.pitch + xb, g.pitch);
#pragma unroll
    for (int r = 0; r < ROWS; ++r) mma_source_row<K, PLANES, RB>(acc, a, r, b[r][0], b[r][1]);
  } else {
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      uint32_t b0, b1;
      load_row_bordered(y0 + r - R, xb, g, b0, b1);
      mma_source_row<K, PLANES, RB>(acc, a, r, b0, b1);
    }
  }
  store_unit_rows<PLANES, RB>(acc, y0, x0, lane, g, dv);
}

template <int K, int PLANES, int RB>
__global__ void convolve_mma_fixed(Geometry g, const uint4* __restrict__ frags, DeviceDivider dv) {
  convolve_mma_fixed_body<K, PLANES, RB>(g, frags, dv);
}

// The same with at most 64 registers (4 blocks of 256 per SM instead of 3): the kernel for one
// plane and 8 rows (launched with at most 256 threads; faster than the unbounded one with 80
// registers and 3 blocks, and than 4 rows a unit: docs/decisions/016).
template <int K, int PLANES, int RB>
__global__ void __launch_bounds__(256, 4) convolve_mma_fixed_lb4(Geometry g, const uint4* __restrict__ frags,
                                                                 DeviceDivider dv) {
  convolve_mma_fixed_body<K, PLANES, RB>(g, frags, dv);
}

// 2. Any size (1..15), one or two k-chunks, one or two planes; one output row per warp.
__global__ void convolve_mma_any(Geometry g, const uint4* __restrict__ frags, DeviceDivider dv,
                                 int chunks, int planes) {
  const int lane = threadIdx.x & 31;
  const long long unit = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (unit >= g.units) return;
  const int x0 = int(unit % g.units_x) * kUnitBytes, y = int(unit / g.units_x);
  int lo[4] = {0, 0, 0, 0}, hi[4] = {0, 0, 0, 0};
  const int xb = x0 + kSegment * (lane >> 2) - g.lead + 4 * (lane & 3);
  for (int ky = 0; ky < g.size; ++ky) {
    const int sy = border_index(y + ky - g.radius, g.height, g.border);
    if (sy < 0) continue;  // the same for the whole warp
    const uint8_t* row = g.in + size_t(sy) * g.pitch;
    for (int c = 0; c < chunks; ++c) {
      const uint32_t b0 = load_word(row, xb + kChunk * c, g);
      const uint32_t b1 = load_word(row, xb + kChunk * c + kSegment, g);
      const uint4* slot = frags + size_t((ky * planes) * chunks + c) * 32 + lane;
      mma_s8u8(lo, __ldg(slot), b0, b1);
      if (planes > 1) mma_s8u8(hi, __ldg(slot + size_t(chunks) * 32), b0, b1);
    }
  }
  int sum[4];
  for (int i = 0; i < 4; ++i) sum[i] = lo[i] + 256 * hi[i];
  store_unit_row(sum, y, x0, lane, g, dv);
}

// 3. CUDA cores: one thread per 4 output bytes, taps in constant memory.
__constant__ int32_t c_opt_taps[kMaxKernelSize * kMaxKernelSize];

__global__ void convolve_direct(Geometry g, DeviceDivider dv) {
  const long long words_x = (g.row_bytes + 3) / 4;
  const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= words_x * g.height) return;
  const int x = int(idx % words_x) * 4, y = int(idx / words_x);
  int acc[4] = {0, 0, 0, 0};
  for (int ky = 0; ky < g.size; ++ky) {
    const int sy = border_index(y + ky - g.radius, g.height, g.border);
    if (sy < 0) continue;
    const uint8_t* row = g.in + size_t(sy) * g.pitch;
    for (int kx = 0; kx < g.size; ++kx) {
      const int32_t tap = c_opt_taps[ky * g.size + kx];
      if (tap == 0) continue;
      const uint32_t w = load_word_any(row, x + (kx - g.radius) * g.channels, g);
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[i] += tap * int32_t((w >> (8 * i)) & 255u);
    }
  }
  uint32_t word = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) word |= cuda_filter::finish(acc[i], dv) << (8 * i);
  *reinterpret_cast<uint32_t*>(g.out + size_t(y) * g.pitch + x) = word;
}

// ---- host: the A fragments ------------------------------------------------------------------------
// Output offset within a segment of MMA row m: 0 2 4 .. 14 for m < 8, then 1 3 .. 15.
int output_of_row(int m) { return m < 8 ? 2 * m : 2 * (m - 8) + 1; }

// Digit `plane` of a tap: t = lo + 256 hi with lo, hi in s8.
int32_t digit(int32_t t, int plane) {
  const int32_t lo = int32_t(int8_t(uint8_t(uint32_t(t) & 0xFFu)));
  return plane == 0 ? lo : (t - lo) / 256;
}

// The fragments of every (kernel row, plane, chunk) in that order, 32 lanes of 4 registers each:
// lane (g, t) holds A[g][4t..4t+3], A[g+8][4t..4t+3], A[g][16+4t..], A[g+8][16+4t..].
std::vector<uint4> make_fragments(const Kernel& k, int channels, int lead, int planes, int chunks) {
  const int R = k.size / 2, pad = lead - R * channels;
  std::vector<uint4> frags;
  for (int ky = 0; ky < k.size; ++ky)
    for (int p = 0; p < planes; ++p)
      for (int c = 0; c < chunks; ++c) {
        auto a = [&](int m, int kk) -> uint32_t {  // A[m][kk] as a byte
          const int rel = c * kChunk + kk - output_of_row(m) - pad;  // = kx C
          if (rel < 0 || rel % channels != 0 || rel / channels >= k.size) return 0;
          return uint32_t(uint8_t(int8_t(digit(k.taps[size_t(ky) * k.size + rel / channels], p))));
        };
        for (int lane = 0; lane < 32; ++lane) {
          const int grp = lane >> 2, t = lane & 3;
          uint32_t r[4] = {0, 0, 0, 0};
          for (int i = 0; i < 4; ++i) {
            r[0] |= a(grp, 4 * t + i) << (8 * i);
            r[1] |= a(grp + 8, 4 * t + i) << (8 * i);
            r[2] |= a(grp, 16 + 4 * t + i) << (8 * i);
            r[3] |= a(grp + 8, 16 + 4 * t + i) << (8 * i);
          }
          frags.push_back(make_uint4(r[0], r[1], r[2], r[3]));
        }
      }
  return frags;
}

uint64_t g_taps_owner = 0;  // whose taps c_opt_taps holds

}  // namespace

std::vector<std::string> variant_names() { return {"auto", "mma", "direct", "sep"}; }

// Whether "auto" takes the separable kernel (opt_sep.cuh) where it applies, as "sep" does: the
// one line to change if a measurement says otherwise (bench/filter_variants.sh auto sep); and
// whether it does so for the kernels with a centre tap too (unsharp, edge 3x3: finish CentreMul).
constexpr bool kSepByDefault = true, kSepPerByteByDefault = true;

enum class OptPath { MmaFixed, MmaAny, Direct, Sep };

struct Filter {
  uint64_t id = 0;
  FilterTuning tuning;  // as given, its open fields filled (opt_tuning_defaults)
  DeviceImages images;
  Geometry geo{};
  DeviceDivider divider;
  OptPath path = OptPath::Direct;
  int planes = 1, chunks = 1, rows_per_unit = 1;
  SepPlan sep{};  // Sep: its kernel, taps, finish, strips (opt_sep_plan.cuh)
  int threads = 256;
  std::string why;  // when auto chose the CUDA cores
  std::vector<int32_t> taps;
  cuda::DeviceBuffer<uint4> frags;
};

void FilterDeleter::operator()(Filter* f) const { delete f; }

namespace {
// Calls visit(kernel function) with the kernel the filter's path runs.
template <typename Visit>
Status with_kernel(const Filter& f, Visit visit) {
  switch (f.path) {
    case OptPath::MmaFixed:  // one plane: 8 rows a unit, launch-bounded; two planes: 4 rows
      if (f.planes == 1)
        return f.geo.size == 3 ? visit(&convolve_mma_fixed_lb4<3, 1, 8>) : visit(&convolve_mma_fixed_lb4<5, 1, 8>);
      return f.geo.size == 3 ? visit(&convolve_mma_fixed<3, 2, 4>) : visit(&convolve_mma_fixed<5, 2, 4>);
    case OptPath::MmaAny:
      return visit(&convolve_mma_any);
    case OptPath::Direct:
      return visit(&convolve_direct);
    case OptPath::Sep:
      return with_sep_kernel(f.geo, f.sep, visit);
  }
  return Status::runtime("filter: unknown path");
}

}  // namespace

Status version_create(const Kernel& kernel, Border border, int width, int height, int channels,
                      const FilterTuning& tuning, int, FilterPtr* out) {
  PARVIS_TRY(cuda::require_device());
  int dev = 0, major = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  FilterPtr f(new Filter);
  f->tuning = opt_tuning_defaults(tuning, major, kernel.size);
  const FilterTuning& t = f->tuning;
  PARVIS_TRY(cuda_filter::check_block_threads(t.block_threads));
  if (t.sep_async == 1 && major < 8)
    return Status::bad_input("filter sep_async=1: no cp.async below compute capability 8.0");
  f->id = cuda_filter::next_filter_id();
  f->threads = t.block_threads;
  PARVIS_TRY(f->images.init(width, height, channels, 16));
  f->taps = kernel.taps;
  f->divider = cuda_filter::make_device_divider(kernel.divisor);

  // Two s8 digit planes hold t = lo + 256 hi for t in [-128 * 257, 127 * 257].
  bool s8 = true, two_planes = true;
  for (int32_t tap : kernel.taps) {
    s8 = s8 && tap >= -128 && tap <= 127;
    two_planes = two_planes && tap >= -128 * 257 && tap <= 127 * 257;
  }
  f->planes = s8 ? 1 : 2;

  const int R = kernel.size / 2;
  Geometry& g = f->geo;
  g.in = f->images.in();
  g.out = f->images.out();
  g.pitch = f->images.pitch();
  g.width = width;
  g.height = height;
  g.channels = channels;
  g.row_bytes = width * channels;
  g.border = border;
  g.size = kernel.size;
  g.radius = R;
  g.lead = (R * channels + 3) / 4 * 4;
  const int span = kSegment + (kernel.size - 1) * channels + (g.lead - R * channels);
  f->chunks = (span + kChunk - 1) / kChunk;

  // The cost model: sep where it applies, else the MMA kernels, else the CUDA cores.
  const std::string& name = t.variant;
  std::string sep_why;  // "sep": the separable kernel where it applies, else auto's path
  if ((name == "sep" || (name == "auto" && kSepByDefault)) &&
      sep_params(kernel, border, channels, f->divider, &f->sep.params, &sep_why) &&
      (name == "sep" || kSepPerByteByDefault || !sep_finish_takes_centre(f->sep.params.finish))) {
    f->path = OptPath::Sep;
    f->sep.async = t.sep_async == 1;
  }
  bool mma = name != "direct" && f->path != OptPath::Sep;
  if (major < 8) f->why = "no integer MMA m16n8k32 below compute capability 8.0";
  else if (!two_planes) f->why = "taps beyond two s8 digit planes (|tap| > 32639)";
  else if (!f->divider.exact) f->why = "a divisor without a 32-bit magic number (>= 2^23)";
  if (!f->why.empty()) mma = false;  // variant mma too: the MMA kernels where they apply, else direct
  if (mma) {
    const bool fixed = (kernel.size == 3 || kernel.size == 5) && f->chunks == 1;
    f->path = fixed ? OptPath::MmaFixed : OptPath::MmaAny;
    f->rows_per_unit = fixed ? (f->planes == 1 ? 8 : 4) : 1;
    const std::vector<uint4> frags = make_fragments(kernel, channels, g.lead, f->planes, f->chunks);
    PARVIS_TRY(f->frags.alloc(frags.size()));
    CUDA_CHECK(cudaMemcpyAsync(f->frags.get(), frags.data(), frags.size() * sizeof(uint4),
                               cudaMemcpyHostToDevice, f->images.stream()));  // cuda/common.cuh
    g.units_x = (g.row_bytes + kUnitBytes - 1) / kUnitBytes;
    g.units = g.units_x * ((height + f->rows_per_unit - 1) / f->rows_per_unit);
  } else if (f->path != OptPath::Sep) {
    f->path = OptPath::Direct;
  }
  // The block size, capped at what the compiled kernel allows with its registers.
  PARVIS_TRY(with_kernel(*f, [&](auto kernel_fn) -> Status {
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel_fn));
    f->threads = std::min(f->threads, attr.maxThreadsPerBlock / 32 * 32);
    return Status::Ok();
  }));
  f->tuning.block_threads = f->threads;
  if (f->path == OptPath::Sep) PARVIS_TRY(sep_plan_grid(f->geo, f->threads, t.sep_rows, dev, &f->sep));
  *out = std::move(f);
  return Status::Ok();
}

Status filter_upload(Filter* f, const Image& in, Timings* timings) {
  return f->images.upload(in, timings);
}

namespace {

// One launch covering `work_threads` threads (whole warps for the MMA kernels).
using FixedFn = void (*)(Geometry, const uint4*, DeviceDivider);
using AnyFn = void (*)(Geometry, const uint4*, DeviceDivider, int, int);
using DirectFn = void (*)(Geometry, DeviceDivider);
using SepFn = void (*)(Geometry, SepParams);

Status grid_for(const Filter& f, long long work_threads, unsigned* blocks) {
  const long long n = (work_threads + f.threads - 1) / f.threads;
  if (n > 0x7fffffffLL) return Status::bad_input("filter: image too large for one grid");
  *blocks = unsigned(n);
  return Status::Ok();
}
Status launch_on(const Filter& f, FixedFn fn, cudaStream_t s) {
  unsigned blocks = 0;
  PARVIS_TRY(grid_for(f, f.geo.units * 32, &blocks));
  fn<<<blocks, f.threads, 0, s>>>(f.geo, f.frags.get(), f.divider);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}
Status launch_on(const Filter& f, AnyFn fn, cudaStream_t s) {
  unsigned blocks = 0;
  PARVIS_TRY(grid_for(f, f.geo.units * 32, &blocks));
  fn<<<blocks, f.threads, 0, s>>>(f.geo, f.frags.get(), f.divider, f.chunks, f.planes);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}
Status launch_on(const Filter& f, SepFn fn, cudaStream_t s) {
  unsigned blocks = 0;
  PARVIS_TRY(grid_for(f, f.sep.params.warps * 32, &blocks));
  fn<<<blocks, f.threads, f.sep.smem, s>>>(f.geo, f.sep.params);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}
Status launch_on(const Filter& f, DirectFn fn, cudaStream_t s) {
  unsigned blocks = 0;
  PARVIS_TRY(grid_for(f, (long long)((f.geo.row_bytes + 3) / 4) * f.geo.height, &blocks));
  fn<<<blocks, f.threads, 0, s>>>(f.geo, f.divider);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

}  // namespace

Status filter_compute(Filter* f, Timings* timings) {
  if (f->path == OptPath::Direct)
    PARVIS_TRY(cuda_filter::ensure_constant_taps(c_opt_taps, &g_taps_owner, f->id, f->taps,
                                                 f->images.stream()));
  return f->images.compute(
      [&](cudaStream_t s) {
        return with_kernel(*f, [&](auto kernel_fn) { return launch_on(*f, kernel_fn, s); });
      },
      timings);
}

Status filter_download(Filter* f, Image* out, Timings* timings) {
  return f->images.download(out, timings);
}

std::string filter_describe(const Filter* f) {
  std::string s;
  switch (f->path) {
    case OptPath::MmaFixed:
      s = "mma k" + std::to_string(f->geo.size) + " planes " + std::to_string(f->planes) + " rows " +
          std::to_string(f->rows_per_unit) + (f->planes == 1 ? " min-blocks 4" : "");
      break;
    case OptPath::MmaAny:
      s = "mma-any k" + std::to_string(f->geo.size) + " chunks " + std::to_string(f->chunks) +
          " planes " + std::to_string(f->planes);
      break;
    case OptPath::Direct:
      s = "direct" + (f->why.empty() ? std::string() : " (" + f->why + ")");
      break;
    case OptPath::Sep:
      s = sep_describe(f->geo, f->sep);
      break;
  }
  return s + ", " + std::to_string(f->threads) + " threads";
}

FilterTuning filter_tuning(const Filter* f) { return f->tuning; }

}  // namespace parvis::filter
