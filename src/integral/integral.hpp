// Integral image (seed 004): inclusive prefix sums over rows and columns, same size as
// the input (the seeds' layout). Exact.
#pragma once
#include <cstdint>
#include <vector>

#include "common/cli.hpp"
#include "common/image.hpp"
#include "common/status.hpp"

namespace parvis::integral {

enum class Type { Auto, U32, U64, F64 };

// Auto: u32 while W*H*255 < 2^32 (W*H*255^2 for --squared, which is always u64), else u64.
Type resolve_type(Type requested, int width, int height, bool squared);
const char* type_name(Type t);

struct Result {
  Type type = Type::U32;
  int width = 0, height = 0;
  std::vector<uint32_t> u32;  // the one matching `type` is filled
  std::vector<uint64_t> u64;
  std::vector<double> f64;
  Timings timings;
};

// `gray` has 1 channel. `squared`: integral of px^2. Defined by each version.
Status compute(const Image& gray, Type type, bool squared, Result* out);

}  // namespace parvis::integral
