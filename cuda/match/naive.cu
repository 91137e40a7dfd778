// Template matching, CUDA naive: the seeds' first CUDA ports, kernel for kernel.
//
// SSD by FFT (seed 000, "Algoritmo Cuda naive"): the squared source is integrated with
// multiply -> rowCumSum -> colCumSum (one thread per row, then per column), source and template
// are zero-padded (padToZero), transformed with cuFFT (R2C), multiplied by the conjugate
// (mulConj), transformed back (C2R), normalised (normalize), and computeSSD forms
// S2 - 2 C + T2 for every position (32x32 blocks). The score map comes back and the minimum is
// found on the host, as the seed did.
//
// Departures from the seed, all for the numerical contract (DESIGN.md: bit-identical to seq):
//  - integer integral images (64-bit) instead of float pixels scaled to [0, 1];
//  - double-precision FFTs (D2Z / Z2D) instead of single: the float pipeline's rounding bound
//    is ~1e9 times larger, far too wide to re-score only a few positions;
//  - positions whose FFT score lies within the rounding bound of the minimum
//    (cuda/match/fft_common.cuh) are re-scored exactly on the host, so the reported best
//    match and its score equal seq's;
//  - the FFT covers only the source (P >= W, Q >= H), which is enough for a correlation that
//    is read at valid positions only.
//
// Direct SSD/SAD (seed 003, first version): one thread per position, template in global memory,
// exact 64-bit sums, the whole map back to the host.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "common.cuh"
#include "match/fft_common.cuh"
#include "match/map_download.cuh"
#include "match/mask.hpp"
#include "match/mask_kernels.cuh"
#include "match/match_common.hpp"
#include "match/select.hpp"
#include "match/ncc.hpp"

namespace parvis::match {

using cuda::DeviceBuffer;
using cuda::div_up;
using cuda::EventTimer;

struct Matcher {
  Image tpl;
  Params params;
};

void MatcherDeleter::operator()(Matcher* m) const { delete m; }

Status matcher_create(const Image& gray_template, const Params& params, MatcherPtr* out) {
  PARVIS_TRY(cuda::require_device());
  PARVIS_TRY(check_params(params));
  PARVIS_TRY(check_template(gray_template));
  PARVIS_TRY(mask::check(params, gray_template.width, gray_template.height));
  out->reset(new Matcher{gray_template, params});
  return Status::Ok();
}

// =============================================================================== kernels
// ---- integral image of the squares (seed: multiply, rowCumSum, colCumSum) ----------------

// Each thread squares one pixel (32x32 blocks).
__global__ void multiply(const uint8_t* in, uint64_t* out, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const uint64_t v = in[size_t(y) * width + x];
  out[size_t(y) * width + x] = v * v;
}

// One thread per row walks the row and accumulates (blocks of 32 threads).
__global__ void rowCumSum(uint64_t* data, int width, int height) {
  const int y = blockIdx.x * blockDim.x + threadIdx.x;
  if (y >= height) return;
  uint64_t sum = 0;
  for (int x = 0; x < width; ++x) {
    sum += data[size_t(y) * width + x];
    data[size_t(y) * width + x] = sum;
  }
}

// One thread per column walks the column and accumulates (blocks of 32 threads).
__global__ void colCumSum(uint64_t* data, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= width) return;
  uint64_t sum = 0;
  for (int y = 0; y < height; ++y) {
    sum += data[size_t(y) * width + x];
    data[size_t(y) * width + x] = sum;
  }
}

// ---- cross-correlation by FFT (seed: padToZero, cuFFT, mulConj, cuFFT, normalize) -----------

// Copies a width x height image into the top-left corner of a P x Q zero matrix (16x16 blocks).
__global__ void padToZero(const uint8_t* in, int width, int height, double* out, int P, int Q) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= P || y >= Q) return;
  out[size_t(y) * P + x] = (x < width && y < height) ? double(in[size_t(y) * width + x]) : 0.0;
}

// out = a * conj(b): (a + bi)(c - di) = (ac + bd) + (bc - ad)i (16x16 blocks).
__global__ void mulConj(const cufftDoubleComplex* a, const cufftDoubleComplex* b,
                        cufftDoubleComplex* out, int cols, int rows) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= cols || y >= rows) return;
  const size_t i = size_t(y) * cols + x;
  const cufftDoubleComplex p = a[i], q = b[i];
  out[i] = make_cuDoubleComplex(p.x * q.x + p.y * q.y, p.y * q.x - p.x * q.y);
}

// cuFFT's inverse is unnormalised: divide by the number of points (blocks of 256).
__global__ void normalize(double* data, size_t n, double scale) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= scale;
}

