// cuda-opt's separable filter path, host side: which of its kernels runs (the register kernel of
// opt_sep.cuh with its experiment switches, or the cp.async kernel of opt_sep_async.cuh), with
// which compile-time shape, and on which grid of strips. opt.cu's filter_create calls
// sep_params (opt_sep_params.cuh: taps and finish), then sep_plan_switches and sep_plan_grid.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <string>

#include "common.cuh"
#include "filter/opt_sep.cuh"
#include "filter/opt_sep_params.cuh"
#include "filter/opt_sep_async.cuh"

namespace parvis::filter {
namespace {

struct SepPlan {
  SepParams params{};  // taps, finish, strips
  int pf = 1;          // the register kernel: source rows loaded ahead (PARVIS_FILTER_SEP_PF=1|2|4)
  bool tight = false;  // its TIGHT launch bounds (PARVIS_FILTER_SEP_MINB=1)
  int lane = 16;       // its bytes a lane (PARVIS_FILTER_SEP_LANE=8|16)
  int stages = 0;      // > 0: the cp.async kernel with this many shared-memory slots a warp
  size_t smem = 0;     // the cp.async kernel's dynamic shared memory a block
};

template <SepFinish F, int PF, bool TIGHT = false, int LW = 4, typename Visit>
Status with_sep_kernel_pf(const Geometry& g, Visit visit) {
  if (g.channels == 1)
    return g.size == 3 ? visit(&convolve_sep<3, 1, F, PF, TIGHT, LW>) : visit(&convolve_sep<5, 1, F, PF, TIGHT, LW>);
  return g.size == 3 ? visit(&convolve_sep<3, 3, F, PF, TIGHT, LW>) : visit(&convolve_sep<5, 3, F, PF, TIGHT, LW>);
}
template <SepFinish F, int NS, typename Visit>
Status with_sep_async_kernel_ns(const Geometry& g, Visit visit) {
  if (g.channels == 1)
    return g.size == 3 ? visit(&convolve_sep_async<3, 1, F, NS>) : visit(&convolve_sep_async<5, 1, F, NS>);
  return g.size == 3 ? visit(&convolve_sep_async<3, 3, F, NS>) : visit(&convolve_sep_async<5, 3, F, NS>);
}
template <typename Visit>
Status with_sep_kernel(const Geometry& g, const SepPlan& s, Visit visit) {  // filter_create allows these combinations
  return sep_with_finish(s.params.finish, [&](auto f) -> Status {
    constexpr SepFinish F = decltype(f)::value;
    if (s.stages > 0)
      return s.stages == 3   ? with_sep_async_kernel_ns<F, 3>(g, visit)
             : s.stages == 6 ? with_sep_async_kernel_ns<F, 6>(g, visit)
                             : with_sep_async_kernel_ns<F, 4>(g, visit);
    if (s.lane == 8)
      return s.tight     ? with_sep_kernel_pf<F, 2, true, 2>(g, visit)
             : s.pf == 4 ? with_sep_kernel_pf<F, 4, false, 2>(g, visit)
                         : with_sep_kernel_pf<F, 2, false, 2>(g, visit);
    if (s.tight) return s.pf == 1 ? with_sep_kernel_pf<F, 1, true>(g, visit) : with_sep_kernel_pf<F, 2, true>(g, visit);
    if (s.pf == 1) return with_sep_kernel_pf<F, 1>(g, visit);
    return s.pf == 4 ? with_sep_kernel_pf<F, 4>(g, visit) : with_sep_kernel_pf<F, 2>(g, visit);
  });
}

// An integer switch of sep's from the environment: *v is left as it is when `name` is unset or
// empty; false (and why) on a value that is not an integer in lo..hi.
inline bool sep_env_int(const char* name, int lo, int hi, int* v, std::string* why) {
  const char* e = std::getenv(name);
  if (e == nullptr || *e == 0) return true;
  char* end = nullptr;
  const long n = std::strtol(e, &end, 10);
  if (*end != 0 || n < lo || n > hi)
    return *why = std::string(name) + " must be " + std::to_string(lo) + ".." + std::to_string(hi) + ", not '" + e + "'", false;
  *v = int(n);
  return true;
}

// The experiments' switches from the environment (bench/filter_variants.sh times them beside the
// default; each must give the same bytes): PARVIS_FILTER_SEP_L2PF=D or PARVIS_FILTER_SEP_L1PF=D
// (prefetch D rows past the loads into L2, or L1, D = 1..64; PARVIS_FILTER_SEP_BULKPF=D: the
// same into L2 by one cp.async.bulk.prefetch of the warp's bytes, sm_90, else as L2PF; the first
// of L1PF, BULKPF, L2PF that is > 0 counts), PARVIS_FILTER_SEP_MINB=1 (the TIGHT launch
// bounds), PARVIS_FILTER_SEP_LANE=8 (8 bytes a lane, LW = 2; default 16),
// PARVIS_FILTER_SEP_STCS=1 (evict-first stores: the output's 99.5 MB at 8K passing through L2
// should not evict the prefetched rows). False and why on a bad value.
inline bool sep_experiments(SepParams* p, bool* tight, int* lane_bytes, std::string* why) {
  const auto num = sep_env_int;
  // The defaults, each one line (auto and sep both take them; the environment still overrides).
  // One more block a SM with one row loaded ahead (MINB=1 with opt.cu's sep_pf = 1) was the best
  // of the switches; the prefetches gained less and did not combine with it (docs/decisions/018:
  // the prefetch, STCS and LANE switches lose and are to be removed).
  int l2 = 0, l1 = 0, bulk = 0;  // rows prefetched ahead: none
  int minb = 1;                  // one block more a SM (5x5: 80 registers, a few spilled)
  int stcs = 0;                  // plain stores
  *lane_bytes = 16;
  if (!num("PARVIS_FILTER_SEP_L2PF", 0, 64, &l2, why) || !num("PARVIS_FILTER_SEP_L1PF", 0, 64, &l1, why) ||
      !num("PARVIS_FILTER_SEP_BULKPF", 0, 64, &bulk, why) || !num("PARVIS_FILTER_SEP_MINB", 0, 1, &minb, why) ||
      !num("PARVIS_FILTER_SEP_STCS", 0, 1, &stcs, why) || !num("PARVIS_FILTER_SEP_LANE", 8, 16, lane_bytes, why))
    return false;
  p->stream_stores = stcs == 1;
  if (*lane_bytes != 8 && *lane_bytes != 16) return *why = "PARVIS_FILTER_SEP_LANE must be 8 or 16", false;
  // L1PF before BULKPF before L2PF (so that a default D for one still lets the others be timed).
  p->ahead = l1 > 0 ? l1 : bulk > 0 ? bulk : l2;
  p->ahead_level = l1 > 0 ? 1 : bulk > 0 ? 3 : 2;
  *tight = minb == 1;
  return true;
}

// The kernel and its switches from the environment, for a device of compute capability `major`
// (a usage error on a bad value or a combination that is not compiled).
inline Status sep_plan_switches(int major, SepPlan* s) {
  std::string why;
  if (!sep_env_int("PARVIS_FILTER_SEP_PF", 1, 4, &s->pf, &why)) return Status::usage(why);
  if (s->pf == 3) return Status::usage("PARVIS_FILTER_SEP_PF must be 1, 2 or 4");
  if (!sep_experiments(&s->params, &s->tight, &s->lane, &why)) return Status::usage(why);
  if (s->pf != 2 && (s->tight ? s->pf == 4 || s->lane == 8 : s->pf == 1 && s->lane == 8))
    return Status::usage("sep compiles PF 1|2|4, MINB=1 with PF 1|2, LANE=8 with PF 2|4, both with PF 2");
  // The cp.async kernel (opt_sep_async.cuh) from 8.0 on, unless a switch of the register
  // kernel's experiments is set (then that kernel, as before).
  bool reg_switch = false;
  for (const char* v : {"PF", "MINB", "LANE", "L2PF", "L1PF", "BULKPF"})
    if (const char* e = std::getenv(("PARVIS_FILTER_SEP_" + std::string(v)).c_str()); e && *e) reg_switch = true;
  int async = major >= 8 && !reg_switch ? 1 : 0, stages = 4;
  if (!sep_env_int("PARVIS_FILTER_SEP_ASYNC", 0, 1, &async, &why) ||
      !sep_env_int("PARVIS_FILTER_SEP_STAGES", 3, 6, &stages, &why))
    return Status::usage(why);
  if (stages == 5) return Status::usage("PARVIS_FILTER_SEP_STAGES must be 3, 4 or 6 (the compiled slot counts)");
  if (async == 1 && major < 8) return Status::usage("PARVIS_FILTER_SEP_ASYNC=1 needs compute capability 8.0 (cp.async)");
  if (async == 1 && (s->lane != 16 || s->params.ahead > 0))
    return Status::usage("PARVIS_FILTER_SEP_ASYNC=1 takes 16 bytes a lane and no prefetch (set it to 0 for those)");
  if (async == 1) s->stages = stages;
  return Status::Ok();
}

// The strips for `threads` threads a block: one wave of the resident warps, except the cp.async
// kernel at 3x3, which takes strips of 8 rows (several waves: the warps resident at one time work
// on neighbouring rows; at 5x5 the (K - 1) / 8 halo rows cost more than that gains; decision
// 017); PARVIS_FILTER_SEP_ROWS=N sets the rows a strip, for experiments.
Status sep_plan_grid(const Geometry& g, int threads, int dev, SepPlan* s) {
  int sms = 0, per_sm = 0, rows = 0, smem_max = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (s->stages > 0) s->smem = sep_async_smem_bytes(threads, s->stages, s->params.finish, g.size);
  if (s->smem > size_t(smem_max))
    return Status::bad_input("filter sep: " + std::to_string(s->smem) + " bytes of shared memory a block (" +
                             std::to_string(threads) + " threads, " + std::to_string(s->stages) +
                             " slots a warp) exceed the device's " + std::to_string(smem_max));
  PARVIS_TRY(with_sep_kernel(g, *s, [&](auto kernel_fn) -> Status {
    if (s->smem > 0)
      CUDA_CHECK(cudaFuncSetAttribute(kernel_fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(s->smem)));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_fn, threads, s->smem));
    return Status::Ok();
  }));
  if (per_sm < 1) return Status::runtime("filter sep: no block of " + std::to_string(threads) + " threads fits a SM");
  std::string why;
  if (!sep_env_int("PARVIS_FILTER_SEP_ROWS", 1, 65536, &rows, &why)) return Status::usage(why);
  if (rows == 0 && s->stages > 0 && g.size == 3) rows = 8;
  sep_grid(g, std::max(1LL, (long long)per_sm * sms * (threads / 32)), rows, &s->params, s->lane);
  return Status::Ok();
}

inline std::string sep_describe(const Geometry& g, const SepPlan& s) {
  const SepParams& p = s.params;
  return "sep k" + std::to_string(g.size) + " c" + std::to_string(g.channels) + " rows " + std::to_string(p.strip_rows) +
         " warps " + std::to_string(p.warps) +
         (s.stages > 0 ? " async " + std::to_string(s.stages) + " slots"
                       : " pf " + std::to_string(s.pf) + (s.tight ? " minb+1" : "")) +
         (s.lane == 8 ? " lane 8" : "") +
         (p.ahead ? std::string(p.ahead_level == 1 ? " l1pf " : p.ahead_level == 3 ? " bulkpf " : " l2pf ") + std::to_string(p.ahead)
                  : "") +
         (p.stream_stores ? " stcs" : "") + " " + sep_finish_name(p.finish);
}

}  // namespace
}  // namespace parvis::filter
