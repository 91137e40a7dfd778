// Template-matching masks: the checks, the template's part and the direct definition
// (mask.hpp). Shared by every version.
#include "match/mask.hpp"

#include <string>

#include "match/ncc.hpp"

namespace parvis::match::mask {

Status check(const Params& params, int tw, int th) {
  const Image& m = params.mask;
  if (m.empty()) return Status::Ok();
  if (m.channels != 1)
    return Status::bad_input("the mask must be grey (1 channel), it has " + std::to_string(m.channels));
  if (m.width != tw || m.height != th)
    return Status::bad_input("the mask (" + std::to_string(m.width) + "x" + std::to_string(m.height) +
                             ") must have the template's size (" + std::to_string(tw) + "x" +
                             std::to_string(th) + ")");
  for (int y = 0; y < m.height; ++y)
    for (int x = 0; x < m.width; ++x)
      if (m.row(y)[x]) return Status::Ok();
  return Status::bad_input("the mask is all zero: no template pixel would count");
}

Image binary(const Image& mask) {
  Image b = mask;
  for (int y = 0; y < b.height; ++y)
    for (int x = 0; x < b.width; ++x) b.row(y)[x] = b.row(y)[x] ? 0xFF : 0x00;
  return b;
}

Image apply(const Image& tpl, const Image& binary_mask) {
  Image t = tpl;
  for (int y = 0; y < t.height; ++y)
    for (int x = 0; x < t.width; ++x) t.row(y)[x] &= binary_mask.row(y)[x];
  return t;
}

TemplateSums template_sums(const Image& tpl, const Image& mask) {
  TemplateSums t;
  for (int j = 0; j < tpl.height; ++j)
    for (int i = 0; i < tpl.width; ++i)
      if (mask.row(j)[i]) {
        const uint64_t v = tpl.row(j)[i];
        t.n += 1, t.st += v, t.stt += v * v;
      }
  return t;
}

uint64_t rank_at(const Image& src, const Image& tpl, const Image& mask, Metric metric, int x, int y) {
  if (metric == Metric::SSD) return cost_at<Metric::SSD>(src, tpl, mask, x, y);
  if (metric == Metric::SAD) return cost_at<Metric::SAD>(src, tpl, mask, x, y);
  const TemplateSums ts = template_sums(tpl, mask);
  uint64_t si, sii, sit;
  sums_at(src, tpl, mask, x, y, &si, &sii, &sit);
  return ncc::key_of(ncc::score(metric == Metric::NCC, ts.n, si, sii, sit, ts.st, ts.stt));
}

void normed_row(Metric metric, const TemplateSums& ts, const uint64_t* si, const uint64_t* sii,
                int map_width, uint64_t* scores, double* map_row) {
  const bool coeff = metric == Metric::NCC;
  for (int x = 0; x < map_width; ++x) {
    const uint64_t sit = (sii[x] + ts.stt - scores[x]) / 2;  // exact: SSD = ΣI² − 2ΣI·T + ΣT²
    const double r = ncc::score(coeff, ts.n, si[x], sii[x], sit, ts.st, ts.stt);
    scores[x] = ncc::key_of(r);
    if (map_row) map_row[x] = r;
  }
}

std::vector<Run> runs_of(const Image& mask, bool counted) {
  std::vector<Run> runs;
  for (int j = 0; j < mask.height; ++j) {
    const uint8_t* r = mask.row(j);
    for (int i = 0; i < mask.width;) {
      if ((r[i] != 0) != counted) {
        ++i;
        continue;
      }
      const int i0 = i;
      while (i < mask.width && (r[i] != 0) == counted) ++i;
      runs.push_back(Run{j, i0, i});
    }
  }
  return runs;
}

}  // namespace parvis::match::mask
