// cuda-opt template matching's tuning: the pipeline's switches in one struct, filled once per
// matcher (matcher_create: from_config(), then what the device cannot do switched off), kept
// in the Matcher and read by the pipelines (opt*.cu); `--explain` ends with describe(), the
// values that ran. Tests and benchmarks set them as PARVIS_TUNING=match.ntt=0,match.graph=0,...
// (src/common/config.cpp lists the keys).
#pragma once
#include <cstdlib>
#include <string>

#include "common/config.hpp"

namespace parvis::match::opt {

struct MatchTuning {
  // match.ntt: the FFT method takes the exact NTT where it applies (opt_ntt.cu: ntt_eligible);
  // 0: always cuFFT in double with exact re-scoring (keeps that path tested on every size).
  bool ntt = true;
  // match.ncc_host: the normed metrics' double expression on the host, from the SSD map (the
  // path before opt_normed.cu; also taken where its grids do not hold the map).
  bool ncc_host = false;
  // match.mapped_result: the fused run's last block writes the result into mapped host memory
  // (no copy after the graph); 0, or a device that cannot map host memory: a copy.
  bool mapped_result = true;
  // match.graph: each pipeline captured once per source size and replayed as a CUDA graph; off
  // also when a capture fails (the same work then runs uncaptured).
  bool graph = true;
  // match.direct_rows: output rows a direct_dp4a thread computes, 4 or 8; 0: chosen by the
  // grid's size against the GPU's (opt_direct.cu: direct_rows).
  int direct_rows = 0;
  // match.fft_tune: cuFFT's padded size timed among a few candidates once per source size
  // (opt_fft_size.cu); 0: the smallest 7-smooth size, untimed.
  bool fft_tune = true;
  // match.fft_bound_scale (a test hook, >= 1; src/match/fft_wobble.hpp): cuFFT's bound on the
  // normed metrics' path multiplied, each SSD moved within the added width (opt_normed.cu).
  double fft_bound_scale = 1;
  // match.prune_from: --all --min-distance prunes on the device what the choice cannot keep
  // (opt_choice.cu) once the list is longer than this (near 1,000 positions the host's choice
  // costs what the prune does: docs/decisions/024); 0: always (tests).
  unsigned prune_from = 1024;

  static MatchTuning from_config() {
    MatchTuning t;
    t.ntt = config::tuning_flag("match.ntt", t.ntt);
    t.ncc_host = config::tuning_flag("match.ncc_host", t.ncc_host);
    t.mapped_result = config::tuning_flag("match.mapped_result", t.mapped_result);
    t.graph = config::tuning_flag("match.graph", t.graph);
    const std::string rows = config::tuning_word("match.direct_rows", "auto");
    t.direct_rows = rows == "auto" ? 0 : std::atoi(rows.c_str());
    t.fft_tune = config::tuning_flag("match.fft_tune", t.fft_tune);
    t.fft_bound_scale = config::tuning_real("match.fft_bound_scale", t.fft_bound_scale);
    t.prune_from = unsigned(config::tuning_int("match.prune_from", t.prune_from));
    return t;
  }

  std::string describe() const {
    return std::string("tuning: ntt=") + (ntt ? "1" : "0") + " ncc_host=" + (ncc_host ? "1" : "0") +
           " mapped_result=" + (mapped_result ? "1" : "0") + " graph=" + (graph ? "1" : "0") +
           " direct_rows=" + (direct_rows ? std::to_string(direct_rows) : std::string("auto")) +
           " fft_tune=" + (fft_tune ? "1" : "0") +
           (fft_bound_scale > 1 ? " fft_bound_scale=" + std::to_string(fft_bound_scale) : std::string()) +
           (prune_from != MatchTuning().prune_from ? " prune_from=" + std::to_string(prune_from) : std::string());
  }
};

}  // namespace parvis::match::opt
