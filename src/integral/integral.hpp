// Integral image (seed 004): inclusive prefix sums over rows and columns, same size as
// the input (the seeds' layout). Exact.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/image.hpp"
#include "common/status.hpp"

namespace parvis::integral {

enum class Type { Auto, U32, U64, F64 };

// Auto: u32 while W*H*255 < 2^32 (W*H*255^2 for --squared, which is always u64), else u64.
Type resolve_type(Type requested, int width, int height, bool squared);
const char* type_name(Type t);
Status parse_type(const std::string& name, Type* out);  // auto, u32, u64, f64
size_t type_size(Type t);                                // bytes per element (Auto: 0)
// Bad input when `t` (resolved) cannot hold every element exactly: u32 needs
// W*H*255 (W*H*255^2 squared) < 2^32; f64 is exact below 2^53, which every image meets.
Status check_type(Type t, int width, int height, bool squared);

// Bad input (exit 2) when `bytes` more cannot fit in the memory available now
// (MemAvailable, else the physical memory); `what` says what they are for.
Status check_memory(uint64_t bytes, const std::string& what);

// Deterministic noise for --random: the same (width, height, seed) gives the same
// pixels everywhere (splitmix64, 8 pixels per number).
Status random_image(int width, int height, uint64_t seed, Image* out);

struct Result {
  Type type = Type::U32;
  int width = 0, height = 0;
  std::vector<uint32_t> u32;  // the one matching `type` is filled
  std::vector<uint64_t> u64;
  std::vector<double> f64;
  Timings timings;
};

// `gray` has 1 channel. `squared`: integral of px^2. `type` Auto is resolved here, and a
// type that cannot hold the result is refused (check_type). Defined by each version.
Status compute(const Image& gray, Type type, bool squared, Result* out);

// Element i (row-major) of the result as an integer (f64 elements are whole numbers).
uint64_t element(const Result& r, size_t i);
// FNV-1a 64 of every element as a little-endian u64, so the same numbers give the same
// checksum whatever the type.
uint64_t checksum(const Result& r);

}  // namespace parvis::integral
