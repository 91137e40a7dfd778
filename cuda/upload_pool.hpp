// The staged copier's thread pool (staged_upload.cu): workers 1..n-1 of a copy (the calling
// thread is worker 0), started once per configuration, woken per copy.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace parvis::cuda::upload {

class Pool {
 public:
  ~Pool() { stop_all(); }
  void start(int extra) {
    stop_all();
    stop_ = false;
    const uint64_t g = gen_;  // a new thread waits for the next job, not one already run
    for (int i = 1; i <= extra; ++i) threads_.emplace_back([this, i, g] { loop(i, g); });
  }
  int size() const { return int(threads_.size()) + 1; }
  // f(0) here, f(1..workers-1) on the pool; returns when all are done.
  void run(int workers, const std::function<void(int)>& f) {
    if (workers > 1 && !threads_.empty()) {
      {
        std::lock_guard<std::mutex> lk(mu_);
        job_ = &f;
        active_ = workers;
        pending_ = int(threads_.size());
        ++gen_;
        agen_.store(gen_, std::memory_order_release);
      }
      cv_.notify_all();
      f(0);
      std::unique_lock<std::mutex> lk(mu_);
      done_.wait(lk, [this] { return pending_ == 0; });
      job_ = nullptr;
    } else {
      f(0);
    }
  }

 private:
  void stop_all() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }
  void loop(int index, uint64_t seen) {
    for (;;) {
      // Spin a little before sleeping: frames and pieces follow each other within microseconds.
      const auto t0 = std::chrono::steady_clock::now();
      while (agen_.load(std::memory_order_acquire) == seen &&
             std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(300))
        std::this_thread::yield();
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return stop_ || gen_ != seen; });
      if (stop_) return;
      seen = gen_;
      const std::function<void(int)>* f = job_;
      const int active = active_;
      lk.unlock();
      if (index < active) (*f)(index);
      lk.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_, done_;
  const std::function<void(int)>* job_ = nullptr;
  int active_ = 0, pending_ = 0;
  uint64_t gen_ = 0;
  std::atomic<uint64_t> agen_{0};
  bool stop_ = false;
};

}  // namespace parvis::cuda::upload