// ---- the SSD map (seed: computeSSD with getRegionSum) -------------------------------------------

// Sum of the w x h window at (x, y) from an inclusive integral image.
__device__ uint64_t getRegionSum(const uint64_t* ii, int width, int x, int y, int w, int h) {
  const int x1 = x + w - 1, y1 = y + h - 1;
  uint64_t s = ii[size_t(y1) * width + x1];
  if (x > 0) s -= ii[size_t(y1) * width + x - 1];
  if (y > 0) s -= ii[size_t(y - 1) * width + x1];
  if (x > 0 && y > 0) s += ii[size_t(y - 1) * width + x - 1];
  return s;
}

// SSD = S2 - 2 SC + T2 for every position (32x32 blocks). The correlation matrix is padded:
// its stride is P.
__global__ void computeSSD(const uint64_t* sq_integral, int width, const double* cross_corr,
                           int P, uint64_t tpl_sq_sum, int w, int h, int map_w, int map_h,
                           double* out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= map_w || y >= map_h) return;
  const uint64_t s2 = getRegionSum(sq_integral, width, x, y, w, h);
  const double sc = cross_corr[size_t(y) * P + x];
  out[size_t(y) * map_w + x] = double(s2) - 2.0 * sc + double(tpl_sq_sum);
}

// ---- direct method (seed 003, first version) --------------------------------------------------

// One thread per position; the template is read from global memory; exact 64-bit sum.
__global__ void directScore(const uint8_t* src, int width, const uint8_t* tpl, int w, int h,
                            int map_w, int map_h, bool sad, uint64_t* out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= map_w || y >= map_h) return;
  uint64_t sum = 0;
  for (int j = 0; j < h; ++j) {
    const uint8_t* s = src + size_t(y + j) * width + x;
    const uint8_t* t = tpl + size_t(j) * w;
    uint32_t row = 0;  // <= w * 65025 < 2^32 for w < 66052; wider rows are summed in 64 bits
    if (w < 66052) {
      for (int i = 0; i < w; ++i) {
        const int d = int(s[i]) - int(t[i]);
        row += sad ? uint32_t(d < 0 ? -d : d) : uint32_t(d * d);
      }
      sum += row;
    } else {
      for (int i = 0; i < w; ++i) {
        const int d = int(s[i]) - int(t[i]);
        sum += sad ? uint64_t(d < 0 ? -d : d) : uint64_t(d * d);
      }
    }
  }
  out[size_t(y) * map_w + x] = sum;
}

// ---- normalized cross-correlation (DESIGN.md, src/match/ncc.hpp) --------------------------------

// One thread per position: the exact sums ΣI, ΣI², ΣI·T of its window, then the shared
// expression (explicit-rounding intrinsics on the device: the host's bits).
__global__ void directNormed(const uint8_t* src, int width, const uint8_t* tpl, int w, int h,
                             int map_w, int map_h, bool coeff, uint64_t st, uint64_t stt,
                             double* out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= map_w || y >= map_h) return;
  uint64_t si = 0, sii = 0, sit = 0;
  for (int j = 0; j < h; ++j) {
    const uint8_t* s = src + size_t(y + j) * width + x;
    const uint8_t* t = tpl + size_t(j) * w;
    for (int i = 0; i < w; ++i) {
      const uint32_t a = s[i];
      si += a;
      sii += a * a;
      sit += a * t[i];
    }
  }
  out[size_t(y) * map_w + x] = ncc::score(coeff, uint64_t(w) * uint64_t(h), si, sii, sit, st, stt);
}

// =============================================================================== host side

// Uploads a grey image into a tightly packed device buffer.
static Status upload_gray(const Image& img, DeviceBuffer<uint8_t>* d) {
  PARVIS_TRY(d->alloc(size_t(img.width) * img.height));
  CUDA_CHECK(cudaMemcpy2D(d->get(), img.width, img.data(), img.stride, img.width,
                          img.height, cudaMemcpyHostToDevice));
  return Status::Ok();
}

static Status alloc_map(std::vector<double>* map, size_t n) {
  try {
    map->assign(n, 0.0);
  } catch (const std::bad_alloc&) {
    return Status::runtime("out of host memory for a score map of " + std::to_string(n) +
                           " entries");
  }
  return Status::Ok();
}

// The exact score of one window, on the host (re-scoring of FFT candidates).
static uint64_t exact_score(const Image& src, const Image& tpl, Metric metric, int x, int y) {
  uint64_t sum = 0;
  for (int j = 0; j < tpl.height; ++j) {
    const uint8_t* s = src.row(y + j) + x;
    const uint8_t* t = tpl.row(j);
    for (int i = 0; i < tpl.width; ++i) sum += pixel_cost(metric, int(s[i]) - int(t[i]));
  }
  return sum;
}

