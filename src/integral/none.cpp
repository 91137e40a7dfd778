// Linked into versions that have no integral image: the entry point says so (exit 2).
#include "integral/integral.hpp"

namespace parvis::integral {
Status compute(const Image&, Type, bool, Result*) { return Status::not_implemented("integral"); }
Status compute_source(const Source&, Type, bool, bool, Result*) {
  return Status::not_implemented("integral");
}
}  // namespace parvis::integral
