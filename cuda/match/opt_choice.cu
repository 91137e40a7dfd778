// cuda-opt: --all chosen on the device (Params::selection with a threshold, no --map). The map
// stays on the GPU: a kernel lists every position that can score at most the threshold, and only
// that list comes back. From an exact map (direct, NTT: 32-bit SSD; the normed metrics' 64-bit
// rank keys) with exact ranks: the host keeps
// those at most the threshold in the order of `better` and suppresses (select.hpp:
// select_sorted). From cuFFT's approximate map (each score within E) with the approximate
// scores of every position at most threshold + E: each exact score lies within two ends, and
// select.hpp's choose_within_ends re-scores on the device only what the choice needs; so do the
// normed metrics on cuFFT's map, whose rank ends (opt_normed.cu) are listed where the lower end
// is at most the threshold, both ends with it (enqueue_collect_ends). Either way
// the choice select_matches makes on the whole exact map. A list longer than kChoiceCap (a flat
// image: most positions match) reports an overflow, and the caller takes the whole-map path.
// With --min-distance, what the choice cannot keep is dropped on the device first (prune below):
// around each match only the match itself and the positions the ends leave open come back.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "emulable.cuh"
#include "match/opt_matcher.cuh"

namespace parvis::match::opt {

namespace {

constexpr unsigned kChoiceCap = 1u << 16;
constexpr int kCollectThreads = 256;

// Every i with map[i] <= limit into cand, its value into vals (and also[i] into also_vals, when
// given), in no order: the host sorts. *count may exceed cap (an overflow); entries past cap are
// not written.
template <typename T>
__global__ void collect_at_most(const T* __restrict__ map, unsigned map_w, unsigned n, T limit,
                                unsigned cap, int2* __restrict__ cand,
                                unsigned long long* __restrict__ vals, const T* __restrict__ also,
                                unsigned long long* __restrict__ also_vals,
                                const uint32_t* __restrict__ dropped, unsigned* __restrict__ count) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const T v = map[i];
    if (!(v <= limit) || (dropped && dropped[i])) continue;
    const unsigned k = atomicAdd(count, 1u);
    if (k >= cap) continue;
    cand[k] = make_int2(int(i % map_w), int(i / map_w));
    if constexpr (std::is_same<T, double>::value)
      vals[k] = (unsigned long long)__double_as_longlong(v);  // the approximate score's bits
    else
      vals[k] = (unsigned long long)v;
    if (also) also_vals[k] = (unsigned long long)also[i];
  }
}

// ---- prune: --min-distance D > 1 on the device ----
// A candidate q (its rank's lower end at most the threshold, not dropped) is *certain* when its
// upper end is at most the threshold and below the lower end of every other candidate within D
// (|dx|, |dy| < D): whatever the exact ranks, q comes before each of them, so the choice keeps
// it. A candidate p within D of a certain q whose upper end is below p's lower end is never kept
// (q is kept and ranks before it): it is dropped. One never kept suppresses nobody, so the
// candidates left give the same choice (select.hpp), and the next round, without the dropped
// ones, can find more certain ones (a match next to a better one that a third suppresses).
// Each position's ends are computed once (P0); a round is window minima along rows (P1, P3:
// a block's stretch of a row in shared memory, skipped where it holds no candidate), then along
// columns, only at the candidates, eight rows loaded at a time (P2, P4). Rounds follow each
// other without the host: each kernel returns at once when the round before dropped nothing.
// The host looks after each kPruneBatch rounds and goes on while the last one dropped any (a
// wide field of candidates settles one match further from the best each round), up to
// kPruneRounds; what is left goes to the host's choice.
// D up to kPruneMaxD (a wider window costs more than the list it saves), and only for a list
// longer than match.prune_from (collect_choice).
constexpr int kPruneMaxD = 128;
constexpr int kPruneBatch = 8, kPruneRounds = 64;
constexpr int kPruneRowTile = 256;  // P1, P3: a block's outputs along a row
constexpr uint64_t kNone = ~0ull;

