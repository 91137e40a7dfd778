// What the CPU FFT path (cpu_fft.cpp) needs around FFTW: the planner's lock, plans made through
// the wisdom cache on disk, and the huge-page buffers the transforms run in. Built only where
// the build found FFTW (PARVIS_HAVE_FFTW).
#pragma once
#if PARVIS_HAVE_FFTW
#include <fftw3.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <string>

#include "match/fft_tuning.hpp"

namespace parvis::match::fft {

// FFTW's planner is not thread-safe and its thread count is global: every planner call (and
// fftw_destroy_plan) goes through this lock. fftw_execute on distinct plans is safe.
std::mutex& planner_mutex();

// Plans taken from the wisdom cache where it has them, else planned and the cache written back
// (cpu_fftw.cpp: "wisdom cache"). One per set of plans, the planner lock held while it lives:
//   CachedPlanner planner;
//   a = planner.make([&](unsigned flags) { return fftw_plan_...(..., flags); });
//   planner.finish(a != nullptr);
class CachedPlanner {
 public:
  // Reads the cache into FFTW's wisdom, once a process; plans as `tuning` says (its buffering).
  explicit CachedPlanner(const Tuning& tuning);
  // planner(flags) -> fftw_plan: first with FFTW_WISDOM_ONLY (null when the cache lacks it),
  // then with the planning flags.
  template <typename Planner>
  fftw_plan make(Planner&& planner) {
    fftw_plan q = cache_.empty() ? nullptr : planner(flags_ | FFTW_WISDOM_ONLY);
    if (!q) {
      q = planner(flags_);
      learned_ = true;
    }
    return q;
  }
  // Writes the cache back when a plan was made that it lacked and `keep` (every plan made).
  void finish(bool keep);

 private:
  const std::string& cache_;
  unsigned flags_;
  bool learned_ = false;
};

// The large per-size buffers (~45 MB at 1326x1025): allocated unzeroed, 2 MiB aligned and
// advised as transparent huge pages where the kernel offers them (THP "madvise" mode), so that
// a one-shot run faults in ~25 huge pages instead of ~11,000 small ones (page faults were a
// third of a single call's time; docs/decisions/001). Plain 4 KiB pages elsewhere, and
// where the tuning says match.hugepages=0.
void advise_huge_pages(void* p, size_t bytes);

template <typename T>
class BigBuffer {
 public:
  BigBuffer() = default;
  BigBuffer(const BigBuffer&) = delete;
  BigBuffer& operator=(const BigBuffer&) = delete;
  ~BigBuffer() { reset(); }
  // n elements, contents undefined; false when out of memory. `huge`: advised as huge pages.
  bool alloc(size_t n, bool huge) {
    reset();
    constexpr size_t kHuge = size_t(2) << 20;
    const size_t bytes = (std::max<size_t>(n, 1) * sizeof(T) + kHuge - 1) / kHuge * kHuge;
    p_ = static_cast<T*>(std::aligned_alloc(kHuge, bytes));
    if (!p_) return false;
    if (huge) advise_huge_pages(p_, bytes);
    n_ = n;
    return true;
  }
  void reset() {
    std::free(p_);
    p_ = nullptr;
    n_ = 0;
  }
  T* data() const { return p_; }
  size_t size() const { return n_; }
  T& operator[](size_t i) const { return p_[i]; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace parvis::match::fft
#endif  // PARVIS_HAVE_FFTW
