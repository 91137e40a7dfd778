// Linked into versions that have no blur-map blur: the entry point says so (exit 2).
#include "blur/blur.hpp"

namespace parvis::blur {
Status apply(const std::vector<Image>&, const Image&, const TapSets&, std::vector<Image>*,
             Timings*, Launch*) {
  return Status::not_implemented("blur");
}
}  // namespace parvis::blur
