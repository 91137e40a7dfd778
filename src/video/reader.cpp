// The reader thread (reader.hpp).
#include "video/reader.hpp"

#include <exception>
#include <string>

#include "common/timing.hpp"

namespace parvis::video {

FrameReader::FrameReader(FrameSource* source, Pipeline* pipeline, int slots, int64_t first, int64_t last)
    : source_(source), pipeline_(pipeline), first_(first), last_(last), slots_(size_t(slots)),
      free_(size_t(slots)), ready_(size_t(slots)) {}

FrameReader::~FrameReader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status FrameReader::start() {
  PARVIS_TRY(pipeline_->start(source_->format(), int(slots_.size())));
  for (size_t i = 0; i < slots_.size(); ++i) {
    PARVIS_TRY(pipeline_->init_slot(int(i), &slots_[i]));
    free_[i] = int(i);
  }
  free_count_ = slots_.size();
  thread_ = std::thread([this] { run(); });
  return Status::Ok();
}

void FrameReader::run() {
  Status status;
  bool early = false;  // stopped before the end of the stream
  for (int64_t index = 0;; ++index) {
    if (last_ >= 0 && index >= last_) {
      early = true;
      break;
    }
    int slot_no;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || free_count_ > 0; });
      if (stop_) {
        early = true;
        break;
      }
      slot_no = free_[free_head_];
      free_head_ = (free_head_ + 1) % free_.size();
      --free_count_;
    }
    FrameSlot& slot = slots_[size_t(slot_no)];
    bool end = false;
    bool deliver = false;
    try {  // nothing may escape a thread (an allocation failing deep down): it becomes a Status
      status = source_->read_frame(slot.bytes, &end);
      deliver = status.ok() && !end && index >= first_;
      if (deliver) {
        slot.index = index;
        slot.have_rgb = false;
        const double t0 = now_ms();
        status = pipeline_->prepare(&slot);
        slot.prepare_ms = now_ms() - t0;
        deliver = status.ok();
      }
    } catch (const std::exception& e) {
      status = Status::runtime(std::string("reading frame ") + std::to_string(index) + ": " + e.what());
      deliver = false;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (deliver) {
        ready_[(ready_head_ + ready_count_) % ready_.size()] = slot_no;
        ++ready_count_;
      } else {  // dropped (before the range), or not read: the slot is free again
        free_[(free_head_ + free_count_) % free_.size()] = slot_no;
        ++free_count_;
      }
    }
    cv_.notify_all();
    if (!status.ok() || end) break;
  }
  Status finished;
  try {
    finished = source_->finish(early || !status.ok());
  } catch (const std::exception& e) {
    finished = Status::runtime(e.what());
  }
  if (status.ok()) status = finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    done_status_ = status;
  }
  cv_.notify_all();
}

Status FrameReader::next(FrameSlot** slot) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return ready_count_ > 0 || done_; });
  if (ready_count_ > 0) {
    *slot = &slots_[size_t(ready_[ready_head_])];
    ready_head_ = (ready_head_ + 1) % ready_.size();
    --ready_count_;
    return Status::Ok();
  }
  *slot = nullptr;
  return done_status_;
}

void FrameReader::release(FrameSlot* slot) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_[(free_head_ + free_count_) % free_.size()] = int(slot - slots_.data());
    ++free_count_;
  }
  cv_.notify_all();
}

}  // namespace parvis::video
