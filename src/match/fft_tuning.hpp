// The CPU FFT's tuning (cpu_fft.cpp, cpu_fftw.cpp; seq, simd and omp): one struct, filled once
// per matcher — Params::fft_tuning where the caller gives one (the selftest), else from
// PARVIS_TUNING's match.* keys — and kept in the FFT plan. `--explain`'s FFT note ends with
// describe(), the values that ran.
#pragma once
#include <cstdio>
#include <string>

#include "common/config.hpp"

namespace parvis::match::fft {

struct Tuning {
  // match.fft_bound_scale (a test hook, >= 1): the rounding bound multiplied by it, and each
  // ΣI·T moved within the added width (cpu_fft.cpp: wobble), so that the values are as far off as
  // the bound allows: forces the path of a bound >= 0.5 (large images) on small ones, where only
  // an exact re-scoring of every position the answer could hold gives the right answer.
  double bound_scale = 1;
  // match.fftw_buffering: FFTW's buffered solvers, faster by a few percent but each takes small
  // scratch buffers from malloc inside every transform; 0 plans with FFTW_NO_BUFFERING, so that
  // a warm video frame allocates nothing (tests/video_contract.sh checks it).
  bool fftw_buffering = true;
  // match.hugepages: the large per-size buffers advised as transparent huge pages (cpu_fftw.hpp).
  bool hugepages = true;
  // match.fft_profile: each stage's time on stderr (docs/decisions/001), by the wall clock (1)
  // or the process's CPU time over all threads (cpu: steadier on a shared machine).
  enum class Profile { Off, Wall, Cpu };
  Profile profile = Profile::Off;

  static Tuning from_config() {
    Tuning t;
    t.bound_scale = config::tuning_real("match.fft_bound_scale", t.bound_scale);
    t.fftw_buffering = config::tuning_flag("match.fftw_buffering", t.fftw_buffering);
    t.hugepages = config::tuning_flag("match.hugepages", t.hugepages);
    const std::string p = config::tuning_word("match.fft_profile", "0");
    t.profile = p == "cpu" ? Profile::Cpu : p == "1" ? Profile::Wall : Profile::Off;
    return t;
  }

  std::string describe() const {
    char buf[128];
    std::snprintf(buf, sizeof buf, "tuning: fft_bound_scale=%g fftw_buffering=%d hugepages=%d fft_profile=%s",
                  bound_scale, fftw_buffering ? 1 : 0, hugepages ? 1 : 0,
                  profile == Profile::Cpu ? "cpu" : profile == Profile::Wall ? "1" : "0");
    return buf;
  }
};

}  // namespace parvis::match::fft
