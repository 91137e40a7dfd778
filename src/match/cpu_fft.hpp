// SSD and the normed metrics through FFT cross-correlation on the CPU (seed 000's "new
// sequential algorithm"), shared by the seq, simd and omp versions (src/<op>/cpu_*.cpp is linked
// into CPU versions only):
//
//   SSD(x,y) = ΣI²(window) − 2·ΣI·T + ΣT²;   NCC, ccorr-normed: ncc::score(ΣI, ΣI², ΣI·T, ...)
//
// ΣI² (and ΣI) per window from sliding sums (exact, 64-bit), ΣT² once, and the
// cross-correlation ΣI·T for every position at once through FFTW: r2c of the zero-padded
// source, times the conjugate of the template's spectrum, c2r, scaled. The sizes are padded
// only to the source's size (not source + template: the positions we keep never wrap
// around) and to 2^a 3^b 5^c 7^d.
//
// Exactness: the FFT is double precision and its rounding error on ΣI·T has a bound
// computed for every run (cpu_fft.cpp: fft_rounding_bound; measured errors: docs/decisions/002).
//   bound < 0.5  — ΣI·T is an integer, so rounding it gives the exact value: the whole map
//                  is exact, and the best K are checked once more by direct re-scoring.
//   bound >= 0.5 — (only for large images) each rank is known within two ends (SSD within
//                  2·(bound+0.5); the normed score between those of ΣI·T ∓ (bound+0.5));
//                  every position the answer could hold — the K best, or every match of
//                  --all / --min-distance — is re-scored exactly by the version's direct
//                  kernel (cpu_fft_select.hpp, select.hpp: settle), so the reported positions
//                  and scores are exact either way.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "match/cpu_exec.hpp"
#include "match/fft_tuning.hpp"
#include "match/match.hpp"

namespace parvis::match::fft {

// Whether this build has FFTW (PARVIS_HAVE_FFTW).
bool available();
// "--method fft needs FFTW: install libfftw3-dev and rebuild" (exit 2).
Status unavailable();

struct Plan;
struct PlanDeleter {
  void operator()(Plan* p) const;
};
using PlanPtr = std::unique_ptr<Plan, PlanDeleter>;

// Prepares the FFT matcher for a grey template. FFTW plans and the template's row spectra are
// made on the first run for a given source size and kept for the next runs of that size; a
// second run also keeps the template's 2-D spectrum (a video pays it once, a one-shot call
// never builds it). FFTW's chosen plans are cached on disk between processes (cpu_fftw.cpp:
// "wisdom cache"). `threads` is the workers' count, reported in the explanation (seq and simd:
// 1). A plan is used by one thread at a time.
// `source_cache` (match.hpp; null: none): a batch's source shared by several templates. The first
// run keeps the source's 2-D spectrum and norms there, and every later run of a plan given the
// same cache on the same source image (of the same padded size) takes them instead of
// transforming the source again: one forward transform per template instead of two.
// `tuning` (fft_tuning.hpp; null: PARVIS_TUNING's) is copied into the plan.
Status prepare(const Image& gray_template, int threads, PlanPtr* out,
               SourceCache* source_cache = nullptr, const Tuning* tuning = nullptr);

// Exact scores for candidate positions, by the version's own direct kernel: fills the
// `score` of every position in the vector.
// A FunctionRef: the hook is called during run() only, and handing it over allocates nothing.
using RescoreFn = FunctionRef<void(std::vector<Position>* candidates)>;

// Runs the FFT method on a grey source (already checked against the template's size) for
// params.metric (SSD, or a normed metric: ΣI·T from the transforms, the window sums slid along,
// ncc.hpp's expression): fills res->best (params.top_k, exact), res->map_width/height, res->map
// when params.want_map (exact wherever params.selection or the K best could lie:
// cpu_fft_select.hpp), and appends to res->explain what it did about rounding. The passes over
// pixels and the transforms run through `exec`: single-threaded FFTW plans on chunks of rows and
// groups of columns split over its workers (no second thread pool). `rescore` gives exact SSDs.
// `map_error` (when not null): *map_error the SSD's error (0: the bound held, and the map is
// exact); past the bound nothing is re-scored and no map written: the masked FFT
// (cpu_mask_fft.hpp), which takes only an exact map.
Status run(Plan* plan, const Image& gray_source, const Params& params, const CpuExec& exec,
           RescoreFn rescore, Result* res, uint64_t* map_error = nullptr);

// ---- the cost model of `auto` -------------------------------------------------------------
// The padded FFT size used for a source of this size (n0 rows × n1 columns).
void padded_size(int source_width, int source_height, int* n0, int* n1);
// Estimated milliseconds of run() (plans already made) on this machine with `threads`.
double estimate_ms(int source_width, int source_height, int threads);

}  // namespace parvis::match::fft
