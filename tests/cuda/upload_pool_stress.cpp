// The staged copier's thread pool (cuda/upload/pool.hpp) under stress, on the host: jobs of
// 1-8 workers sharing pieces from a counter, some workers slow, background jobs posted between
// them (with and without the hot window), idle steps (Pool::set_idle, as the copier reads its
// next source ahead) stopped before each job and ended after it. Every piece must be done exactly
// once, whether or not a late thread joined its job; no idle step may run once set_idle(nullptr)
// has returned, and some must have run. Built and run by tests/gpu/match.sh (emulate); also
// clean under -fsanitize=thread.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "upload/pool.hpp"

int main() {
  parvis::cuda::upload::Pool pool;
  pool.start(7);
  int bad = 0, jobs = 0;
  std::atomic<long> idle_steps{0}, late{0};
  std::atomic<bool> alive{true};
  uint32_t z = 1;
  auto rnd = [&z] { return z = z * 1664525u + 1013904223u, z >> 8; };
  for (int it = 0; it < 3000; ++it) {
    if (it % 50 == 0)
      pool.post(8, [](int) { std::this_thread::sleep_for(std::chrono::microseconds(50)); },
                it % 100 == 0 ? 2000 : 0);
    // Idle steps on every other stretch of 100 jobs: they read a buffer that is freed once
    // set_idle(nullptr) returns (a step after it would read freed memory: counted, and seen by
    // the sanitizers).
    std::unique_ptr<std::vector<int>> idle_data;
    if (it % 200 < 100) {
      idle_data.reset(new std::vector<int>(1024, 1));
      const std::vector<int>* d = idle_data.get();
      pool.set_idle(std::make_unique<const parvis::cuda::upload::Pool::IdleStep>([d, &idle_steps, &alive, &late](int) {
        if (!alive.load()) late.fetch_add(1);
        int s = 0;
        for (int v : *d) s += v;
        idle_steps.fetch_add(s == 1024 ? 1 : 0);
      }));
      std::this_thread::sleep_for(std::chrono::microseconds(rnd() % 50));
      pool.stop_idle();
    }
    const size_t count = 1 + rnd() % 40;
    std::vector<std::atomic<int>> done(count);
    std::atomic<size_t> next{0};
    pool.run(1 + int(rnd() % 8), [&](int wi) {
      for (size_t i; (i = next.fetch_add(1)) < count;) {
        if (wi && i % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(i % 3 ? 1 : 100));
        done[i].fetch_add(1);
      }
    });
    if (idle_data) {
      pool.set_idle(nullptr);
      alive.store(false);
      idle_data.reset();
      alive.store(true);
    }
    for (size_t i = 0; i < count; ++i) bad += done[i].load() != 1;
    ++jobs;
    if (it % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // threads asleep
  }
  std::printf("upload pool: %d jobs, %d pieces wrong, %ld idle steps, %ld after their end\n", jobs,
              bad, idle_steps.load(), late.load());
  return bad == 0 && late.load() == 0 && idle_steps.load() > 0 ? 0 : 1;
}
