// An exact number-theoretic transform (NTT) for the cross-correlation of 8-bit images: the
// DFT taken over the integers modulo the prime p = 15 * 2^27 + 1 instead of over the complex
// numbers. A cyclic convolution of integer images whose true values stay below p comes out
// exactly (no rounding, no bound, no re-scoring), in 32-bit words instead of 2 x 64-bit
// doubles. Used by cuda-opt's FFT method when every correlation value 255 * sum(T) < p.
//
// Lengths: n = 2^a * {1, 3, 5, 15} (they divide p - 1, so n-th roots of unity exist).
// Forward: decimation in frequency (Gentleman-Sande), natural order in, digit-reversed order
// out, no reordering pass. Inverse: the same stages undone in reverse order (Cooley-Tukey
// decimation in time) with inverse roots, digit-reversed in, natural order out, times n. A
// pointwise product between them never needs natural order, so neither transform permutes.
//
// Stage k of the forward transform works on blocks of length L = n / (r_0 ... r_{k-1}) with
// radix r = r_k and M = L / r; for each block b and j < M it takes x_t = d[bL + j + tM],
//   y_s = sum_t x_t w_r^{ts}   (a radix-r DFT),   d[bL + j + sM] = y_s * w_L^{js}.
// The odd radices come first, so the radix-4/2 stages see power-of-two M (shifts, no
// division). Twiddles w_L^{js} = w_n^{(n/L) js} come from one table of w_n^k with Shoup
// companions floor(w 2^32 / p): a product by a known constant is then 3 multiplies and a min.
//
// The stage code is __host__ __device__ so that the host self-test runs the very same
// arithmetic: correlate_host below runs the pipeline's steps on the host, and the match
// selftest checks it against direct sums (so CI, without a GPU, checks this file's maths).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#ifdef __CUDACC__
#define PARVIS_HD __host__ __device__ __forceinline__
#else
#define PARVIS_HD inline
#endif
#ifdef __CUDA_ARCH__
#define PARVIS_UNROLL _Pragma("unroll")
#else
#define PARVIS_UNROLL
#endif

