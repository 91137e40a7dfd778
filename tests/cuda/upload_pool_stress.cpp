// The staged copier's thread pool (cuda/upload_pool.hpp) under stress, on the host: jobs of
// 1-8 workers sharing pieces from a counter, some workers slow, background jobs posted between
// them (with and without the hot window). Every piece must be done exactly once, whether or not
// a late thread joined its job. Built and run by tests/gpu/match.sh (emulate); also clean
// under -fsanitize=thread.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "upload_pool.hpp"

int main() {
  parvis::cuda::upload::Pool pool;
  pool.start(7);
  int bad = 0, jobs = 0;
  uint32_t z = 1;
  auto rnd = [&z] { return z = z * 1664525u + 1013904223u, z >> 8; };
  for (int it = 0; it < 3000; ++it) {
    if (it % 50 == 0)
      pool.post(8, [](int) { std::this_thread::sleep_for(std::chrono::microseconds(50)); },
                it % 100 == 0 ? 2000 : 0);
    const size_t count = 1 + rnd() % 40;
    std::vector<std::atomic<int>> done(count);
    std::atomic<size_t> next{0};
    pool.run(1 + int(rnd() % 8), [&](int wi) {
      for (size_t i; (i = next.fetch_add(1)) < count;) {
        if (wi && i % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(i % 3 ? 1 : 100));
        done[i].fetch_add(1);
      }
    });
    for (size_t i = 0; i < count; ++i) bad += done[i].load() != 1;
    ++jobs;
    if (it % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // threads asleep
  }
  std::printf("upload pool: %d jobs, %d pieces wrong\n", jobs, bad);
  return bad == 0 ? 0 : 1;
}
