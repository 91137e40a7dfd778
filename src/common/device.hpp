// What each version computes on, defined once per kind of version (src/cpu/device.cpp,
// cuda/device.cu).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace parvis {

// What this executable computes on: "cpu" or the CUDA device's name. A CUDA version
// with no usable device returns a runtime error (exit 3). Defined per kind of version.
Status device_describe(std::string* name);

// Every 24-bit colour through gray_of (common/gray.hpp) where this version computes: on the
// host for CPU versions, in a kernel on the GPU for CUDA versions. out[i] is the grey of
// R = i >> 16, G = (i >> 8) & 255, B = i & 255. For the selftest's all-colours check.
Status gray_all_colours(std::vector<uint8_t>* out);

}  // namespace parvis
