// SSD through FFT cross-correlation on the CPU: see cpu_fft.hpp for the method and the
// exactness argument. Linked into seq, simd and omp; FFTW only where the build found it.
#include "match/cpu_fft.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <ctime>

#include "match/match_common.hpp"

#include "match/cpu_fft_select.hpp"
#include "match/fft_wobble.hpp"
#include "match/cpu_fftw.hpp"

namespace parvis::match::fft {

Status unavailable() {
  return Status::bad_input("--method fft needs FFTW: install libfftw3-dev and rebuild");
}

// ---------------------------------------------------------------------------- sizes
// The smallest n' >= n of the form 2^a 3^b 5^c 7^d with d <= 1. FFTW handles any size, but
// is fastest on these; repeated factors of 7 (1029 = 3·7³) were much slower than the next
// 2-3-5 size (docs/decisions/022), so at most one 7 is allowed.
static int good_size(int n) {
  for (int m = std::max(n, 1);; ++m) {
    int r = m;
    for (int p : {2, 3, 5}) while (r % p == 0) r /= p;
    if (r == 1 || r == 7) return m;
  }
}

void padded_size(int source_width, int source_height, int* n0, int* n1) {
  // Circular correlation of size n >= W gives the linear one at every kept position
  // x <= W - w: x + i <= W - 1 never wraps. So the source size is enough.
  *n0 = good_size(source_height);
  *n1 = good_size(source_width);
}

// Cost model, fitted to the bench on the development machine (FFTW_ESTIMATE plans, double;
// docs/decisions/022): one r2c + one c2r of n = n0·n1 points in ~0.42 ns · n·log2(n) on one
// thread, ~0.26 with two; the passes over pixels (fill, spectrum product, integral image,
// combine, top-K) ~3.4 ns per source pixel on one thread, split over the workers in omp.
double estimate_ms(int source_width, int source_height, int threads) {
  int n0, n1;
  padded_size(source_width, source_height, &n0, &n1);
  const double n = double(n0) * double(n1);
  const double ns_per_nlogn = threads > 1 ? 0.26 : 0.42;
  const double ns = ns_per_nlogn * n * std::log2(n) +
                    3.4 * double(source_width) * double(source_height) / std::max(1, threads);
  return ns * 1e-6;
}

#if PARVIS_HAVE_FFTW

// Every plan is single-threaded: the version's workers (OpenMP threads in omp) split the rows
// and the column groups among themselves, each running plans on its own part (new-array
// execute), so one pool of threads, not two, takes turns on the cores, and each chunk of rows
// is transformed while the pass that filled it (or reads it next) still has it in cache.
// FFTW's lock, wisdom cache and buffers: cpu_fftw.hpp.

// A batch's source, transformed once for all its templates (match.hpp SourceCache): the
// column pass's source spectra (every group, in the scratch's layout, forward-transformed) and
// the norms of the rounding bound, with what identifies the source they were made from.
struct SourceSpectrum : SourceCache::State {
  const uint8_t* pixels = nullptr;
  int width = 0, height = 0, n0 = 0, n1 = 0;
  size_t stride = 0;
  uint64_t l1 = 0, l2sq = 0;
  bool ready = false;
  BigBuffer<fftw_complex> cols;
  bool same(const Image& src, int pn0, int pn1) const {
    return ready && pixels == src.data() && width == src.width && height == src.height &&
           stride == src.stride && n0 == pn0 && n1 == pn1;
  }
};

struct Plan {
  Image tpl;
  int threads = 1;
  Tuning tuning;            // filled once in prepare()
  std::string tuning_note;  // "; " + tuning.describe(), ending every run's explanation
  SourceCache* source_cache = nullptr;  // a batch's shared source (null: none)
  uint64_t tpl_sum = 0;     // ΣT   (the bound's ‖t‖₁)
  uint64_t tpl_sq_sum = 0;  // ΣT²
  double tpl_l2 = 0;        // √ΣT² (‖t‖₂)

