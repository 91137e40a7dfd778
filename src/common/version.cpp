// Compiled once per version with -DPARVIS_VERSION_NAME="<version>" (see Makefile).
#include "common/status.hpp"

#ifndef PARVIS_VERSION_NAME
#error "PARVIS_VERSION_NAME must be defined by the build"
#endif

namespace parvis {
const char* const kVersionName = PARVIS_VERSION_NAME;

Status Status::not_implemented(const char* op) {
  return bad_input(std::string(op) + " is not implemented in " + kVersionName);
}
}  // namespace parvis