// Each map's ends of position i: exact (lo = hi), or cuFFT's (the host's formula, finish_device_choice).
struct ExactEnds {
  const uint32_t* map;
  __device__ void at(size_t i, uint64_t* lo, uint64_t* hi) const { *lo = *hi = map[i]; }
};
struct KeyEnds {
  const uint64_t* keys;
  __device__ void at(size_t i, uint64_t* lo, uint64_t* hi) const { *lo = *hi = keys[i]; }
};
struct ApproxEnds {
  const double* map;
  double e;
  __device__ void at(size_t i, uint64_t* lo, uint64_t* hi) const {
    const double l = ceil(fmax(0.0, map[i] - e)), h = floor(map[i] + e);
    *lo = uint64_t(l);
    *hi = uint64_t(fmax(l, h));
  }
};
struct RangeEnds {
  const uint64_t *lo, *hi;
  __device__ void at(size_t i, uint64_t* l, uint64_t* h) const { *l = lo[i]; *h = hi[i]; }
};

#define PRUNE_FOR_EACH(i, n) \
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < (n); i += size_t(gridDim.x) * blockDim.x)

// Whether this round has nothing to do: the one before dropped nothing.
__device__ bool round_idle(const unsigned* dropped_any, int round) {
  return round > 0 && dropped_any[round - 1] == 0;
}

struct Two {
  uint64_t a, b;  // P1's two smallest
};

// P0. low: a candidate's lower end, kNone for the rest; hi: its upper end; no one dropped yet.
template <typename Ends>
__global__ void prune_ends(Ends ends, size_t n, uint64_t max_rank, uint64_t* __restrict__ low,
                           uint64_t* __restrict__ hi, uint32_t* __restrict__ dropped) {
  PRUNE_FOR_EACH(i, n) {
    uint64_t l, h;
    ends.at(i, &l, &h);
    low[i] = l <= max_rank ? l : kNone;
    hi[i] = h;
    dropped[i] = 0;
  }
}

// P1 (kTwo: the two smallest values within D - 1 along the row, a repeat counting twice) and
// P3 (the smallest). A block takes kPruneRowTile outputs of a row, its stretch (with the
// window's reach on both sides) in shared memory; a stretch of kNone gives kNone.
template <bool kTwo>
__global__ __launch_bounds__(kPruneRowTile) void prune_rows(const uint64_t* __restrict__ in, int w, int h,
                                                            int d, const unsigned* __restrict__ dropped_any,
                                                            int round, uint64_t* __restrict__ out1,
                                                            uint64_t* __restrict__ out2) {
  if (round_idle(dropped_any, round)) return;
  __shared__ uint64_t stretch[kPruneRowTile + 2 * (kPruneMaxD - 1)];
  const int x0 = int(blockIdx.x) * kPruneRowTile, x = x0 + int(threadIdx.x);
  const int from = max(0, x0 - d + 1), to = min(w, x0 + kPruneRowTile + d - 1);  // [from, to)
  for (int y = int(blockIdx.y); y < h; y += int(gridDim.y)) {
    const size_t row = size_t(y) * size_t(w);
    bool any = false;
    for (int xx = from + int(threadIdx.x); xx < to; xx += kPruneRowTile) {
      const uint64_t v = in[row + size_t(xx)];
      stretch[xx - from] = v;
      any |= v != kNone;
    }
    any = __syncthreads_or(any);
    if (x < w) {
      uint64_t a = kNone, b = kNone;
      if (any)
        for (int xx = max(0, x - d + 1); xx <= min(w - 1, x + d - 1); ++xx) {
          const uint64_t v = stretch[xx - from];
          if (kTwo) {
            b = min(b, max(a, v));
            a = min(a, v);
          } else {
            a = min(a, v);
          }
        }
      out1[row + size_t(x)] = a;
      if (kTwo) out2[row + size_t(x)] = b;
    }
    __syncthreads();  // the stretch is read before the next row overwrites it
  }
}

