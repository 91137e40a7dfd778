// The host pipeline (video.hpp): frames converted to grey (and RGB where asked) on the reader
// thread (frame_to_rgb_gray), matched with the version's prepared matcher (match::matcher_run) and
// counted with its colour filter (color::count_in_rect): on the caller's thread, or with
// --jobs N on N worker threads, one matcher each, frames round-robin (frame-level parallelism:
// on 2 cores, two single-threaded FFTs side by side beat one FFT split over two threads). It
// serves every version: on a CUDA version matcher_run uploads the grey frame itself.
// Per frame nothing is allocated here: slots, images and results are reused.
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/timing.hpp"
#include "match/match_common.hpp"
#include "video/video.hpp"

namespace parvis::video {

namespace {

class HostPipeline : public Pipeline {
 public:
  HostPipeline(const PipelineConfig& config, int tw, int th) : config_(config), tw_(tw), th_(th) {}

  ~HostPipeline() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (Worker& w : workers_)
      if (w.thread.joinable()) w.thread.join();
  }

  // One matcher per job (the template prepared once for each), and a thread for each when
  // there are several.
  Status create(const Image& gray_template) {
    workers_ = std::vector<Worker>(size_t(config_.jobs < 1 ? 1 : config_.jobs));
    for (Worker& w : workers_) PARVIS_TRY(match::matcher_create(gray_template, config_.match, &w.matcher));
    if (workers_.size() > 1)
      for (Worker& w : workers_) w.thread = std::thread([this, &w] { work(&w); });
    return Status::Ok();
  }

  Status start(const FrameFormat& fmt, int slots) override {
    if (fmt.width < tw_ || fmt.height < th_)
      return Status::bad_input("the frames (" + std::to_string(fmt.width) + "x" +
                               std::to_string(fmt.height) + ") are smaller than the template (" +
                               std::to_string(tw_) + "x" + std::to_string(th_) + ")");
    slots_.start(fmt, slots);
    return Status::Ok();
  }

  // RGB images always: the colour check converts the matched rectangle into it.
  Status init_slot(int i, FrameSlot* slot) override { return slots_.init_slot(i, slot, true); }

  // The whole frame's grey; its RGB too only when someone wants it on the host (--out,
  // --save-frame): the colour check needs only the matched rectangle's (run_frame).
  Status prepare(FrameSlot* slot) override {
    frame_to_rgb_gray(slots_.format(), slot->bytes, config_.need_host_rgb ? &slot->rgb : nullptr, &slot->gray);
    slot->have_rgb = config_.need_host_rgb;
    return Status::Ok();
  }

  // Frames go round-robin: frame n to worker n mod jobs, which is free, since at most `jobs`
  // frames are in flight and they are collected in order.
  Status submit(FrameSlot* slot) override {
    Worker& w = workers_[size_t(submitted_++ % int64_t(workers_.size()))];
    if (workers_.size() == 1) {
      w.status = run_frame(&w, slot);
      w.done = true;
      return Status::Ok();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      w.slot = slot;
      w.done = false;
    }
    cv_.notify_all();
    return Status::Ok();
  }

  Status collect(FrameResult* out) override {
    Worker& w = workers_[size_t(collected_++ % int64_t(workers_.size()))];
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return w.done; });
    w.done = false;
    w.slot = nullptr;
    *out = w.out;
    return w.status;
  }

  int depth() const override { return int(workers_.size()); }
  int template_width() const override { return tw_; }
  int template_height() const override { return th_; }

 private:
  struct Worker {
    match::MatcherPtr matcher;
    match::Result result;
    color::CountResult count;
    FrameSlot* slot = nullptr;  // submitted, not yet collected
    bool done = false;          // out and status hold slot's result
    FrameResult out;
    Status status;
    std::thread thread;
  };

  void work(Worker* w) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || (w->slot && !w->done); });
      if (stop_) return;
      FrameSlot* slot = w->slot;
      lock.unlock();
      Status s;
      try {  // nothing may escape a thread: an exception becomes the frame's Status
        s = run_frame(w, slot);
      } catch (const std::exception& e) {
        s = Status::runtime(std::string("frame ") + std::to_string(slot->index) + ": " + e.what());
      }
      lock.lock();
      w->status = s;
      w->done = true;
      cv_.notify_all();
    }
  }

  // Match, then the colour check on each matched rectangle.
  Status run_frame(Worker* w, FrameSlot* slot) {
    const double t0 = now_ms();
    FrameResult& r = w->out;
    r.index = slot->index;
    PARVIS_TRY(match::matcher_run(w->matcher.get(), slot->gray, &w->result));
    PARVIS_TRY(frame_matches(config_.match, w->result, &r));
    r.have_color = config_.color.enabled;
    if (r.have_color)
      for (FrameMatch& fm : r.matches) {
        const Rect rect{fm.at.x, fm.at.y, tw_, th_};
        if (!slot->have_rgb) rect_to_rgb(slots_.format(), slot->bytes, rect, &slot->rgb);
        PARVIS_TRY(color::count_in_rect(slot->rgb, rect, config_.color.range, &w->count));
        fm.matching = w->count.matching;
        fm.total = w->count.total;
        set_verdict(config_.color, &fm);
      }
    r.ms = slot->prepare_ms + (now_ms() - t0);
    return Status::Ok();
  }

  PipelineConfig config_;
  int tw_, th_;
  HostSlots slots_;
  std::vector<Worker> workers_;
  int64_t submitted_ = 0, collected_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace

Status frame_matches(const match::Params& params, const match::Result& res, FrameResult* out) {
  if (res.best.empty() && !params.selection.active()) return Status::runtime("match returned no position");
  out->matches.resize(res.best.size());  // the memory stays from frame to frame
  for (size_t i = 0; i < res.best.size(); ++i) out->matches[i] = FrameMatch{res.best[i]};
  return Status::Ok();
}

Status make_host_pipeline(const Image& gray_template, const PipelineConfig& config,
                          std::unique_ptr<Pipeline>* out) {
  PARVIS_TRY(match::check_template(gray_template));
  auto p = std::make_unique<HostPipeline>(config, gray_template.width, gray_template.height);
  PARVIS_TRY(p->create(gray_template));
  *out = std::move(p);
  return Status::Ok();
}

}  // namespace parvis::video
