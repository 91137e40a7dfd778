// Linked into versions that have no convolution filter: the entry point says so (exit 2).
#include "filter/filter.hpp"

namespace parvis::filter {
Status apply(const Image&, const Kernel&, Border, Image*, Timings*) {
  return Status::not_implemented("filter");
}
}  // namespace parvis::filter