// P2. Along columns, at each candidate: certain when its upper end is at most the threshold and
// below every other candidate's lower end within D: its upper end into certain_hi (kNone for the
// rest).
__global__ void prune_certain(const uint64_t* __restrict__ low, const uint64_t* __restrict__ hi, int w,
                              size_t n, int d, uint64_t max_rank, const uint64_t* __restrict__ low1,
                              const uint64_t* __restrict__ low2, const unsigned* __restrict__ dropped_any,
                              int round, uint64_t* __restrict__ certain_hi) {
  if (round_idle(dropped_any, round)) return;
  const int h = int(n / size_t(w));
  PRUNE_FOR_EACH(i, n) {
    const uint64_t lo = low[i], up = hi[i];
    certain_hi[i] = kNone;
    if (lo == kNone || up > max_rank) continue;
    const int x = int(i % size_t(w)), y = int(i / size_t(w));
    uint64_t a = kNone, b = kNone;
    fold_by_eight(max(0, y - d + 1), min(h, y + d), [&](int yy) {
      const size_t j = size_t(yy) * size_t(w) + size_t(x);
      return Two{low1[j], low2[j]};
    }, [&](Two v) {
      b = min(max(a, v.a), min(b, v.b));
      a = min(a, v.a);
    });
    const uint64_t others = lo == a ? b : a;  // the smallest lower end but q's own
    if (up < others) certain_hi[i] = up;
  }
}

// P4. Along columns, at each candidate: dropped when a certain one within D has its upper end
// below the candidate's lower end; dropped_any[round] says whether any was.
__global__ void prune_drop(uint64_t* __restrict__ low, int w, size_t n, int d,
                           const uint64_t* __restrict__ row_min, uint32_t* __restrict__ dropped,
                           unsigned* __restrict__ dropped_any, int round) {
  if (round_idle(dropped_any, round)) return;
  const int h = int(n / size_t(w));
  PRUNE_FOR_EACH(i, n) {
    const uint64_t lo = low[i];
    if (lo == kNone) continue;
    const int x = int(i % size_t(w)), y = int(i / size_t(w));
    uint64_t m = kNone;
    fold_by_eight(max(0, y - d + 1), min(h, y + d),
                  [&](int yy) { return row_min[size_t(yy) * size_t(w) + size_t(x)]; },
                  [&](uint64_t v) { m = min(m, v); });
    if (m < lo) {
      low[i] = kNone;
      dropped[i] = 1;
      dropped_any[round] = 1;  // every writer writes the same word
    }
  }
}

