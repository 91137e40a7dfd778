// What the CPU versions of template matching share besides kernels: how a version runs
// independent iterations (in order, or over OpenMP threads), and a top-K that skips, with
// one comparison, the scores that cannot enter it.
#pragma once
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "common/function_ref.hpp"
#include "match/match_common.hpp"

namespace parvis::match {

// Runs body(i, worker) for every i in [0, n), worker in [0, workers). Each worker must see
// its i in increasing order (a static schedule does), which FilteredTopK relies on. The body is
// a FunctionRef: handing a lambda to for_each allocates nothing.
using LoopBody = FunctionRef<void(int i, int worker)>;
struct CpuExec {
  int workers = 1;
  void (*for_each_fn)(int n, LoopBody body) = nullptr;
  void for_each(int n, LoopBody body) const { for_each_fn(n, body); }
};

// One worker: every loop in order (seq, simd).
inline CpuExec serial_exec() {
  CpuExec e;
  e.workers = 1;
  e.for_each_fn = [](int n, LoopBody body) {
    for (int i = 0; i < n; ++i) body(i, 0);
  };
  return e;
}

// TopK (match_common.hpp) behind a filter: a score is offered only when it is below the
// K-th smallest score offered so far. Positions must come in increasing (y, x) order: a
// skipped position then has K kept ones before it with scores <= its own, each of which
// ranks better (smaller score, or equal score and earlier), so skipping changes nothing.
class FilteredTopK {
 public:
  explicit FilteredTopK(int k) : top_(k), k_(size_t(k < 1 ? 1 : k)) {}
  // Empty again, keeping the memory (a video's frames reuse one per worker).
  void reset() {
    top_.reset();
    while (!kept_.empty()) kept_.pop();
    limit_ = UINT64_MAX;
  }

  void offer_row(const uint64_t* scores, int n, int y) {
    for (int x = 0; x < n; ++x)
      if (scores[x] < limit_) add(x, y, scores[x]);
  }
  TopK& top() { return top_; }

 private:
  void add(int x, int y, uint64_t score) {
    top_.offer(x, y, score);
    kept_.push(score);
    if (kept_.size() > k_) kept_.pop();
    if (kept_.size() == k_) limit_ = kept_.top();
  }
  TopK top_;
  size_t k_;
  std::priority_queue<uint64_t> kept_;  // the K smallest scores offered (max on top)
  uint64_t limit_ = UINT64_MAX;         // scores are < 2^47
};

// The K best of a row-major score map, rows split over the workers, into *out (best first).
// `tops` holds one FilteredTopK per worker between calls, so that repeated calls reuse memory.
inline void select_best_parallel(const uint64_t* scores, int map_w, int map_h, int k, const CpuExec& exec,
                                 std::vector<FilteredTopK>* tops, std::vector<Position>* out) {
  if (tops->size() != size_t(exec.workers) || tops->front().top().k() != size_t(k < 1 ? 1 : k))
    tops->assign(size_t(exec.workers), FilteredTopK(k));
  for (FilteredTopK& t : *tops) t.reset();
  exec.for_each(map_h, [&](int y, int worker) {
    (*tops)[size_t(worker)].offer_row(scores + size_t(y) * size_t(map_w), map_w, y);
  });
  for (size_t i = 1; i < tops->size(); ++i) (*tops)[0].top().merge((*tops)[i].top());
  (*tops)[0].top().sorted_into(out);
}

}  // namespace parvis::match
