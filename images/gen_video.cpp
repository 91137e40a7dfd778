// parvis-gen's videos: the Y4M writer and the production line clip.

#include "gen.hpp"

namespace parvis::gen {

std::string y4m_header_of(const Y4mSpec& spec, int w, int h) {
  std::string t = "YUV4MPEG2 W" + std::to_string(w) + " H" + std::to_string(h) +
                  " F25:1 Ip A1:1 C" + spec.colourspace;
  if (spec.range_tag) t += spec.range == video::YuvRange::Full ? " XCOLORRANGE=FULL" : " XCOLORRANGE=LIMITED";
  return t + "\n";
}

// RGB -> Y'CbCr with the video path's own forward formula (video/yuv.hpp), chroma from the
// rounded mean RGB of each sx x sy block (4:2:0 sited between the pixels, as C420jpeg says).
void append_y4m_frame(const Image& rgb, const Y4mSpec& spec, std::vector<uint8_t>* out) {
  const video::RgbToYuv k = video::rgb_to_yuv_coefficients(video::YuvMatrix::Bt601, spec.range);
  const int w = rgb.width, h = rgb.height, cw = (w + spec.sx - 1) / spec.sx, ch = (h + spec.sy - 1) / spec.sy;
  static const char kFrame[] = "FRAME\n";
  out->insert(out->end(), kFrame, kFrame + 6);
  uint8_t y8, u8, v8;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const uint8_t* p = rgb.at(x, y);
      video::rgb_to_yuv(k, p[0], p[1], p[2], &y8, &u8, &v8);
      out->push_back(y8);
    }
  if (spec.mono) return;
  std::vector<uint8_t> cb, cr;
  for (int y = 0; y < ch; ++y)
    for (int x = 0; x < cw; ++x) {
      int sr = 0, sg = 0, sb = 0, n = 0;
      for (int dy = 0; dy < spec.sy; ++dy)
        for (int dx = 0; dx < spec.sx; ++dx) {
          const int px = spec.sx * x + dx, py = spec.sy * y + dy;
          if (px >= w || py >= h) continue;
          const uint8_t* p = rgb.at(px, py);
          sr += p[0], sg += p[1], sb += p[2], ++n;
        }
      video::rgb_to_yuv(k, (sr + n / 2) / n, (sg + n / 2) / n, (sb + n / 2) / n, &y8, &u8, &v8);
      cb.push_back(u8);
      cr.push_back(v8);
    }
  out->insert(out->end(), cb.begin(), cb.end());
  out->insert(out->end(), cr.begin(), cr.end());
}

// Frame f of the clip (a one-element vector); `truth` receives its capsules in view, `tpl`
// (frame 0 only) the template.
std::vector<Image> render_line_frame(const LineClip& clip, int f, Image* tpl, std::vector<LineTruth>* truth) {
  CapsuleScene sc;
  sc.width = clip.width, sc.height = clip.height, sc.scale = clip.scale, sc.seed = clip.seed;
  sc.lane_pitch = clip.pitch;
  sc.belt_shift = f * clip.speed;
  sc.frame = f;
  std::vector<Capsule> capsules;
  std::vector<Image> frame;
  frame.push_back(render_capsules(sc, &capsules));
  const CapsuleLayout L = capsule_layout(sc);
  for (const Capsule& c : capsules) {
    const Rect r = template_rect(L, c);
    if (!inside(frame[0], r)) continue;
    if (truth) truth->push_back({f, r, c.filled});
    if (f == 0 && tpl && c.row == L.full_row && c.col == L.full_col) *tpl = crop(frame[0], r);
  }
  if (f == 0 && tpl && tpl->empty())
    die(Status::bad_input("a " + std::to_string(clip.width) + "x" + std::to_string(clip.height) +
                          " production line has no room for a template in frame 0"));
  return frame;
}

std::vector<Image> render_line(const LineClip& clip, Image* tpl, std::vector<LineTruth>* truth) {
  std::vector<Image> frames;
  for (int f = 0; f < clip.frames; ++f) frames.push_back(render_line_frame(clip, f, tpl, truth)[0]);
  return frames;
}

std::vector<uint8_t> line_y4m(const std::vector<Image>& frames, const Y4mSpec& spec) {
  std::vector<uint8_t> bytes;
  const std::string header = y4m_header_of(spec, frames.at(0).width, frames.at(0).height);
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (const Image& f : frames) append_y4m_frame(f, spec, &bytes);
  return bytes;
}

std::string truth_csv(const std::vector<LineTruth>& truth) {
  std::string t = "frame,x,y,full\n";
  for (const LineTruth& r : truth)
    t += std::to_string(r.frame) + "," + std::to_string(r.at.x) + "," + std::to_string(r.at.y) + "," +
         (r.full ? "1" : "0") + "\n";
  return t;
}

}  // namespace parvis::gen