// Direct method: the whole exact map on the GPU, the best positions on the host. SSD / SAD:
// integer scores (directScore); NCC / ccorr-normed: the doubles of directNormed, ranked by
// their keys (ncc::key_of).
static Status run_direct(const Matcher& m, const Image& src, Result* res) {
  const Image& tpl = m.tpl;
  const int map_w = res->map_width, map_h = res->map_height;
  const size_t n = size_t(map_w) * map_h;
  const bool normed = is_normed(m.params.metric);
  EventTimer timer;
  float ms = 0;

  DeviceBuffer<uint8_t> d_src, d_tpl;
  DeviceBuffer<uint64_t> d_map;  // integer scores, or the doubles' bits
  PARVIS_TRY(d_map.alloc(n));
  PARVIS_TRY(timer.start());
  PARVIS_TRY(upload_gray(src, &d_src));
  PARVIS_TRY(upload_gray(tpl, &d_tpl));
  PARVIS_TRY(timer.stop(&ms));
  res->timings.upload_ms = ms;

  PARVIS_TRY(timer.start());
  const dim3 block(32, 32);  // seed 003: all 1024 threads of a block, in 2D
  const dim3 grid(div_up(map_w, block.x), div_up(map_h, block.y));
  if (normed) {
    const TemplateSums ts = template_sums(tpl);
    directNormed<<<grid, block>>>(d_src.get(), src.width, d_tpl.get(), tpl.width, tpl.height,
                                  map_w, map_h, m.params.metric == Metric::NCC, ts.st, ts.stt,
                                  reinterpret_cast<double*>(d_map.get()));
  } else {
    directScore<<<grid, block>>>(d_src.get(), src.width, d_tpl.get(), tpl.width, tpl.height,
                                 map_w, map_h, m.params.metric == Metric::SAD, d_map.get());
  }
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(timer.stop(&ms));
  res->timings.compute_ms = ms;

  PARVIS_TRY(cuda_direct::download_and_rank(d_map.get(), map_w, map_h, normed, m.params, &timer,
                                             res));
  res->method_used = Method::Direct;
  return Status::Ok();
}

