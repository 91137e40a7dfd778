// The reader thread: reads frames from a FrameSource into a ring of slots, a few frames ahead
// of the compute, and runs the pipeline's prepare() on each (the host pipeline converts there),
// so that reading, converting and matching overlap. Nothing is allocated per frame: the slots
// and their buffers are made once.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "video/source.hpp"
#include "video/video.hpp"

namespace parvis::video {

class FrameReader {
 public:
  // Frames [first, last) of the stream (last < 0: to its end) are delivered; those before
  // `first` are read and dropped. `slots` >= pipeline.depth() + 1.
  FrameReader(FrameSource* source, Pipeline* pipeline, int slots, int64_t first, int64_t last);
  ~FrameReader();  // stops the thread (and the source, early) and joins it
  FrameReader(const FrameReader&) = delete;
  FrameReader& operator=(const FrameReader&) = delete;

  // Calls pipeline.start(format, slots) and starts the thread.
  Status start();
  // The next frame in stream order; *slot = nullptr at the end of the range. A failure to read
  // or prepare a frame comes back here, after every frame before it was delivered.
  Status next(FrameSlot** slot);
  // Gives a delivered slot back to the reader (after its frame was collected).
  void release(FrameSlot* slot);
  int slots() const { return int(slots_.size()); }

 private:
  void run();
  FrameSource* source_;
  Pipeline* pipeline_;
  int64_t first_, last_;
  std::vector<FrameSlot> slots_;
  // Two rings of slot numbers (free: to be filled; ready: filled, in order).
  std::vector<int> free_, ready_;
  size_t free_head_ = 0, free_count_ = 0, ready_head_ = 0, ready_count_ = 0;
  bool done_ = false, stop_ = false;
  Status done_status_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace parvis::video