namespace parvis::match::ntt {

constexpr uint32_t kMod = 2013265921u;  // 15 * 2^27 + 1, prime
constexpr uint32_t kGenerator = 31;     // a primitive root modulo kMod
constexpr uint32_t kMontNegInv = 2013265919u;  // -kMod^-1 mod 2^32 (checked by the selftest)
constexpr int kMaxStages = 20;

// ---- arithmetic modulo kMod: operands and results in [0, kMod) -----------------------------
PARVIS_HD uint32_t mod_min(uint32_t r) { return r >= kMod ? r - kMod : r; }
PARVIS_HD uint32_t add(uint32_t a, uint32_t b) { return mod_min(a + b); }  // < 2^32: p < 2^31
PARVIS_HD uint32_t sub(uint32_t a, uint32_t b) { return mod_min(a + kMod - b); }

PARVIS_HD uint32_t mulhi(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  return __umulhi(a, b);
#else
  return uint32_t((uint64_t(a) * b) >> 32);
#endif
}

// A constant w with its Shoup companion floor(w 2^32 / p).
struct alignas(8) Const {
  uint32_t w, wq;
};

// a * c.w mod p for a < p (Shoup): q = floor(a c.wq / 2^32) is floor(a w / p) or one less, so
// a w - q p, computed mod 2^32, lies in [0, 2p).
PARVIS_HD uint32_t mul(uint32_t a, Const c) {
  const uint32_t q = mulhi(a, c.wq);
  return mod_min(a * c.w - q * kMod);
}

// Montgomery product a b / 2^32 mod p, for two variable operands (b usually held in
// Montgomery form b' = b 2^32 mod p, so that mont_mul(a, b') = a b).
PARVIS_HD uint32_t mont_mul(uint32_t a, uint32_t b) {
  const uint64_t t = uint64_t(a) * b;
  const uint32_t m = uint32_t(t) * kMontNegInv;
  return mod_min(uint32_t((t + uint64_t(m) * kMod) >> 32));
}

// ---- host helpers ----------------------------------------------------------------------------
inline uint32_t pow_mod(uint32_t b, uint64_t e) {
  uint64_t r = 1, x = b;
  for (; e; e >>= 1, x = x * x % kMod)
    if (e & 1) r = r * x % kMod;
  return uint32_t(r);
}
inline uint32_t inv_mod(uint32_t a) { return pow_mod(a, kMod - 2); }
inline Const make_const(uint32_t w) { return Const{w, uint32_t((uint64_t(w) << 32) / kMod)}; }

// Whether n = 2^a * {1, 3, 5, 15}, a <= 27: the lengths this transform supports.
inline bool supported_length(int64_t n) {
  if (n < 1) return false;
  if (n % 3 == 0) n /= 3;
  if (n % 5 == 0) n /= 5;
  return (n & (n - 1)) == 0 && n <= (int64_t(1) << 27);
}
// The smallest supported length >= n.
inline int good_length(int n) {
  int64_t m = n < 1 ? 1 : n;
  while (!supported_length(m)) ++m;
  return int(m);
}

// ---- the plan of one length --------------------------------------------------------------------
// Passed to kernels by value; `tw` points to n twiddles w_n^k (device memory on the GPU).
struct Plan {
  int n = 1;
  int stages = 0;
  int radix[kMaxStages] = {};
  int len[kMaxStages] = {};    // L of the stage
  int shift[kMaxStages] = {};  // log2(M) when M = L / r is a power of two, else -1
  int tw_step[kMaxStages] = {};  // n / L
  const Const* tw = nullptr;
};

// The stages of length n (odd radices first, then radix 4, a final radix 2 if needed) and
// the table of w_n^k, k < n, into *table. The plan's `tw` is left for the caller to point at
// wherever the table is uploaded.
inline Plan make_plan(int n, Const* table) {
  Plan p;
  p.n = n;
  int m = n;
  auto push = [&](int r) {
    p.radix[p.stages] = r;
    p.len[p.stages] = m;
    const int M = m / r;
    p.shift[p.stages] = (M & (M - 1)) == 0 ? __builtin_ctz(unsigned(M)) : -1;
    p.tw_step[p.stages] = n / m;
    ++p.stages;
    m = M;
  };
  if (m % 3 == 0) push(3);
  if (m % 5 == 0) push(5);
  while (m % 4 == 0) push(4);
  if (m == 2) push(2);
  const uint32_t wn = pow_mod(kGenerator, (kMod - 1) / uint32_t(n));
  uint64_t w = 1;
  for (int k = 0; k < n; ++k, w = w * wn % kMod) table[k] = make_const(uint32_t(w));
  return p;
}

PARVIS_HD Const load_const(const Const* c) {
#ifdef __CUDA_ARCH__
  const uint2 v = __ldg(reinterpret_cast<const uint2*>(c));
  return Const{v.x, v.y};
#else
  return *c;
#endif
}

// w_n^e (or w_n^-e) from the table, 0 <= e < n.
PARVIS_HD Const twiddle(const Plan& p, uint32_t e, bool inverse) {
  return load_const(p.tw + (inverse && e ? uint32_t(p.n) - e : e));
}

// ---- the radix-R DFT of x in registers (roots[t] = w_R^t of the direction) ------------------------
template <int R>
PARVIS_HD void small_dft(uint32_t (&x)[R], const Const (&roots)[R]) {
  if constexpr (R == 2) {
    const uint32_t a = x[0], c = x[1];
    x[0] = add(a, c);
    x[1] = sub(a, c);
  } else if constexpr (R == 4) {  // w_4^2 = -1: 1 product instead of 9
    const uint32_t a = add(x[0], x[2]), b = sub(x[0], x[2]), c = add(x[1], x[3]),
                   d = mul(sub(x[1], x[3]), roots[1]);
    x[0] = add(a, c);
    x[1] = add(b, d);
    x[2] = sub(a, c);
    x[3] = sub(b, d);
  } else {  // 3 or 5, by the definition (one such stage per transform)
    uint32_t y[R];
PARVIS_UNROLL
    for (int s = 0; s < R; ++s) {
      uint32_t acc = x[0];
PARVIS_UNROLL
      for (int t = 1; t < R; ++t) acc = add(acc, mul(x[t], roots[(s * t) % R]));
      y[s] = acc;
    }
PARVIS_UNROLL
    for (int s = 0; s < R; ++s) x[s] = y[s];
  }
}

// ---- one stage: groups lane, lane + lanes, ... of stage k on d[i * stride] ---------------------------
// Forward: radix-R DFT, then twiddles. Inverse: inverse twiddles, then the DFT with inverse
// roots. Everything that depends only on the stage is computed once, outside the group loop.
template <int R, bool kInverse>
PARVIS_HD void ntt_stage(uint32_t* d, int stride, const Plan& p, int k, uint32_t lane,
                         uint32_t lanes) {
  const uint32_t n = uint32_t(p.n), M = uint32_t(p.len[k]) / R, groups = n / R;
  const int shift = p.shift[k];
  const uint32_t tw_step = uint32_t(p.tw_step[k]);
  const size_t step = size_t(M) * stride;
  Const roots[R];
PARVIS_UNROLL
  for (int t = 0; t < R; ++t) roots[t] = twiddle(p, n / R * t, kInverse);
  for (uint32_t g = lane; g < groups; g += lanes) {
    uint32_t b, j;
    if (shift >= 0) {
      b = g >> shift;
      j = g & (M - 1);
    } else {
      b = g / M;
      j = g - b * M;
    }
    uint32_t* base = d + size_t(b * R * M + j) * stride;
    // Exponent of w_L^j in the table: (n / L) j < n / R, so e1 s < n needs no reduction.
    const uint32_t e1 = tw_step * j;
    uint32_t x[R];
PARVIS_UNROLL
    for (int t = 0; t < R; ++t) x[t] = base[t * step];
    if (kInverse) {
PARVIS_UNROLL
      for (int s = 1; s < R; ++s) x[s] = mul(x[s], twiddle(p, e1 * s, true));
    }
    small_dft<R>(x, roots);
    if (!kInverse) {
PARVIS_UNROLL
      for (int s = 1; s < R; ++s) x[s] = mul(x[s], twiddle(p, e1 * s, false));
    }
PARVIS_UNROLL
    for (int t = 0; t < R; ++t) base[t * step] = x[t];
  }
}

template <bool kInverse>
PARVIS_HD void ntt_stage_any(uint32_t* d, int stride, const Plan& p, int k, uint32_t lane,
                             uint32_t lanes) {
  switch (p.radix[k]) {
    case 4: ntt_stage<4, kInverse>(d, stride, p, k, lane, lanes); break;
    case 2: ntt_stage<2, kInverse>(d, stride, p, k, lane, lanes); break;
    case 3: ntt_stage<3, kInverse>(d, stride, p, k, lane, lanes); break;
    default: ntt_stage<5, kInverse>(d, stride, p, k, lane, lanes); break;
  }
}

// The whole transform on the host (the selftest's reference of the device code path).
template <bool kInverse>
inline void ntt_host(uint32_t* d, int stride, const Plan& p) {
  for (int i = 0; i < p.stages; ++i)
    ntt_stage_any<kInverse>(d, stride, p, kInverse ? p.stages - 1 - i : i, 0, 1);
}

// The constant that turns a forward spectrum into the pointwise factor of a cyclic
// convolution of size P x Q: Montgomery form (x 2^32) with the inverse transform's 1 / (P Q)
// folded in, so that mont_mul(X, Y * scale) = X Y / (P Q) mod p.
inline Const spectrum_scale(int P, int Q) {
  const uint32_t r_mod_p = uint32_t((uint64_t(1) << 32) % kMod);
  const uint32_t inv_n = inv_mod(uint32_t(uint64_t(P) * uint64_t(Q) % kMod));
  return make_const(uint32_t(uint64_t(r_mod_p) * inv_n % kMod));
}

// Where template pixel (i, j) goes in the P x Q buffer whose cyclic convolution with the source
// is the correlation with the template: T'(y, x) = T(-y mod Q, -x mod P).
inline size_t flipped_index(int i, int j, int P, int Q) {
  return size_t((Q - j) % Q) * size_t(P) + size_t((P - i) % P);
}

// The host reference of cuda-opt's NTT pipeline (the selftest runs it against direct sums):
// C(x, y) = sum_{j,i} I(x + i, y + j) T(i, j) mod p at every x < W, y < H (cyclic beyond the
// valid positions), the same steps in the same order as the kernels: rows forward, columns
// forward, times the template's scaled spectrum, columns inverse, rows inverse.
inline std::vector<uint32_t> correlate_host(const uint8_t* src, int W, int H, const uint8_t* tpl,
                                            int w, int h) {
  const int P = good_length(W), Q = good_length(H);
  std::vector<Const> row_tw(static_cast<size_t>(P)), col_tw(static_cast<size_t>(Q));
  Plan rows = make_plan(P, row_tw.data()), cols = make_plan(Q, col_tw.data());
  rows.tw = row_tw.data();
  cols.tw = col_tw.data();
  const size_t n = size_t(P) * size_t(Q);
  std::vector<uint32_t> a(n, 0), t(n, 0);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) a[size_t(y) * P + x] = src[size_t(y) * W + x];
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < w; ++i) t[flipped_index(i, j, P, Q)] = tpl[size_t(j) * w + i];
  for (std::vector<uint32_t>* v : {&a, &t}) {
    for (int y = 0; y < Q; ++y) ntt_host<false>(v->data() + size_t(y) * P, 1, rows);
    for (int x = 0; x < P; ++x) ntt_host<false>(v->data() + x, P, cols);
  }
  const Const scale = spectrum_scale(P, Q);
  for (size_t k = 0; k < n; ++k) a[k] = mont_mul(a[k], mul(t[k], scale));
  for (int x = 0; x < P; ++x) ntt_host<true>(a.data() + x, P, cols);
  for (int y = 0; y < Q; ++y) ntt_host<true>(a.data() + size_t(y) * P, 1, rows);
  std::vector<uint32_t> c(size_t(W) * H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) c[size_t(y) * W + x] = a[size_t(y) * P + x];
  return c;
}

#ifdef __CUDACC__
// The whole transform of d[i * stride], i < n, in shared memory, by `lanes` threads of the
// block (this one is `lane`); every thread of the block must call it (it synchronises).
template <bool kInverse>
__device__ void ntt_shared(uint32_t* d, int stride, const Plan& p, int lane, int lanes) {
  __syncthreads();
  for (int i = 0; i < p.stages; ++i) {
    ntt_stage_any<kInverse>(d, stride, p, kInverse ? p.stages - 1 - i : i, lane, lanes);
    __syncthreads();
  }
}
#endif

}  // namespace parvis::match::ntt

#undef PARVIS_HD
#undef PARVIS_UNROLL