// SSD by integral image + FFT cross-correlation, the seed's pipeline.
static Status run_fft(const Matcher& m, const Image& src, Result* res) {
  const Image& tpl = m.tpl;
  const int W = src.width, H = src.height, w = tpl.width, h = tpl.height;
  const int map_w = res->map_width, map_h = res->map_height;
  const int P = cuda::fft::good_size(W), Q = cuda::fft::good_size(H);
  const int Pc = P / 2 + 1;  // R2C keeps half the spectrum (plus one column)
  const size_t n_real = size_t(P) * Q, n_spec = size_t(Pc) * Q, n_map = size_t(map_w) * map_h;
  EventTimer timer;
  float ms = 0;

  DeviceBuffer<uint8_t> d_src, d_tpl;
  DeviceBuffer<uint64_t> d_src_sq, d_tpl_sq;
  DeviceBuffer<double> d_src_pad, d_tpl_pad, d_map;
  DeviceBuffer<cufftDoubleComplex> d_src_spec, d_tpl_spec, d_prod;
  PARVIS_TRY(d_src_sq.alloc(size_t(W) * H));
  PARVIS_TRY(d_tpl_sq.alloc(size_t(w) * h));
  PARVIS_TRY(d_src_pad.alloc(n_real));
  PARVIS_TRY(d_tpl_pad.alloc(n_real));
  PARVIS_TRY(d_src_spec.alloc(n_spec));
  PARVIS_TRY(d_tpl_spec.alloc(n_spec));
  PARVIS_TRY(d_prod.alloc(n_spec));
  PARVIS_TRY(d_map.alloc(n_map));

  PARVIS_TRY(timer.start());
  PARVIS_TRY(upload_gray(src, &d_src));
  PARVIS_TRY(upload_gray(tpl, &d_tpl));
  PARVIS_TRY(timer.stop(&ms));
  res->timings.upload_ms = ms;

  PARVIS_TRY(timer.start());
  cuda::StageTimer st(m.params.stage_times);  // seed 000's stage table, for the bench
  PARVIS_TRY(st.mark("", "start"));
  // Integral images of the squares: source (for S2) and template (its last entry is T2).
  const dim3 b32(32, 32);
  multiply<<<dim3(div_up(W, 32), div_up(H, 32)), b32>>>(d_src.get(), d_src_sq.get(), W, H);
  CUDA_CHECK_LAUNCH();
  rowCumSum<<<div_up(H, 32), 32>>>(d_src_sq.get(), W, H);
  CUDA_CHECK_LAUNCH();
  colCumSum<<<div_up(W, 32), 32>>>(d_src_sq.get(), W, H);
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(st.mark(kStageIntegralSource, "multiply + rowCumSum + colCumSum"));
  multiply<<<dim3(div_up(w, 32), div_up(h, 32)), b32>>>(d_tpl.get(), d_tpl_sq.get(), w, h);
  CUDA_CHECK_LAUNCH();
  rowCumSum<<<div_up(h, 32), 32>>>(d_tpl_sq.get(), w, h);
  CUDA_CHECK_LAUNCH();
  colCumSum<<<div_up(w, 32), 32>>>(d_tpl_sq.get(), w, h);
  CUDA_CHECK_LAUNCH();
  uint64_t tpl_sq_sum = 0;
  CUDA_CHECK(cudaMemcpy(&tpl_sq_sum, d_tpl_sq.get() + size_t(w) * h - 1, sizeof tpl_sq_sum,
                        cudaMemcpyDeviceToHost));
  PARVIS_TRY(st.mark(kStageIntegralTemplate, "multiply + rowCumSum + colCumSum + T2 copy"));

  // Cross-correlation: pad, forward FFTs, multiply by the conjugate, inverse FFT, normalise.
  const dim3 b16(16, 16);
  padToZero<<<dim3(div_up(P, 16), div_up(Q, 16)), b16>>>(d_src.get(), W, H, d_src_pad.get(), P, Q);
  CUDA_CHECK_LAUNCH();
  padToZero<<<dim3(div_up(P, 16), div_up(Q, 16)), b16>>>(d_tpl.get(), w, h, d_tpl_pad.get(), P, Q);
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(st.mark(kStageCrossCorrelation, "padToZero x2"));
  cuda::fft::Plan fwd, inv;
  PARVIS_TRY(fwd.make_2d(Q, P, CUFFT_D2Z));
  PARVIS_TRY(inv.make_2d(Q, P, CUFFT_Z2D));
  PARVIS_TRY(st.mark(kStageCrossCorrelation, "cufftPlan2d x2"));
  CUFFT_CHECK(cufftExecD2Z(fwd.get(), d_src_pad.get(), d_src_spec.get()));
  CUFFT_CHECK(cufftExecD2Z(fwd.get(), d_tpl_pad.get(), d_tpl_spec.get()));
  PARVIS_TRY(st.mark(kStageCrossCorrelation, "cuFFT D2Z x2"));
  mulConj<<<dim3(div_up(Pc, 16), div_up(Q, 16)), b16>>>(d_src_spec.get(), d_tpl_spec.get(),
                                                        d_prod.get(), Pc, Q);
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(st.mark(kStageCrossCorrelation, "mulConj"));
  CUFFT_CHECK(cufftExecZ2D(inv.get(), d_prod.get(), d_src_pad.get()));  // reuse: correlation
  PARVIS_TRY(st.mark(kStageCrossCorrelation, "cuFFT Z2D"));
  normalize<<<div_up(n_real, 256), 256>>>(d_src_pad.get(), n_real, 1.0 / double(n_real));
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(st.mark(kStageCrossCorrelation, "normalize"));

  // The SSD map.
  computeSSD<<<dim3(div_up(map_w, 32), div_up(map_h, 32)), b32>>>(
      d_src_sq.get(), W, d_src_pad.get(), P, tpl_sq_sum, w, h, map_w, map_h, d_map.get());
  CUDA_CHECK_LAUNCH();
  PARVIS_TRY(st.mark(kStageSsd, "computeSSD"));
  PARVIS_TRY(timer.stop(&ms));
  PARVIS_TRY(st.collect(&res->timings));
  res->timings.compute_ms = ms;

  std::vector<double> approx;
  PARVIS_TRY(alloc_map(&approx, n_map));
  PARVIS_TRY(timer.start());
  CUDA_CHECK(cudaMemcpy(approx.data(), d_map.get(), n_map * sizeof(double), cudaMemcpyDeviceToHost));
  PARVIS_TRY(timer.stop(&ms));
  res->timings.download_ms = ms;

  // On the host: the K-th smallest FFT score, then every position within twice the rounding
  // bound of it is re-scored exactly (see fft_common.cuh for why that set holds the exact best).
  const double t0 = now_ms();
  double tpl_l1 = 0, tpl_l2sq = 0;
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < w; ++i) {
      const double v = tpl.row(j)[i];
      tpl_l1 += v;
      tpl_l2sq += v * v;
    }
  const double bound = cuda::fft::ssd_error_bound(P, Q, W, H, tpl_l1, std::sqrt(tpl_l2sq));
  const size_t k = std::min<size_t>(size_t(m.params.top_k), n_map);
  std::vector<double> sorted_part(approx);
  std::nth_element(sorted_part.begin(), sorted_part.begin() + (k - 1), sorted_part.end());
  const double threshold = sorted_part[k - 1] + 2 * bound;
  std::vector<Position> candidates;
  for (int y = 0; y < map_h; ++y)
    for (int x = 0; x < map_w; ++x)
      if (approx[size_t(y) * map_w + x] <= threshold) candidates.push_back(Position{x, y, 0});

  // Too many near-ties (e.g. a flat image) would make host re-scoring slower than the exact
  // map: then take the direct method's exact map instead.
  if (double(candidates.size()) * double(w) * double(h) > 4e8) {
    Result exact = *res;
    PARVIS_TRY(run_direct(m, src, &exact));
    res->best = exact.best;
    res->timings.compute_ms += exact.timings.compute_ms + exact.timings.upload_ms +
                               exact.timings.download_ms;
    res->explain += "; " + std::to_string(candidates.size()) +
                    " near-minimum candidates: exact map from the direct kernel instead";
  } else {
    TopK top(m.params.top_k);
    for (const Position& c : candidates) {
      const uint64_t score = exact_score(src, tpl, Metric::SSD, c.x, c.y);
      top.offer(c.x, c.y, score);
      approx[size_t(c.y) * map_w + c.x] = double(score);  // the map is exact where re-scored
    }
    res->best = top.sorted();
  }
  if (map_needed(m.params)) res->map = std::move(approx);
  const double host_ms = now_ms() - t0;
  res->timings.compute_ms += host_ms;
  if (m.params.stage_times)
    res->timings.stages.push_back(Timings::Stage{kStageSsd, "argmin + exact re-scoring (host)", host_ms});
  res->method_used = Method::FFT;
  return Status::Ok();
}

