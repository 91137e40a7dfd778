// CPU versions compute on the host.
#include <thread>

#include "common/subcommands.hpp"

namespace parvis {

Status device_describe(std::string* name) {
  *name = "cpu (" + std::to_string(std::thread::hardware_concurrency()) + " hardware threads)";
  return Status::Ok();
}

}  // namespace parvis
