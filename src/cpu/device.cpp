// CPU versions compute on the host.
#include <thread>

#include "common/gray.hpp"
#include "common/device.hpp"

namespace parvis {

Status device_describe(std::string* name) {
  *name = "cpu (" + std::to_string(std::thread::hardware_concurrency()) + " hardware threads)";
  return Status::Ok();
}

Status gray_all_colours(std::vector<uint8_t>* out) {
  out->resize(size_t(1) << 24);
  for (uint32_t i = 0; i < (1u << 24); ++i) (*out)[i] = gray_of(i >> 16, (i >> 8) & 255, i & 255);
  return Status::Ok();
}

}  // namespace parvis