// The prune on the stream; *dropped gets the flags (null: no prune for this choice).
template <typename Ends>
Status enqueue_prune(Matcher& m, Ends ends, const Selection& sel, const uint32_t** dropped) {
  *dropped = nullptr;
  const int d = sel.min_distance;
  const int w = m.map_w(), h = m.map_h();
  const size_t n = size_t(w) * size_t(h);
  // Five words and a flag a position: where the card lacks them, the list alone (the same choice).
  DeviceBuffer<uint64_t>* words[] = {&m.d_prune_low, &m.d_prune_hi, &m.d_prune_a, &m.d_prune_b, &m.d_prune_c};
  bool room = m.d_prune_dropped.alloc(n).ok() && m.d_prune_dropped_any.alloc(kPruneRounds).ok();
  for (DeviceBuffer<uint64_t>* b : words) room = room && b->alloc(n).ok();
  if (!room) {
    for (DeviceBuffer<uint64_t>* b : words) PARVIS_TRY(b->alloc(0));
    PARVIS_TRY(m.d_prune_dropped.alloc(0));
    return Status::Ok();
  }
  uint64_t *low = m.d_prune_low.get(), *hi = m.d_prune_hi.get();
  uint64_t *a = m.d_prune_a.get(), *b = m.d_prune_b.get(), *c = m.d_prune_c.get();
  uint32_t* gone = m.d_prune_dropped.get();
  unsigned* any = m.d_prune_dropped_any.get();
  const unsigned blocks = unsigned(std::min<size_t>(div_up(n, kCollectThreads), size_t(m.num_sms) * 16));
  const dim3 row_grid(unsigned(div_up(size_t(w), kPruneRowTile)), unsigned(std::min(h, 65535)));
  CUDA_CHECK(cudaMemsetAsync(any, 0, kPruneRounds * sizeof(unsigned), m.stream));
  prune_ends<<<blocks, kCollectThreads, 0, m.stream>>>(ends, n, sel.max_rank, low, hi, gone);
  CUDA_CHECK_LAUNCH();
  for (int round = 0; round < kPruneRounds; ++round) {
    prune_rows<true><<<row_grid, kPruneRowTile, 0, m.stream>>>(low, w, h, d, any, round, a, b);
    CUDA_CHECK_LAUNCH();
    prune_certain<<<blocks, kCollectThreads, 0, m.stream>>>(low, hi, w, n, d, sel.max_rank, a, b, any, round, c);
    CUDA_CHECK_LAUNCH();
    prune_rows<false><<<row_grid, kPruneRowTile, 0, m.stream>>>(c, w, h, d, any, round, a, nullptr);
    CUDA_CHECK_LAUNCH();
    prune_drop<<<blocks, kCollectThreads, 0, m.stream>>>(low, w, n, d, a, gone, any, round);
    CUDA_CHECK_LAUNCH();
    if ((round + 1) % kPruneBatch == 0 && round + 1 < kPruneRounds) {  // more rounds?
      unsigned more = 0;
      CUDA_CHECK(cudaMemcpyAsync(&more, any + round, sizeof more, cudaMemcpyDeviceToHost, m.stream));
      CUDA_CHECK(cudaStreamSynchronize(m.stream));
      if (!more) break;
    }
  }
  *dropped = gone;
  return Status::Ok();
}

Status alloc_lists(Matcher& m) {
  PARVIS_TRY(m.d_choice_cand.alloc(kChoiceCap));
  PARVIS_TRY(m.d_choice_vals.alloc(kChoiceCap));
  PARVIS_TRY(m.d_choice_count.alloc(1));
  PARVIS_TRY(m.h_choice_count.alloc(1));
  CUDA_CHECK(cudaMemsetAsync(m.d_choice_count.get(), 0, sizeof(unsigned), m.stream));
  return Status::Ok();
}

