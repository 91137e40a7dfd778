// --mask with the FFT method on the CPU versions: see cpu_mask_fft.hpp.
#include "match/cpu_mask_fft.hpp"

#include <algorithm>
#include <new>
#include <string>

#include "match/mask.hpp"
#include "match/ncc.hpp"

namespace parvis::match::mask {

double runs_ms(double positions, size_t runs, int threads) {
  // ~1 ns per run and position on one thread (two u64 pairs of loads, adds; docs/decisions/022).
  return positions * double(runs) * 1.0e-6 / std::max(1, threads);
}

Status fft_run(fft::Plan* plan, const Image& src, const std::vector<Run>& runs,
               const TemplateSums& ts, int w, int h, const Params& params, const CpuExec& exec,
               fft::RescoreFn rescore, Result* res, bool* done) {
  *done = false;
  uint64_t error = 0;
  PARVIS_TRY(fft::run(plan, src, ssd_params_for_normed(params), exec, rescore, res, &error));
  if (error != 0) return Status::Ok();
  const double t0 = now_ms();
  const int W = src.width, map_w = res->map_width, map_h = res->map_height;
  // Row prefix sums of I and I², interleaved: pre[y][2x], pre[y][2x + 1] for columns < x.
  const size_t stride = 2 * (size_t(W) + 1);
  std::vector<uint64_t> pre;
  WindowSums ws;
  try {
    pre.resize(stride * size_t(src.height));
  } catch (const std::bad_alloc&) {
    return Status::runtime("out of memory for the row sums of a " + std::to_string(W) + "x" +
                           std::to_string(src.height) + " source");
  }
  PARVIS_TRY(ws.build(src));
  exec.for_each(src.height, [&](int y, int) {
    uint64_t* p = pre.data() + size_t(y) * stride;
    const uint8_t* r = src.row(y);
    p[0] = p[1] = 0;
    for (int x = 0; x < W; ++x) {
      p[2 * x + 2] = p[2 * x] + r[x];
      p[2 * x + 3] = p[2 * x + 1] + uint64_t(r[x]) * r[x];
    }
  });
  const bool normed = is_normed(params.metric), coeff = params.metric == Metric::NCC;
  std::vector<std::vector<uint64_t>> rows(size_t(exec.workers), std::vector<uint64_t>(size_t(map_w)));
  std::vector<FilteredTopK> tops(size_t(exec.workers), FilteredTopK(params.top_k));
  exec.for_each(map_h, [&](int y, int worker) {
    double* map_row = res->map.data() + size_t(y) * size_t(map_w);
    uint64_t* row = rows[size_t(worker)].data();
    for (int x = 0; x < map_w; ++x) {
      uint64_t msi = 0, msii = 0;  // Σ m·I, Σ m·I² over the runs
      for (const Run& r : runs) {
        const uint64_t* p = pre.data() + size_t(y + r.j) * stride + 2 * size_t(x);
        msi += p[2 * r.i1] - p[2 * r.i0];
        msii += p[2 * r.i1 + 1] - p[2 * r.i0 + 1];
      }
      uint64_t si, sii;  // the whole window's, for the FFT's SSD'
      ws.at(x, y, w, h, &si, &sii);
      const uint64_t ssd_whole = uint64_t(map_row[x]);        // exact: Σ(I − T & b)²
      const uint64_t sit = (sii + ts.stt - ssd_whole) / 2;    // corr(I, T & b), exact
      if (normed) {
        const double r = ncc::score(coeff, ts.n, msi, msii, sit, ts.st, ts.stt);
        row[x] = ncc::key_of(r);
        map_row[x] = r;
      } else {
        row[x] = msii + ts.stt - 2 * sit;  // Σ m·(I − T)², exact
        map_row[x] = double(row[x]);
      }
    }
    tops[size_t(worker)].offer_row(row, map_w, y);
  });
  for (size_t i = 1; i < tops.size(); ++i) tops[0].top().merge(tops[i].top());
  res->best = tops[0].top().sorted();
  if (!map_needed(params)) std::vector<double>().swap(res->map);
  res->timings.compute_ms += now_ms() - t0;
  res->explain += "; --mask: ΣI·T from the FFT's exact map, the masked window sums over the mask's " +
                  std::to_string(runs.size()) + " row runs";
  *done = true;
  return Status::Ok();
}

}  // namespace parvis::match::mask
