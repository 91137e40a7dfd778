// cuda-opt's separable filter path, host side: which of its kernels runs (the register kernel of
// opt_sep.cuh, or the cp.async kernel of opt_sep_async.cuh, as FilterTuning::sep_async says), with
// which compile-time shape, and on which grid of strips. opt.cu's filter creation calls sep_params
// (opt_sep_params.cuh: taps and finish), then sep_plan_grid.
#pragma once
#include <algorithm>
#include <string>

#include "common.cuh"
#include "filter/opt_sep.cuh"
#include "filter/opt_sep_async.cuh"
#include "filter/opt_sep_params.cuh"

namespace parvis::filter {
namespace {

struct SepPlan {
  SepParams params{};  // taps, finish, strips
  bool async = false;  // the cp.async kernel (compute capability 8.0+), else the register kernel
  size_t smem = 0;     // the cp.async kernel's dynamic shared memory a block
};

// Calls visit(kernel function) with the kernel of the plan: one per kernel size, channels and
// finish, in each form.
template <typename Visit>
Status with_sep_kernel(const Geometry& g, const SepPlan& s, Visit visit) {
  return sep_with_finish(s.params.finish, [&](auto f) -> Status {
    constexpr SepFinish F = decltype(f)::value;
    if (s.async) {
      if (g.channels == 1)
        return g.size == 3 ? visit(&convolve_sep_async<3, 1, F>) : visit(&convolve_sep_async<5, 1, F>);
      return g.size == 3 ? visit(&convolve_sep_async<3, 3, F>) : visit(&convolve_sep_async<5, 3, F>);
    }
    if (g.channels == 1) return g.size == 3 ? visit(&convolve_sep<3, 1, F>) : visit(&convolve_sep<5, 1, F>);
    return g.size == 3 ? visit(&convolve_sep<3, 3, F>) : visit(&convolve_sep<5, 3, F>);
  });
}

// The strips for `threads` threads a block: `rows` output rows a strip (FilterTuning::sep_rows),
// or 0: one wave of the resident warps.
Status sep_plan_grid(const Geometry& g, int threads, int rows, int dev, SepPlan* s) {
  int sms = 0, per_sm = 0, smem_max = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (s->async) s->smem = sep_async_smem_bytes(threads, s->params.finish, g.size);
  if (s->smem > size_t(smem_max))
    return Status::bad_input("filter sep: " + std::to_string(s->smem) + " bytes of shared memory a block (" +
                             std::to_string(threads) + " threads) exceed the device's " + std::to_string(smem_max));
  PARVIS_TRY(with_sep_kernel(g, *s, [&](auto kernel_fn) -> Status {
    if (s->smem > 0)
      CUDA_CHECK(cudaFuncSetAttribute(kernel_fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(s->smem)));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_fn, threads, s->smem));
    return Status::Ok();
  }));
  if (per_sm < 1) return Status::runtime("filter sep: no block of " + std::to_string(threads) + " threads fits a SM");
  sep_grid(g, std::max(1LL, (long long)per_sm * sms * (threads / 32)), rows, &s->params);
  return Status::Ok();
}

inline std::string sep_describe(const Geometry& g, const SepPlan& s) {
  const SepParams& p = s.params;
  return "sep k" + std::to_string(g.size) + " c" + std::to_string(g.channels) + " rows " + std::to_string(p.strip_rows) +
         " warps " + std::to_string(p.warps) +
         (s.async ? " async " + std::to_string(kSepAsyncSlots) + " slots" : std::string(" registers")) + " " +
         sep_finish_name(p.finish);
}

}  // namespace
}  // namespace parvis::filter
