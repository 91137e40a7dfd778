// Host-side helpers shared by the two CUDA versions of SSD-by-FFT (cuda/match/naive.cu and
// cuda/match/opt_fft.cu): cuFFT error checks, the choice of FFT sizes, and the rounding bound
// that decides which positions are re-scored exactly.
//
// Why a bound at all: SSD(x,y) = S2(x,y) - 2 C(x,y) + T2, where S2 (window sum of I^2, from an
// integer integral image) and T2 (sum of T^2) are exact integers and only the cross-correlation
// C comes from floating-point FFTs. If |C_fft - C| <= E_C everywhere, the FFT score is within
// E = 2 E_C (+ the final additions' rounding) of the exact one, so the exact best position is
// among the positions whose FFT score lies within 2 E of the smallest FFT score. Those few are
// re-scored in integers, which makes the reported best match and score exact.
#pragma once
#include <cufft.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "common.cuh"

namespace parvis::cuda {

inline const char* cufft_result_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED (out of GPU memory)";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "cuFFT error";
  }
}

inline Status cufft_status(cufftResult r, const char* what, const char* file, int line) {
  if (r == CUFFT_SUCCESS) return Status::Ok();
  return Status::runtime(std::string("cuFFT error at ") + file + ":" + std::to_string(line) +
                         ": " + what + ": " + cufft_result_name(r) + " (" +
                         std::to_string(int(r)) + ")");
}

}  // namespace parvis::cuda

// Checks a cuFFT call; on failure returns a runtime Status naming the call site.
#define CUFFT_CHECK(call)                                                                 \
  do {                                                                                    \
    cufftResult cufft_check_r_ = (call);                                                  \
    if (cufft_check_r_ != CUFFT_SUCCESS)                                                  \
      return ::parvis::cuda::cufft_status(cufft_check_r_, #call, __FILE__, __LINE__);     \
  } while (0)

namespace parvis::cuda::fft {

// A cuFFT plan owned by its scope.
class Plan {
 public:
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() { reset(); }
  void reset() {
    if (made_) cufftDestroy(handle_);
    made_ = false;
  }
  // A 2D plan over `rows` x `cols` (row-major, cols contiguous) of the given type.
  Status make_2d(int rows, int cols, cufftType type) {
    reset();
    CUFFT_CHECK(cufftPlan2d(&handle_, rows, cols, type));
    made_ = true;
    return Status::Ok();
  }
  cufftHandle get() const { return handle_; }
  bool made() const { return made_; }

 private:
  cufftHandle handle_ = 0;
  bool made_ = false;
};

// Circular cross-correlation of a P x Q padded source with the zero-padded template gives the
// linear one at every valid position as soon as P >= W and Q >= H: the window of a valid
// position never wraps around (it ends at x + w - 1 <= W - 1 < P). So the FFT only needs to
// cover the source itself, not source + template - 1 as the seed padded.
//
// Among the sizes >= n whose only prime factors are 2, 3, 5, 7 (cuFFT's fast radices; other
// primes fall back to Bluestein, several times slower) take the cheapest by a small cost model:
// the work is ~ n log n and radices 3, 5, 7 cost a little more per point than radix 2.
inline int good_size(int n) {
  if (n <= 1) return 1;
  double best_cost = 1e300;
  int best = 0;
  for (int64_t p2 = 1; p2 < int64_t(2) * n + 2; p2 *= 2)
    for (int64_t p3 = p2; p3 < int64_t(2) * n + 2; p3 *= 3)
      for (int64_t p5 = p3; p5 < int64_t(2) * n + 2; p5 *= 5)
        for (int64_t p7 = p5; p7 < int64_t(2) * n + 2; p7 *= 7) {
          if (p7 < n) continue;
          int64_t m = p7;
          int n3 = 0, n5 = 0, n7 = 0;
          while (m % 3 == 0) m /= 3, ++n3;
          while (m % 5 == 0) m /= 5, ++n5;
          while (m % 7 == 0) m /= 7, ++n7;
          const double odd = (p7 % 2) ? 0.25 : 0.0;  // R2C likes even lengths
          const double cost = double(p7) * (1.0 + 0.02 * n3 + 0.03 * n5 + 0.05 * n7 + odd);
          if (cost < best_cost) best_cost = cost, best = int(p7);
        }
  return best;
}

// A rigorous-in-form bound on max |C_fft - C| for the double-precision pipeline
//   C = IFFT( FFT(I) * conj(FFT(T)) ) / (P Q)
// following Higham, "Accuracy and Stability of Numerical Algorithms", Thm 24.2: a computed FFT
// of length n satisfies ||fl(F x) - F x||_2 <= L eta ||F x||_2, L = log2 n stages, eta the
// per-stage relative error (~ u + 4 sqrt2 u with accurate twiddles). Propagating the errors of
// the two forward transforms, the pointwise product and the inverse transform, with
// ||F a||_inf <= ||a||_1 and ||x||_inf <= ||x||_2:
//   E_C <= L eta (||I||_2 ||T||_1 + ||I||_1 ||T||_2 + min(..)) + 3 u ||I||_2 ||T||_1.
// We take eta = 16 u (u = 2^-53; twice the textbook constant, to cover radix-3/5/7 butterflies
// and cuFFT's twiddle tables), L = ceil(log2 P) + ceil(log2 Q) + 2 (the real<->complex
// pre/post-processing), and the source norms at their worst (every pixel 255), so the bound
// depends only on the sizes and on the template. The errors measured on real and noise images
// are 3-5 orders of magnitude below it (docs/decisions/002); it is deliberately loose,
// which costs nothing: it only widens the set of re-scored positions from "ties" to "within a
// few units of the minimum".
inline double correlation_error_bound(int P, int Q, int src_w, int src_h, double tpl_l1,
                                      double tpl_l2) {
  const double u = std::ldexp(1.0, -53);
  const double eta = 16 * u;
  const double L = std::ceil(std::log2(double(P))) + std::ceil(std::log2(double(Q))) + 2;
  const double n_src = double(src_w) * double(src_h);
  const double src_l1 = 255.0 * n_src, src_l2 = 255.0 * std::sqrt(n_src);
  const double a = src_l2 * tpl_l1, b = src_l1 * tpl_l2;
  return L * eta * (a + b + (a < b ? a : b)) + 3 * u * a;
}

// The bound on |score_fft - score_exact| for SSD: twice the correlation bound, plus the
// rounding of S2 + T2 - 2 C in double (scores < 2^47, so below one unit) plus a margin of 1.
inline double ssd_error_bound(int P, int Q, int src_w, int src_h, double tpl_l1, double tpl_l2) {
  return 2 * correlation_error_bound(P, Q, src_w, src_h, tpl_l1, tpl_l2) + 2.0;
}

}  // namespace parvis::cuda::fft
