// Linked into versions that have no template matching: every entry point says so (exit 2).
#include "match/match.hpp"

namespace parvis::match {

struct Matcher {};
void MatcherDeleter::operator()(Matcher* m) const { delete m; }

Status matcher_create(const Image&, const Params&, MatcherPtr*) {
  return Status::not_implemented("match");
}
Status matcher_run(Matcher*, const Image&, Result*) { return Status::not_implemented("match"); }

}  // namespace parvis::match
