// The host pipeline (video.hpp): frames converted to grey (and RGB where asked) on the reader
// thread (frame_to_rgb_gray), matched with the version's prepared matcher (match::matcher_run) and
// counted with its colour filter (color::count_in_rect), in frame order on the caller's
// thread. It serves every version: on a CUDA version matcher_run uploads the grey frame itself.
// Per frame nothing is allocated here: slots, images and the result are reused.
#include <vector>

#include "common/cli.hpp"
#include "match/match_common.hpp"
#include "video/video.hpp"

namespace parvis::video {

namespace {

class HostPipeline : public Pipeline {
 public:
  HostPipeline(const PipelineConfig& config, int tw, int th) : config_(config), tw_(tw), th_(th) {}

  Status create(const Image& gray_template) {
    return match::matcher_create(gray_template, config_.match, &matcher_);
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
  // --save-frame): the colour check needs only the matched rectangle's (submit).
  Status prepare(FrameSlot* slot) override {
    frame_to_rgb_gray(slots_.format(), slot->bytes, config_.need_host_rgb ? &slot->rgb : nullptr, &slot->gray);
    slot->have_rgb = config_.need_host_rgb;
    return Status::Ok();
  }

  Status submit(FrameSlot* slot) override {
    const double t0 = now_ms();
    FrameResult& r = pending_;
    r.index = slot->index;
    PARVIS_TRY(match::matcher_run(matcher_.get(), slot->gray, &result_));
    if (result_.best.empty()) return Status::runtime("match returned no position");
    r.best = result_.best[0];
    r.have_color = config_.color.enabled;
    if (r.have_color) {
      const Rect rect{r.best.x, r.best.y, tw_, th_};
      if (!slot->have_rgb) rect_to_rgb(slots_.format(), slot->bytes, rect, &slot->rgb);
      PARVIS_TRY(color::count_in_rect(slot->rgb, rect, config_.color.range, &count_));
      r.matching = count_.matching;
      r.total = count_.total;
      r.full = double(r.matching) / double(r.total) >= config_.color.full_ratio;
    }
    r.ms = slot->prepare_ms + (now_ms() - t0);
    have_pending_ = true;
    return Status::Ok();
  }

  Status collect(FrameResult* out) override {
    if (!have_pending_) return Status::runtime("video: collect without a submitted frame");
    *out = pending_;
    have_pending_ = false;
    return Status::Ok();
  }

  int depth() const override { return 1; }
  int template_width() const override { return tw_; }
  int template_height() const override { return th_; }

 private:
  PipelineConfig config_;
  int tw_, th_;
  match::MatcherPtr matcher_;
  HostSlots slots_;
  match::Result result_;
  color::CountResult count_;
  FrameResult pending_;
  bool have_pending_ = false;
};

}  // namespace

Status make_host_pipeline(const Image& gray_template, const PipelineConfig& config,
                          std::unique_ptr<Pipeline>* out) {
  PARVIS_TRY(match::check_template(gray_template));
  auto p = std::make_unique<HostPipeline>(config, gray_template.width, gray_template.height);
  PARVIS_TRY(p->create(gray_template));
  *out = std::move(p);
  return Status::Ok();
}

Status make_pipeline(const Image& gray_template, const PipelineConfig& config,
                     std::unique_ptr<Pipeline>* out) {
  return make_host_pipeline(gray_template, config, out);
}

}  // namespace parvis::video
