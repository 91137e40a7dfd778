// The staged copier's thread pool (copier.cu): workers 1..n-1 of a copy (the calling
// thread is worker 0), started once per configuration, woken per copy. A job's workers take
// shared work (pieces from a counter) that the caller can finish alone: a thread that comes
// after the caller is done does not run it.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace parvis::cuda::upload {

class Pool {
 public:
  ~Pool() {
    set_idle(nullptr);
    stop_all();
  }
  // `extra` threads; each runs on_start first (the staged copier binds its device there, so
  // that a worker's first CUDA call is not paid inside a copy).
  void start(int extra, std::function<void()> on_start = {}) {
    stop_all();
    stop_ = false;
    on_start_ = std::move(on_start);
    const uint64_t g = gen_;  // a new thread waits for the next job, not one already run
    for (int i = 1; i <= extra; ++i) threads_.emplace_back([this, i, g] { loop(i, g); });
  }
  int size() const { return int(threads_.size()) + 1; }
  // How long an idle thread spins (yielding) before it sleeps: also right after its start, so
  // that a copy soon after the pool's start finds its threads awake.
  void set_spin(unsigned us) { spin_us_.store(us, std::memory_order_relaxed); }
  // Work a spinning thread does between its looks for a job (the staged copier keeps the next
  // copy's rows in the threads' caches): step(index) does a few microseconds of it, or nothing
  // when it has none for now; the thread yields after each. A thread in a step takes a job once
  // the step ends: a job never waits for it. stop_idle() stops new steps at once; set_idle
  // (nullptr, or the next step) also returns only once no thread is inside one (what they read
  // may then go away). Called by the pool's owner only.
  using IdleStep = std::function<void(int)>;
  void stop_idle() { idle_.store(nullptr); }
  void set_idle(std::unique_ptr<const IdleStep> step) {
    if (idle_owned_) {
      idle_.store(nullptr);
      while (idle_busy_.load() != 0) std::this_thread::yield();
      idle_owned_.reset();
    }
    idle_owned_ = std::move(step);
    if (idle_owned_) idle_.store(idle_owned_.get());
  }
  // f(0) here, f(1..workers-1) on the pool; returns when f(0) and the threads that started
  // their part are done (after a posted job).
  void run(int workers, const std::function<void(int)>& f) {
    wait();
    if (workers > 1 && !threads_.empty()) {
      publish(workers, &f, 0);
      f(0);
      wait();
    } else {
      f(0);
    }
  }
  // f(1..workers-1) on the pool in the background; the next run, post or wait waits for it.
  // After it the threads spin up to hot_us (or the usual spin, when longer) for the next job.
  void post(int workers, std::function<void(int)> f, unsigned hot_us = 0) {
    wait();
    if (workers <= 1 || threads_.empty()) return;
    posted_ = std::move(f);
    publish(workers, &posted_, hot_us);
  }
  // Closes the last job to the threads that have not started it (the caller or the threads
  // that started do its work: a thread woken late, or not scheduled, must not hold up a copy
  // whose pieces are all done) and waits for those that have.
  void wait() {
    std::unique_lock<std::mutex> lk(mu_, std::defer_lock);
    lock_spinning(lk);
    open_ = false;
    if (running_.load(std::memory_order_relaxed) != 0) {
      // The threads still running finish their last piece within microseconds: watch the count
      // first rather than sleep on done_ (a futex wake-up costs several).
      lk.unlock();
      const auto t0 = std::chrono::steady_clock::now();
      while (running_.load(std::memory_order_acquire) != 0 &&
             std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(200))
        std::this_thread::yield();
      lock_spinning(lk);
      done_.wait(lk, [this] { return running_.load(std::memory_order_relaxed) == 0; });
    }
    job_ = nullptr;
  }

 private:
  // mu_ taken by trying, not by sleeping on it: the threads woken by one job all take it within
  // a microsecond or two, and a futex sleep and wake-up each cost several, so sleeping threads
  // would start one after another (docs/decisions/008).
  void lock_spinning(std::unique_lock<std::mutex>& lk) {
    for (int tries = 0; !lk.try_lock(); ++tries) {
      if (tries >= 64) {
        lk.lock();
        return;
      }
      std::this_thread::yield();
    }
  }
  void publish(int workers, const std::function<void(int)>* f, unsigned hot_us) {
    {
      std::unique_lock<std::mutex> lk(mu_, std::defer_lock);
      lock_spinning(lk);
      job_ = f;
      job_hot_us_ = hot_us;
      active_ = workers;
      open_ = true;
      ++gen_;
      agen_.store(gen_, std::memory_order_release);
    }
    cv_.notify_all();
  }
  // One idle step, if any. The count is raised before the step is looked up again (both
  // sequentially consistent, as set_idle's store and load): set_idle sees every thread that
  // found the step.
  void idle_step(int index) {
    if (!idle_.load(std::memory_order_relaxed)) return;
    idle_busy_.fetch_add(1);
    if (const IdleStep* step = idle_.load()) (*step)(index);
    idle_busy_.fetch_sub(1);
  }
  void stop_all() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    halt_.store(true);  // a spinning thread stops spinning
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    halt_.store(false);
  }
  void loop(int index, uint64_t seen) {
    if (on_start_) on_start_();
    unsigned hot_us = 0;  // the last job's
    for (;;) {
      // Spin a little before sleeping: frames and pieces follow each other within microseconds.
      const auto t0 = std::chrono::steady_clock::now();
      const auto window = std::chrono::microseconds(
          std::max(hot_us, spin_us_.load(std::memory_order_relaxed)));
      while (agen_.load(std::memory_order_acquire) == seen && !halt_.load(std::memory_order_relaxed) &&
             std::chrono::steady_clock::now() - t0 < window) {
        idle_step(index);
        std::this_thread::yield();  // also after a step: a thread reading ahead lets others run
      }
      std::unique_lock<std::mutex> lk(mu_, std::defer_lock);
      lock_spinning(lk);
      cv_.wait(lk, [&] { return stop_ || gen_ != seen; });
      if (stop_) return;
      seen = gen_;
      if (!open_ || index >= active_) {  // closed before this thread came, or not asked
        hot_us = 0;
        continue;
      }
      const std::function<void(int)>* f = job_;
      hot_us = job_hot_us_;
      running_.fetch_add(1, std::memory_order_relaxed);
      lk.unlock();
      (*f)(index);
      lock_spinning(lk);
      if (running_.fetch_sub(1, std::memory_order_release) == 1) done_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_, done_;
  const std::function<void(int)>* job_ = nullptr;
  std::function<void(int)> posted_;  // a job of post(), kept while it runs
  std::function<void()> on_start_;
  int active_ = 0;
  std::atomic<int> running_{0};  // changed under mu_; wait() also watches it without
  bool open_ = false;  // the last job may still be started
  unsigned job_hot_us_ = 0;
  uint64_t gen_ = 0;
  std::atomic<uint64_t> agen_{0};
  std::atomic<unsigned> spin_us_{300};
  std::atomic<bool> halt_{false};
  std::unique_ptr<const IdleStep> idle_owned_;  // set_idle's step (its owner's)
  std::atomic<const IdleStep*> idle_{nullptr};  // the same, as the threads see it
  std::atomic<int> idle_busy_{0};               // threads inside an idle step
  bool stop_ = false;
};

}  // namespace parvis::cuda::upload