  // For the current source size.
  int src_w = 0, src_h = 0, n0 = 0, n1 = 0;
  // The 2-D transforms as 1-D passes, so that rows known to be zero are neither stored nor
  // transformed: r2c of the source's H rows in place in `spec` (rows of real_stride doubles
  // hold the source, then its n1/2+1 complex row spectrum), and of the template's h rows into
  // `tpl_spec`, kRowChunk rows at a time (rows_fwd, new-array execute), each chunk right after
  // it is filled. Then the columns, kColumnGroup at a time in a worker's cache-sized scratch
  // (column_pass): gathered (rows past H, h: zero), forward (cols_fwd), the product with the
  // template's conjugated, scaled column spectrum, inverse (cols_inv), and only the map_h
  // rows the scores read written back to `spec`; last c2r of those rows, a chunk at a time
  // (rows_inv), each chunk turned into scores at once. The template's 2-D spectrum is not
  // kept for a one-shot call (its column transforms are redone in the scratch); a second run
  // of the same size keeps it (tpl_cols, in the scratch's layout) for every later run.
  BigBuffer<fftw_complex> spec_buf, tpl_spec_buf, tpl_cols_buf, scratch_buf;
  fftw_complex* spec = nullptr;
  double* real = nullptr;          // = (double*)spec, row stride real_stride
  size_t spec_stride = 0;          // complex per spectrum row: n1/2+1 rounded up to 64 bytes
  size_t real_stride = 0;          // = 2·spec_stride doubles
  fftw_complex* tpl_spec = nullptr;  // h × (n1/2+1): the template's row spectra, then the map
  bool tpl_spec_ready = false;       // tpl_spec holds the row spectra (not the last map)
  bool tpl_cols_ready = false;       // tpl_cols_buf holds the template's 2-D spectrum
  int scratch_workers = 0;           // workers scratch_buf has room for
  int runs = 0;                      // runs at this size
  fftw_plan rows_fwd = nullptr, rows_inv = nullptr, cols_fwd = nullptr, cols_inv = nullptr;
  bool planned() const { return rows_fwd && rows_inv && cols_fwd && cols_inv; }
  // Small per-run state, kept so that a video's frames allocate nothing once warm.
  std::vector<uint64_t> l1, l2sq;                 // per worker
  std::vector<std::vector<uint64_t>> band_sq;     // per band: Σ I² over the window's rows
  std::vector<std::vector<uint64_t>> band_i;      // per band: Σ I (the normed metrics)
  std::vector<uint64_t> hi;                       // the ranks' upper ends, past the bound
  ChoiceScratch choice;                           // cpu_fft_select.hpp

