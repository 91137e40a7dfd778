// Linked into versions that have no convolution filter: the entry points say so (exit 2).
#include "filter/filter.hpp"

namespace parvis::filter {
struct Filter {};
void FilterDeleter::operator()(Filter* f) const { delete f; }
std::vector<std::string> variant_names() { return {"none"}; }
Status version_create(const Kernel&, Border, int, int, int, const FilterTuning&, int, FilterPtr*) {
  return Status::not_implemented("filter");
}
Status filter_upload(Filter*, const Image&, Timings*) { return Status::not_implemented("filter"); }
Status filter_compute(Filter*, Timings*) { return Status::not_implemented("filter"); }
Status filter_download(Filter*, Image*, Timings*) { return Status::not_implemented("filter"); }
std::string filter_describe(const Filter*) { return "none"; }
FilterTuning filter_tuning(const Filter*) { return FilterTuning{}; }
}  // namespace parvis::filter
