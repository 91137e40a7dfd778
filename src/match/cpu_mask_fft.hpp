// --mask with the FFT method on the CPU versions (seq, simd, omp; DESIGN.md "Masks"):
//
//   masked SSD = Σ m·I² − 2·corr(I, T & b) + Σ m·T²
//   masked NCC: ΣI·T = corr(I, T & b), ΣI = Σ m·I, ΣI² = Σ m·I²
//
// corr(I, T & b) comes from the FFT method of cpu_fft.hpp run on the masked template T & b:
// its exact SSD' = ΣI²(whole window) − 2·corr + Σ(T & b)² gives corr exactly (when the FFT's
// rounding bound held: fft::run's `map_error` is 0; otherwise the caller runs the direct method). The masked
// window sums Σ m·I and Σ m·I² — correlations of I and I² with the mask — are summed exactly
// over the mask's row runs (maximal horizontal segments of counted pixels) from prefix sums of
// each source row: R operations per position for a mask of R runs (a ring: about 2 per row),
// instead of w·h. So the whole score is exact integers, the same bits as seq's definition.
#pragma once
#include <vector>

#include "match/cpu_exec.hpp"
#include "match/cpu_fft.hpp"
#include "match/mask.hpp"
#include "match/match_common.hpp"

namespace parvis::match::mask {

// The FFT method with a mask. `plan` was prepared from the masked template (mask::apply);
// `ts` = mask::template_sums; `rescore` gives the exact unmasked SSD against the masked template
// (what fft::run ranks). Fills res (best, map when asked, explain) and sets *done; *done false:
// the FFT map was not exact everywhere, nothing was filled, run the direct method instead.
Status fft_run(fft::Plan* plan, const Image& gray_source, const std::vector<Run>& runs,
               const TemplateSums& ts, int w, int h, const Params& params, const CpuExec& exec,
               fft::RescoreFn rescore, Result* res, bool* done);

// Estimated milliseconds of fft_run beyond fft::run's: R runs per position.
double runs_ms(double positions, size_t runs, int threads);

}  // namespace parvis::match::mask
