// The end of the CUDA direct methods (cuda-naive's run_direct, cuda_mask::run of both CUDA
// versions): the device's score map back to the host and ranked there.
#pragma once
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "common.cuh"
#include "match/match_common.hpp"
#include "match/select.hpp"
#include "match/ncc.hpp"

namespace parvis::match::cuda_direct {

// Downloads the map_w x map_h scores of d_map (exact integer scores, or with `normed` the
// doubles' bits) and ranks them on the host: res->best (the params.top_k best) and, when
// params.want_map, res->map (the doubles; integer scores exactly). The copy is timed with
// `timer` as download_ms; the host's work is added to compute_ms.
inline Status download_and_rank(const uint64_t* d_map, int map_w, int map_h, bool normed,
                                const Params& params, cuda::EventTimer* timer, Result* res) {
  const size_t n = size_t(map_w) * size_t(map_h);
  std::vector<uint64_t> scores;
  try {
    scores.resize(n);
  } catch (const std::bad_alloc&) {
    return Status::runtime("out of host memory for the score map");
  }
  float ms = 0;
  PARVIS_TRY(timer->start());
  CUDA_CHECK(cudaMemcpy(scores.data(), d_map, n * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  PARVIS_TRY(timer->stop(&ms));
  res->timings.download_ms = ms;

  const double t0 = now_ms();
  try {
    if (params.want_map) res->map.assign(n, 0.0);
  } catch (const std::bad_alloc&) {
    return Status::runtime("out of host memory for a score map of " + std::to_string(n) +
                           " entries");
  }
  if (normed || params.want_map)
    for (size_t i = 0; i < n; ++i) {  // the doubles' bits -> the map and their rank keys
      double r = double(scores[i]);
      if (normed) {
        std::memcpy(&r, &scores[i], sizeof r);
        scores[i] = ncc::key_of(r);
      }
      if (params.want_map) res->map[i] = r;
    }
  best_from_ranks(scores.data(), map_w, map_h, params, res);  // on the host
  res->timings.compute_ms += now_ms() - t0;
  return Status::Ok();
}

}  // namespace parvis::match::cuda_direct
