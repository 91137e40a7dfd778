// Linked into versions that have no colour filter: the entry point says so (exit 2).
#include "color/color.hpp"

namespace parvis::color {
Status count_in_rect(const Image&, Rect, const HsvRange&, CountResult*) {
  return Status::not_implemented("color filter");
}
}  // namespace parvis::color