template <typename T>
Status enqueue_collect(Matcher& m, const T* map, T limit, const uint32_t* dropped,
                       const T* also = nullptr) {
  PARVIS_TRY(alloc_lists(m));
  if (also) PARVIS_TRY(m.d_choice_his.alloc(kChoiceCap));
  const unsigned n = unsigned(size_t(m.map_w()) * size_t(m.map_h()));
  const unsigned blocks = unsigned(std::min<size_t>(div_up(size_t(n), kCollectThreads), size_t(m.num_sms) * 8));
  collect_at_most<T><<<blocks, kCollectThreads, 0, m.stream>>>(
      map, unsigned(m.map_w()), n, limit, kChoiceCap, m.d_choice_cand.get(), m.d_choice_vals.get(), also,
      also ? m.d_choice_his.get() : nullptr, dropped, m.d_choice_count.get());
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

// The list; with --min-distance, where it is longer than the tuning's prune_from, made again
// after the prune (a short list costs the host less than the prune's rounds).
template <typename T, typename Ends>
Status collect_choice(Matcher& m, const T* map, T limit, const T* also, Ends ends, const Selection& sel) {
  PARVIS_TRY(enqueue_collect(m, map, limit, nullptr, also));
  if (sel.min_distance <= 1 || sel.min_distance > kPruneMaxD) return Status::Ok();
  unsigned count = 0;
  CUDA_CHECK(cudaMemcpyAsync(&count, m.d_choice_count.get(), sizeof count, cudaMemcpyDeviceToHost, m.stream));
  CUDA_CHECK(cudaStreamSynchronize(m.stream));
  if (count <= m.tuning.prune_from) return Status::Ok();
  const uint32_t* dropped = nullptr;
  PARVIS_TRY(enqueue_prune(m, ends, sel, &dropped));
  return dropped ? enqueue_collect(m, map, limit, dropped, also) : Status::Ok();
}

// The exact SSD of the batch's positions, on the device (the list's buffers are free by then).
Status rescore_batch(Matcher& m, std::vector<Position>* batch) {
  const size_t k = batch->size();
  std::vector<int2>& at = m.h_choice_cand;
  std::vector<unsigned long long>& exact = m.h_choice_vals;
  at.resize(k);
  exact.resize(k);
  for (size_t i = 0; i < k; ++i) at[i] = make_int2((*batch)[i].x, (*batch)[i].y);
  CUDA_CHECK(cudaMemcpyAsync(m.d_choice_cand.get(), at.data(), k * sizeof(int2), cudaMemcpyHostToDevice, m.stream));
  PARVIS_TRY(enqueue_exact_ssd(m, m.d_choice_cand.get(), unsigned(k), nullptr, m.d_choice_vals.get()));
  CUDA_CHECK(cudaMemcpyAsync(exact.data(), m.d_choice_vals.get(), k * sizeof(unsigned long long),
                             cudaMemcpyDeviceToHost, m.stream));
  CUDA_CHECK(cudaStreamSynchronize(m.stream));
  for (size_t i = 0; i < k; ++i) (*batch)[i].score = exact[i];
  return Status::Ok();
}

// The list back to the host (with the upper ends when `his`): *count positions, or *overflow.
Status list_back(Matcher& m, bool his, Result* res, unsigned* count, bool* overflow) {
  cudaStream_t s = m.stream;
  CUDA_CHECK(cudaEventRecord(m.ev[2], s));
  CUDA_CHECK(cudaMemcpyAsync(m.h_choice_count.get(), m.d_choice_count.get(), sizeof(unsigned),
                             cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  *count = *m.h_choice_count.get();
  *overflow = *count > kChoiceCap;
  if (*overflow) return Status::Ok();
  try {
    m.h_choice_cand.resize(*count);
    m.h_choice_vals.resize(*count);
    if (his) m.h_choice_his.resize(*count);
  } catch (const std::bad_alloc&) {
    return Status::runtime("out of host memory for the matches");
  }
  if (*count > 0) {
    CUDA_CHECK(cudaMemcpyAsync(m.h_choice_cand.data(), m.d_choice_cand.get(), *count * sizeof(int2),
                               cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaMemcpyAsync(m.h_choice_vals.data(), m.d_choice_vals.get(),
                               *count * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
    if (his)
      CUDA_CHECK(cudaMemcpyAsync(m.h_choice_his.data(), m.d_choice_his.get(),
                                 *count * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
  }
  CUDA_CHECK(cudaEventRecord(m.ev[3], s));
  return elapsed(m, &res->timings);  // waits for the copies
}

void note_choice(unsigned count, size_t rescored, Result* res) {
  res->chosen = true;
  char note[128];
  std::snprintf(note, sizeof note, "; --all on the device: %u positions listed, %zu re-scored, %zu chosen",
                count, rescored, res->best.size());
  res->explain.append(note);
}

}  // namespace

bool device_choice(const Params& p) { return p.selection.all && !p.want_map; }

Status enqueue_collect_exact(Matcher& m, const uint32_t* map, const Selection& sel) {
  const uint32_t limit = sel.max_rank > 0xffffffffull ? 0xffffffffu : uint32_t(sel.max_rank);
  return collect_choice<uint32_t>(m, map, limit, nullptr, ExactEnds{map}, sel);
}

Status enqueue_collect_keys(Matcher& m, const uint64_t* keys, const Selection& sel) {
  return collect_choice<uint64_t>(m, keys, sel.max_rank, nullptr, KeyEnds{keys}, sel);
}

Status enqueue_collect_approx(Matcher& m, const double* map, double e) {
  const Selection& sel = m.params.selection;
  // Exact <= threshold implies approximate <= threshold + E.
  return collect_choice<double>(m, map, double(sel.max_rank) + e, nullptr, ApproxEnds{map, e}, sel);
}

Status enqueue_collect_ends(Matcher& m, const uint64_t* lo, const uint64_t* hi, const Selection& sel) {
  return collect_choice<uint64_t>(m, lo, sel.max_rank, hi, RangeEnds{lo, hi}, sel);
}

Status finish_ends_choice(Matcher& m, const Params& p, RankRescoreFn rescore, Result* res,
                          bool* overflow) {
  unsigned count = 0;
  PARVIS_TRY(list_back(m, true, res, &count, overflow));
  if (*overflow) return Status::Ok();
  const double t0 = now_ms();
  std::vector<Ranged>& ends = m.h_choice_ends;
  ends.resize(count);
  for (unsigned i = 0; i < count; ++i)
    ends[i] = Ranged{m.h_choice_cand[i].x, m.h_choice_cand[i].y, m.h_choice_vals[i], m.h_choice_his[i]};
  Settled settled;
  choose_within_ends(&ends, p.selection, m.map_w(), m.map_h(), rescore, &settled);
  res->best = std::move(settled.best);
  res->timings.compute_ms += now_ms() - t0;
  note_choice(count, settled.rescored, res);
  return Status::Ok();
}

Status finish_device_choice(Matcher& m, const Params& p, double e, Result* res, bool* overflow) {
  unsigned count = 0;
  PARVIS_TRY(list_back(m, false, res, &count, overflow));
  if (*overflow) return Status::Ok();
  const double t0 = now_ms();
  const Selection& sel = p.selection;
  size_t rescored = 0;
  if (e < 0) {  // exact scores
    std::vector<Position>& sorted = m.h_choice_sorted;
    sorted.clear();
    for (unsigned i = 0; i < count; ++i)
      if (m.h_choice_vals[i] <= sel.max_rank)
        sorted.push_back(Position{m.h_choice_cand[i].x, m.h_choice_cand[i].y, m.h_choice_vals[i]});
    std::sort(sorted.begin(), sorted.end(), better);
    res->best = select_sorted(sorted, sel, p.top_k, m.map_w(), m.map_h());
  } else {  // approximate: each exact SSD (an integer) within E of its approximate score
    std::vector<Ranged>& ends = m.h_choice_ends;
    ends.resize(count);
    for (unsigned i = 0; i < count; ++i) {
      double a;
      std::memcpy(&a, &m.h_choice_vals[i], sizeof a);
      const double lo = std::ceil(std::max(0.0, a - e)), hi = std::floor(a + e);
      ends[i] = Ranged{m.h_choice_cand[i].x, m.h_choice_cand[i].y, uint64_t(lo), uint64_t(std::max(lo, hi))};
    }
    Status failed;
    Settled settled;
    choose_within_ends(&ends, sel, m.map_w(), m.map_h(),
                       [&](std::vector<Position>* batch) {
                         if (failed.ok()) failed = rescore_batch(m, batch);
                       },
                       &settled);
    PARVIS_TRY(failed);
    res->best = std::move(settled.best);
    rescored = settled.rescored;
  }
  res->timings.compute_ms += now_ms() - t0;
  note_choice(count, rescored, res);
  return Status::Ok();
}

}  // namespace parvis::match::opt
