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
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

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
                                unsigned long long* __restrict__ also_vals, unsigned* __restrict__ count) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const T v = map[i];
    if (!(v <= limit)) continue;
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

Status alloc_lists(Matcher& m) {
  PARVIS_TRY(m.d_choice_cand.alloc(kChoiceCap));
  PARVIS_TRY(m.d_choice_vals.alloc(kChoiceCap));
  PARVIS_TRY(m.d_choice_count.alloc(1));
  PARVIS_TRY(m.h_choice_count.alloc(1));
  CUDA_CHECK(cudaMemsetAsync(m.d_choice_count.get(), 0, sizeof(unsigned), m.stream));
  return Status::Ok();
}

template <typename T>
Status enqueue_collect(Matcher& m, const T* map, T limit, const T* also = nullptr) {
  PARVIS_TRY(alloc_lists(m));
  if (also) PARVIS_TRY(m.d_choice_his.alloc(kChoiceCap));
  const unsigned n = unsigned(size_t(m.map_w()) * size_t(m.map_h()));
  const unsigned blocks = unsigned(std::min<size_t>(div_up(size_t(n), kCollectThreads), size_t(m.num_sms) * 8));
  collect_at_most<T><<<blocks, kCollectThreads, 0, m.stream>>>(
      map, unsigned(m.map_w()), n, limit, kChoiceCap, m.d_choice_cand.get(), m.d_choice_vals.get(), also,
      also ? m.d_choice_his.get() : nullptr, m.d_choice_count.get());
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
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

Status enqueue_collect_exact(Matcher& m, const uint32_t* map, uint64_t max_rank) {
  return enqueue_collect<uint32_t>(m, map, max_rank > 0xffffffffull ? 0xffffffffu : uint32_t(max_rank));
}

Status enqueue_collect_keys(Matcher& m, const uint64_t* keys, uint64_t max_rank) {
  return enqueue_collect<uint64_t>(m, keys, max_rank);
}

Status enqueue_collect_approx(Matcher& m, const double* map, double e) {
  // Exact <= threshold implies approximate <= threshold + E.
  return enqueue_collect<double>(m, map, double(m.params.selection.max_rank) + e);
}

Status enqueue_collect_ends(Matcher& m, const uint64_t* lo, const uint64_t* hi, uint64_t max_rank) {
  return enqueue_collect<uint64_t>(m, lo, max_rank, hi);
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