  void release() {
    std::lock_guard<std::mutex> lock(planner_mutex());
    for (fftw_plan* q : {&rows_fwd, &rows_inv, &cols_fwd, &cols_inv}) {
      if (*q) fftw_destroy_plan(*q);
      *q = nullptr;
    }
    for (BigBuffer<fftw_complex>* b : {&spec_buf, &tpl_spec_buf, &tpl_cols_buf, &scratch_buf}) b->reset();
    real = nullptr;
    spec = tpl_spec = nullptr;
    tpl_cols_ready = tpl_spec_ready = false;
    runs = scratch_workers = 0;
    src_w = src_h = n0 = n1 = 0;
  }
  ~Plan() { release(); }
};

bool available() { return true; }

void PlanDeleter::operator()(Plan* p) const { delete p; }

Status prepare(const Image& gray_template, int threads, PlanPtr* out, SourceCache* source_cache,
               const Tuning* tuning) {
  PlanPtr p(new Plan);
  p->tuning = tuning ? *tuning : Tuning::from_config();
  p->tuning_note = "; " + p->tuning.describe();
  p->tpl = gray_template;
  p->source_cache = source_cache;
  p->threads = std::max(1, threads);
  for (int y = 0; y < gray_template.height; ++y)
    for (int x = 0; x < gray_template.width; ++x) {
      const uint64_t v = gray_template.row(y)[x];
      p->tpl_sum += v;
      p->tpl_sq_sum += v * v;
    }
  p->tpl_l2 = std::sqrt(double(p->tpl_sq_sum));
  *out = std::move(p);
  return Status::Ok();
}

// Row y of the real buffer: `img`'s row at the left (when y < height), zeros elsewhere.
static void fill_padded_row(const Image& img, int n1, size_t stride, int y, double* real) {
  double* d = real + size_t(y) * stride;
  int x = 0;
  if (y < img.height) {
    const uint8_t* s = img.row(y);
    for (; x < img.width; ++x) d[x] = double(s[x]);
  }
  std::fill(d + x, d + n1, 0.0);
}

// match.fft_profile=1: the phases of setup_size and run on stderr (milliseconds), to see where
// a single call spends its time (docs/decisions/001); =cpu: the process's CPU time instead of
// the wall clock (all threads; steadier on a shared machine).
static double profile_now(Tuning::Profile mode) {
  if (mode == Tuning::Profile::Off) return 0.0;
  if (mode == Tuning::Profile::Wall) return now_ms();
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}
#define PROF_T(name) const double name = profile_now(p->tuning.profile)

// Columns per group of the column pass: a group's scratch (source and template, 2·n0·kColumnGroup
// complex, 269 KB at n0 = 1050) stays in a core's L2. Contiguous columns in the scratch
// (transposed) were faster than interleaved ones with FFTW_ESTIMATE plans; 8 and 16 per
// group were within noise (docs/decisions/001).
constexpr int kColumnGroup = 8;
// Rows per chunk of the row transforms (fill + r2c, c2r + scores): a chunk of 1344-wide rows
// is 172 KB, in L2 between the two.
constexpr int kRowChunk = 16;

// Plans and the template's row spectra for a source of this size (once per size).
static Status setup_size(Plan* p, int src_w, int src_h, const CpuExec& exec) {
  if (p->src_w == src_w && p->src_h == src_h) return Status::Ok();
  PROF_T(s0);
  p->release();
  int n0, n1;
  padded_size(src_w, src_h, &n0, &n1);
  const int h = p->tpl.height, n_half = n1 / 2 + 1;
  const size_t col_block = size_t(n0) * kColumnGroup;  // one group's column spectra
  // Rows padded to 64 bytes, so that every row, and so every chunk, has the alignment the
  // plans were made for; row counts rounded up to whole chunks (the extra rows are zero in and
  // unused out).
  p->spec_stride = (size_t(n_half) + 3) & ~size_t(3);
  p->real_stride = 2 * p->spec_stride;
  auto chunked = [](int rows) { return size_t(rows + kRowChunk - 1) / kRowChunk * kRowChunk; };
  // The template's row spectra are read only by the column pass; the score map, written after
  // it, takes their place (one buffer less to fault in).
  const size_t map_bytes = size_t(map_width_of(src_w, p->tpl.width)) *
                           size_t(map_height_of(src_h, h)) * sizeof(uint64_t);
  const size_t tpl_spec_n = std::max(chunked(h) * p->spec_stride,
                                     (map_bytes + sizeof(fftw_complex) - 1) / sizeof(fftw_complex));
  {
    std::lock_guard<std::mutex> lock(planner_mutex());
    const bool huge = p->tuning.hugepages;
    if (p->spec_buf.alloc(chunked(src_h) * p->spec_stride, huge) && p->tpl_spec_buf.alloc(tpl_spec_n, huge) &&
        p->scratch_buf.alloc(2 * col_block * size_t(std::max(1, exec.workers)), huge)) {
      p->spec = p->spec_buf.data();
      p->real = reinterpret_cast<double*>(p->spec);
      p->tpl_spec = p->tpl_spec_buf.data();
      p->scratch_workers = std::max(1, exec.workers);
      // Each plan from the wisdom cache when it is there (cpu_fftw.hpp).
      CachedPlanner planner(p->tuning);
      const int rs = int(p->real_stride), ss = int(p->spec_stride);
      p->rows_fwd = planner.make([&](unsigned f) {
        return fftw_plan_many_dft_r2c(1, &n1, kRowChunk, p->real, nullptr, 1, rs, p->spec, nullptr,
                                      1, ss, f);
      });
      p->rows_inv = planner.make([&](unsigned f) {
        return fftw_plan_many_dft_c2r(1, &n1, kRowChunk, p->spec, nullptr, 1, ss, p->real, nullptr,
                                      1, rs, f);
      });
      fftw_complex* scratch = p->scratch_buf.data();
      auto cols = [&](int sign) {
        return planner.make([&](unsigned f) {
          return fftw_plan_many_dft(1, &n0, kColumnGroup, scratch, nullptr, kColumnGroup, 1, scratch,
                                    nullptr, kColumnGroup, 1, sign, f);
        });
      };
      p->cols_fwd = cols(FFTW_FORWARD);
      p->cols_inv = cols(FFTW_BACKWARD);
      planner.finish(p->planned());
    }
  }
  PROF_T(s1);
  if (!p->spec || !p->tpl_spec) {
    p->release();
    return Status::runtime("out of memory for a " + std::to_string(n1) + "x" + std::to_string(n0) +
                           " FFT");
  }
  if (!p->planned()) {
    p->release();
    return Status::runtime("FFTW could not plan a " + std::to_string(n1) + "x" + std::to_string(n0) +
                           " transform");
  }
  p->src_w = src_w;
  p->src_h = src_h;
  p->n0 = n0;
  p->n1 = n1;
  if (p->tuning.profile != Tuning::Profile::Off) std::fprintf(stderr, "fft setup: plan+alloc %.2f ms\n", s1 - s0);
  return Status::Ok();
}

// The template's row spectra into tpl_spec (the plan's new-array execute: same layout and
// alignment); its column transforms happen in the column pass.
static void template_rows(Plan* p, const CpuExec& exec) {
  const int h = p->tpl.height, chunks = (h + kRowChunk - 1) / kRowChunk;
  double* treal = reinterpret_cast<double*>(p->tpl_spec);
  exec.for_each(chunks, [&](int c, int) {
    for (int y = c * kRowChunk; y < (c + 1) * kRowChunk; ++y)
      fill_padded_row(p->tpl, p->n1, p->real_stride, y, treal);
    fftw_execute_dft_r2c(p->rows_fwd, treal + size_t(c) * kRowChunk * p->real_stride,
                         p->tpl_spec + size_t(c) * kRowChunk * p->spec_stride);
  });
  p->tpl_spec_ready = true;
}

// The column pass (see Plan): for each group of kColumnGroup spectrum columns, on one worker,
// source columns (rows < H, zero below) and the template's (rows < h) into the worker's
// scratch, both forward, the product with the template's conjugate scaled by 1/(n0·n1),
// inverse, rows < map_h back into `spec`. When `keep` the template's column spectra go to
// tpl_cols_buf (already conjugated and scaled) for the later runs.
// `src_cols` (a batch's SourceSpectrum, null: none): with `src_ready` the source's column
// spectra are copied from it instead of gathered and transformed; without, they are saved
// there after the forward transform, for the next templates.
static void column_pass(Plan* p, int map_h, bool keep, const CpuExec& exec,
                        fftw_complex* src_cols = nullptr, bool src_ready = false) {
  const int n0 = p->n0, n_half = p->n1 / 2 + 1, H = p->src_h, h = p->tpl.height;
  const size_t col_block = size_t(n0) * kColumnGroup;
  const int groups = (n_half + kColumnGroup - 1) / kColumnGroup;
  const double scale = 1.0 / (double(n0) * double(p->n1));
  const bool reuse = p->tpl_cols_ready;
  exec.for_each(groups, [&](int g, int worker) {
    const int c0 = g * kColumnGroup, count = std::min(kColumnGroup, n_half - c0);
    fftw_complex* s = p->scratch_buf.data() + 2 * col_block * size_t(worker);
    fftw_complex* t = keep || reuse ? p->tpl_cols_buf.data() + col_block * size_t(g) : s + col_block;
    // Gather the group's part of each row (rows < `rows`, zero below and past n_half): row r,
    // column c0 + k goes to dst[r·kColumnGroup + k] (columns interleaved: one copy per row).
    auto gather = [&](const fftw_complex* src, int rows, fftw_complex* dst) {
      for (int r = 0; r < rows; ++r) {
        double* d = reinterpret_cast<double*>(dst + size_t(r) * kColumnGroup);
        std::memcpy(d, src + size_t(r) * p->spec_stride + c0, sizeof(fftw_complex) * size_t(count));
        std::fill(d + 2 * count, d + 2 * kColumnGroup, 0.0);
      }
      std::fill(reinterpret_cast<double*>(dst + size_t(rows) * kColumnGroup),
                reinterpret_cast<double*>(dst + col_block), 0.0);
    };
    if (!reuse) {
      gather(p->tpl_spec, h, t);
      fftw_execute_dft(p->cols_fwd, t, t);
      for (size_t i = 0; i < col_block; ++i) {
        t[i][0] *= scale;
        t[i][1] *= -scale;
      }
    }
    if (src_ready) {
      std::memcpy(s, src_cols + col_block * size_t(g), sizeof(fftw_complex) * col_block);
    } else {
      gather(p->spec, H, s);
      fftw_execute_dft(p->cols_fwd, s, s);
      if (src_cols) std::memcpy(src_cols + col_block * size_t(g), s, sizeof(fftw_complex) * col_block);
    }
    for (size_t i = 0; i < col_block; ++i) {
      const double ar = s[i][0], ai = s[i][1], br = t[i][0], bi = t[i][1];
      s[i][0] = ar * br - ai * bi;
      s[i][1] = ar * bi + ai * br;
    }
    fftw_execute_dft(p->cols_inv, s, s);
    for (int r = 0; r < map_h; ++r)
      std::memcpy(p->spec + size_t(r) * p->spec_stride + c0, s + size_t(r) * kColumnGroup,
                  sizeof(fftw_complex) * size_t(count));
  });
  if (keep) p->tpl_cols_ready = true;
}

// A bound on |ΣI·T by FFT − ΣI·T| at every position, for this source and template.
//
// Higham (Accuracy and Stability of Numerical Algorithms, 2nd ed., Thm 24.2): a computed
// Cooley–Tukey transform of N points has ‖ŷ − y‖₂ ≤ a·‖y‖₂ with a = log2(N)·η,
// η = μ + γ₄(√2 + μ) ≈ 6.7u for twiddles accurate to μ ≈ u (FFTW precomputes them
// accurately); the 2-D transform is a composition, so log2 N with N = n0·n1 points. The
// correlation c = F⁻¹(X ⊙ T̄)/N then errs, in the 2-norm and so at every position, by at most
//   a·(2·‖x‖₂‖t‖₁ + min(‖x‖₁‖t‖₂, √N‖x‖₂‖t‖₂)) + 4u·‖x‖₂‖t‖₁
// (forward error of X times ‖T‖∞ ≤ ‖t‖₁; error of T times ‖X‖∞ ≤ ‖x‖₁ or ‖X‖₂; the inverse
// transform's own error on ‖c‖₂ ≤ ‖x‖₂‖t‖₁; the product and scaling roundings), with
// x the whole source and t the template. FFTW mixes radices 2–7 rather than radix 2, so
// the result is doubled for safety. Measured errors are ~10⁻⁵ of this (docs/decisions/002).
static double fft_rounding_bound(const Plan& p, double src_l1, double src_l2) {
  const double u = 0x1p-53;  // unit roundoff of double
  const double n = double(p.n0) * double(p.n1);
  const double a = std::log2(n) * 7.0 * u;
  const double template_term = std::min(src_l1 * p.tpl_l2, std::sqrt(n) * src_l2 * p.tpl_l2);
  const double tpl_l1 = double(p.tpl_sum);  // exact: < 2^53
  const double bound = a * (2.0 * src_l2 * tpl_l1 + template_term) + 4.0 * u * src_l2 * tpl_l1;
  return 2.0 * bound;
}

// Round to the nearest integer without a libm call: adding and subtracting 1.5·2^52 leaves
// an integer for |v| < 2^51 (ΣI·T < 2^31 · 255² < 2^47).
static inline double round_to_integer(double v) {
  const double magic = 6755399441055744.0;  // 1.5 · 2^52
  return (v + magic) - magic;
}


Status run(Plan* p, const Image& src, const Params& params, const CpuExec& exec, RescoreFn rescore,
           Result* res, uint64_t* map_error) {
  PARVIS_TRY(setup_size(p, src.width, src.height, exec));
  const int W = src.width, H = src.height, w = p->tpl.width, h = p->tpl.height;
  const int map_w = map_width_of(W, w), map_h = map_height_of(H, h);
  const int n0 = p->n0, n1 = p->n1, n_half = n1 / 2 + 1;
  uint64_t* const scores = reinterpret_cast<uint64_t*>(p->tpl_spec);  // after the column pass
  const size_t n_scores = size_t(map_w) * size_t(map_h);

  // ΣI·T for every position: forward transform, product with the template's spectrum, inverse.
  // A second run of this size keeps the template's column spectra for the runs after it.
  if (exec.workers > p->scratch_workers) {  // the scratch is made for setup's exec
    if (!p->scratch_buf.alloc(2 * size_t(n0) * kColumnGroup * size_t(exec.workers), p->tuning.hugepages))
      return Status::runtime("out of memory for the FFT's column scratch");
    p->scratch_workers = exec.workers;
  }
  const bool keep = !p->tpl_cols_ready && p->runs >= 1 &&
                    p->tpl_cols_buf.alloc(size_t((n_half + kColumnGroup - 1) / kColumnGroup) * size_t(n0) * kColumnGroup,
                                          p->tuning.hugepages);
  ++p->runs;
  PROF_T(t0);
  if (!p->tpl_cols_ready && !p->tpl_spec_ready) template_rows(p, exec);
  PROF_T(t1);
  // A batch's source (SourceSpectrum): transformed by its first template, reused by the next
  // ones. Without memory for it, each template transforms the source as a single call does.
  SourceSpectrum* shared = nullptr;
  bool shared_ready = false;
  if (p->source_cache) {
    shared = dynamic_cast<SourceSpectrum*>(p->source_cache->state.get());
    shared_ready = shared && shared->same(src, n0, n1);
    if (!shared_ready) {
      std::unique_ptr<SourceSpectrum> fresh(new SourceSpectrum);
      const size_t groups = size_t((n_half + kColumnGroup - 1) / kColumnGroup);
      shared = fresh->cols.alloc(groups * size_t(n0) * kColumnGroup, p->tuning.hugepages) ? fresh.get() : nullptr;
      p->source_cache->state = std::move(fresh);
    }
  }
  uint64_t sum_l1 = 0, sum_l2sq = 0;
  if (shared_ready) {
    sum_l1 = shared->l1;
    sum_l2sq = shared->l2sq;
    // The rows the column pass leaves alone but the last chunk's c2r reads: zero (their output
    // is not used; a single call has the source's row spectra there).
    const size_t rows_read = size_t((map_h + kRowChunk - 1) / kRowChunk) * kRowChunk;
    std::fill(reinterpret_cast<double*>(p->spec + size_t(map_h) * p->spec_stride),
              reinterpret_cast<double*>(p->spec + rows_read * p->spec_stride), 0.0);
  } else {
    // The source's rows, a chunk at a time: filled, with the norms ‖x‖₁ and ‖x‖₂² for the
    // bound (per worker, added after), then transformed.
    std::vector<uint64_t>&l1 = p->l1, &l2sq = p->l2sq;
    l1.assign(size_t(exec.workers), 0);
    l2sq.assign(size_t(exec.workers), 0);
    exec.for_each((H + kRowChunk - 1) / kRowChunk, [&](int c, int worker) {
      for (int y = c * kRowChunk; y < (c + 1) * kRowChunk; ++y) {
        fill_padded_row(src, n1, p->real_stride, y, p->real);
        if (y >= H) continue;
        const uint8_t* s = src.row(y);
        uint64_t a = 0, b = 0;
        for (int x = 0; x < W; ++x) {
          a += s[x];
          b += uint64_t(s[x]) * s[x];
        }
        l1[size_t(worker)] += a;
        l2sq[size_t(worker)] += b;
      }
      fftw_execute_dft_r2c(p->rows_fwd, p->real + size_t(c) * kRowChunk * p->real_stride,
                           p->spec + size_t(c) * kRowChunk * p->spec_stride);
    });
    for (size_t i = 0; i < l1.size(); ++i) {
      sum_l1 += l1[i];
      sum_l2sq += l2sq[i];
    }
  }
  PROF_T(t2);
  column_pass(p, map_h, keep, exec, shared ? shared->cols.data() : nullptr, shared_ready);
  if (shared && !shared_ready) {
    shared->pixels = src.data();
    shared->width = W;
    shared->height = H;
    shared->stride = src.stride;
    shared->n0 = n0;
    shared->n1 = n1;
    shared->l1 = sum_l1;
    shared->l2sq = sum_l2sq;
    shared->ready = true;
  }
  if (shared) ++(shared_ready ? p->source_cache->transform.reused : p->source_cache->transform.made);
  p->tpl_spec_ready = false;  // its memory takes the map now
  PROF_T(t3);

  const double src_l2 = std::sqrt(double(sum_l2sq));
  const double true_bound = fft_rounding_bound(*p, double(sum_l1), src_l2);
  // match.fft_bound_scale (a test hook: fft_wobble.hpp) multiplies the bound and moves each ΣI·T
  // within the added width (the selftest's "match fft every choice").
  const double c_bound = true_bound * std::max(1.0, p->tuning.bound_scale);
  const double wobble_width = c_bound - true_bound;
  const bool exact = c_bound < 0.5;

  // Back to ΣI·T a chunk of rows at a time (c2r), each chunk turned into ranks at once:
  // C = round(ΣI·T) is exact when c_bound < 0.5; otherwise |C − ΣI·T| <= e = floor(c_bound + 0.5)
  // (both integers), and each rank is known within its ends (cpu_fft_select.cpp).
  //   SSD = ΣI² − 2·C + ΣT² in integers (a true SSD is >= 0), within err = ceil(2·(c_bound + 0.5));
  //   the normed metrics: ncc::score of the window sums and C, within the scores of C ∓ e
  //   (monotone in ΣI·T; cpu_fft_select.hpp).
  // ΣI² (and ΣI, normed) per window without an integral image (11 MB less to fault in at
  // 1326x1025): each worker takes a band of whole chunks and keeps, per source column x, the sum
  // over the h window rows, sliding it down a row at a time (add row y+h-1, remove row y-1:
  // vectorised), then slides a w-wide sum along it for the row of windows. Exact in 64 bits.
  const RankForm form{params.metric, TemplateSums{uint64_t(w) * uint64_t(h), p->tpl_sum, p->tpl_sq_sum}};
  const bool normed = is_normed(params.metric);
  const uint64_t err = exact ? 0 : uint64_t(std::ceil(2.0 * (c_bound + 0.5)));
  const uint64_t e_sit = exact ? 0 : uint64_t(std::floor(c_bound + 0.5));
  uint64_t* hi = nullptr;  // the upper ends, past the bound
  if (!exact) {
    try {
      p->hi.resize(n_scores);
    } catch (const std::bad_alloc&) {
      return Status::runtime("out of memory for the rank bounds of " + std::to_string(n_scores) + " positions");
    }
    hi = p->hi.data();
  }
  const int64_t tpl_sq = int64_t(p->tpl_sq_sum);
  const int map_chunks = (map_h + kRowChunk - 1) / kRowChunk;
  const int bands = std::min(map_chunks, std::max(1, exec.workers));
  p->band_sq.resize(size_t(bands));
  p->band_i.resize(size_t(bands));
  exec.for_each(bands, [&](int band, int) {
    const int c0 = int(int64_t(map_chunks) * band / bands), c1 = int(int64_t(map_chunks) * (band + 1) / bands);
    const int y0 = c0 * kRowChunk;
    std::vector<uint64_t>& col = p->band_sq[size_t(band)];
    std::vector<uint64_t>& col_i = p->band_i[size_t(band)];
    col.assign(size_t(W), 0);
    col_i.assign(normed ? size_t(W) : 0, 0);
    uint64_t* v = col.data();
    uint64_t* vi = col_i.data();
    for (int i = 0; i < h; ++i) {
      const uint8_t* a = src.row(y0 + i);
      for (int x = 0; x < W; ++x) v[x] += uint64_t(a[x]) * a[x];
      if (normed)
        for (int x = 0; x < W; ++x) vi[x] += a[x];
    }
    for (int c = c0; c < c1; ++c) {
      fftw_execute_dft_c2r(p->rows_inv, p->spec + size_t(c) * kRowChunk * p->spec_stride,
                           p->real + size_t(c) * kRowChunk * p->real_stride);
      for (int y = c * kRowChunk; y < std::min(map_h, (c + 1) * kRowChunk); ++y) {
        if (y > y0) {
          const uint8_t* a = src.row(y + h - 1);
          const uint8_t* b = src.row(y - 1);
          for (int x = 0; x < W; ++x) v[x] += uint64_t(a[x]) * a[x] - uint64_t(b[x]) * b[x];
          if (normed)
            for (int x = 0; x < W; ++x) vi[x] += uint64_t(a[x]) - b[x];
        }
        const double* corr = p->real + size_t(y) * p->real_stride;
        uint64_t* out = scores + size_t(y) * size_t(map_w);
        uint64_t* out_hi = hi ? hi + size_t(y) * size_t(map_w) : nullptr;
        uint64_t window = 0, window_i = 0;
        for (int j = 0; j < w; ++j) window += v[j];
        if (normed)
          for (int j = 0; j < w; ++j) window_i += vi[j];
        for (int x = 0;; ++x) {
          const double cv = wobble_width > 0 ? corr[x] + wobble_width * wobble(x, y) : corr[x];
          const int64_t c_round = int64_t(round_to_integer(cv));
          if (!normed) {
            const int64_t ssd = int64_t(window) - 2 * c_round + tpl_sq;
            const uint64_t s = ssd > 0 ? uint64_t(ssd) : 0;
            if (out_hi) {
              out[x] = s > err ? s - err : 0;
              out_hi[x] = s + err;
            } else {
              out[x] = s;
            }
          } else if (out_hi) {
            sit_rank_bounds(form, window_i, window, c_round, e_sit, &out[x], &out_hi[x]);
          } else {
            out[x] = sit_rank(form, window_i, window, uint64_t(c_round > 0 ? c_round : 0));
          }
          if (x + 1 == map_w) break;
          window += v[x + w] - v[x];
          if (normed) window_i += vi[x + w] - vi[x];
        }
      }
    }
  });
  PROF_T(t4);

  // The K best, or every position the selection could report, exactly (cpu_fft_select.cpp).
  // What was done about rounding is appended to res->explain below (no temporaries: with a
  // reused Result the text fits the memory of the previous frame's).
  char note[240];
  const RankMap ranks{scores, hi, map_w, map_h, err};
  auto rescore_ranks = [&](std::vector<Position>* cands) {
    rescore(cands);
    if (normed) to_ranks(form, src, w, h, exec, cands);
  };
  choose(ranks, params, map_error != nullptr, c_bound, exec, rescore_ranks, &p->choice, res, note, sizeof note);
  if (map_error) *map_error = err;
  PROF_T(t5);
  if (p->tuning.profile != Tuning::Profile::Off)
    std::fprintf(stderr, "fft run: tpl rows %.2f rows %.2f columns %.2f rows back+scores %.2f select %.2f ms\n",
                 t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4);
  res->method_used = Method::FFT;
  char head[96];
  std::snprintf(head, sizeof head, "%sFFT %dx%d (FFTW, double, %d thread%s): ", res->explain.empty() ? "" : "; ",
                n1, n0, p->threads, p->threads == 1 ? "" : "s");
  res->explain.append(head).append(note).append(p->tuning_note);
  return Status::Ok();
}

#else  // !PARVIS_HAVE_FFTW: the FFT method says clearly why it is missing.

struct Plan {};
bool available() { return false; }
void PlanDeleter::operator()(Plan* p) const { delete p; }
Status prepare(const Image&, int, PlanPtr*, SourceCache*, const Tuning*) { return unavailable(); }
Status run(Plan*, const Image&, const Params&, const CpuExec&, RescoreFn, Result*, uint64_t*) {
  return unavailable();
}

#endif

}  // namespace parvis::match::fft