// matcher_run before the choice (finish_choice).
static Status run_unchosen(Matcher* m, const Image& gray_source, Result* out) {
  PARVIS_TRY(cuda::require_device());
  PARVIS_TRY(check_source(gray_source, m->tpl.width, m->tpl.height));
  reset_result(out);
  out->map_width = map_width_of(gray_source.width, m->tpl.width);
  out->map_height = map_height_of(gray_source.height, m->tpl.height);
  Method method = m->params.method;
  if (mask::active(m->params)) {  // --mask: the shared exact direct kernel (mask_kernels.cuh)
    out->explain.assign(method == Method::Auto ? "auto" : method_name(method))
        .append(": direct (--mask: one thread per position sums the masked window, on the device)");
    return cuda_mask::run(gray_source, m->tpl, m->params, out);
  }
  if (is_normed(m->params.metric)) {
    out->explain.assign(method == Method::Auto ? "auto" : method_name(method))
        .append(": direct (cuda-naive sums the normed metrics directly, on the device)");
    return run_direct(*m, gray_source, out);
  }
  if (method == Method::Auto) {
    // The seeds' choice: seed 000 matched SSD by FFT, seed 003 SAD directly. A wanted map
    // must be exact (as seq's is), which only the direct method gives.
    method = m->params.metric == Metric::SSD && !map_needed(m->params) ? Method::FFT : Method::Direct;
    out->explain = m->params.metric == Metric::SAD
                      ? "auto chose direct: SAD has no FFT form (seed 003's direct kernel)"
                  : map_needed(m->params)
                      ? "auto chose direct: a score map was asked for, and direct gives it exactly"
                      : "auto chose fft: cuda-naive follows seed 000 (SSD by integral image + FFT)";
  } else {
    out->explain.assign(method_name(method)).append(", as asked");
  }
  if (method == Method::FFT && m->params.selection.active()) {
    method = Method::Direct;  // its FFT map is exact near the best only
    out->explain.append("; every match / --min-distance read the map: the direct method's exact one");
  }
  if (method == Method::FFT)
    PARVIS_TRY(run_fft(*m, gray_source, out));
  else
    PARVIS_TRY(run_direct(*m, gray_source, out));
  return Status::Ok();
}

Status matcher_run(Matcher* m, const Image& gray_source, Result* out) {
  PARVIS_TRY(run_unchosen(m, gray_source, out));
  finish_choice(m->params, out);
  return Status::Ok();
}

}  // namespace parvis::match
