// Integral image (seed 004): inclusive prefix sums over rows and columns, same size as
// the input (the seeds' layout). Exact.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/timing.hpp"
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

// Large result buffers: 2 MiB-aligned and, on Linux, marked for transparent huge pages, so that
// first touching 800 MB costs ~400 page faults instead of ~200000 (they dominated the CPU
// versions' time at 10000^2 with 4 KiB pages). Small ones come from malloc.
void* big_alloc(size_t bytes);
void big_free(void* p, size_t bytes);

// An allocator that leaves new elements uninitialised: resize() does not write the gigabytes
// that the integral overwrites anyway, so the first touch of each page is the version's own
// (in parallel, on omp).
template <typename T>
struct NoInit : std::allocator<T> {
  template <typename U> struct rebind { using other = NoInit<U>; };
  NoInit() = default;
  template <typename U> NoInit(const NoInit<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(big_alloc(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { big_free(p, n * sizeof(T)); }
  template <typename U> void construct(U* p) { ::new (static_cast<void*>(p)) U; }
  template <typename U, typename... A> void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
template <typename T>
using Buffer = std::vector<T, NoInit<T>>;

struct Result {
  Type type = Type::U32;
  int width = 0, height = 0;
  bool kept = true;     // false: the elements were not kept (compute_source with keep false)
  Buffer<uint32_t> u32;  // the one matching `type` is filled (when kept)
  Buffer<uint64_t> u64;
  Buffer<double> f64;
  uint64_t last = 0;  // the last element (the sum of all pixels) and checksum(): filled by
  uint64_t sum = 0;   // compute_source, whether or not the elements are kept
  Timings timings;    // compute_ms: the integral alone (not the noise, the checksum, copies)
  std::string explain;  // the CUDA versions: the kernel and its tuning (--explain); CPU: empty
};

// `gray` has 1 channel. `squared`: integral of px^2. `type` Auto is resolved here, and a
// type that cannot hold the result is refused (check_type). Defined by each version.
Status compute(const Image& gray, Type type, bool squared, Result* out);

// What to integrate: an image (grey, 1 channel) or --random noise made where the version
// computes (a CUDA version makes it on the device, with random_image's values).
struct Source {
  const Image* image = nullptr;  // or, when null:
  int width = 0, height = 0;
  uint64_t seed = 1;
  // CUDA versions, one band: the band computed `repeat` times back to back on the same buffers
  // and timings.compute_ms their mean (the bench's prepared loop: no allocation, the GPU kept
  // busy between runs). The result is the same. CPU versions ignore it.
  int repeat = 1;
};
// The integral of `src` with `last` and `sum` filled; the elements are kept in `out` only when
// `keep` (a CUDA version then leaves the result on the device and sums it there). Checks the
// host memory it needs. Defined by each version (CPU versions: host_compute_source).
Status compute_source(const Source& src, Type type, bool squared, bool keep, Result* out);
// The CPU versions' compute_source: the noise on the host, compute(), the checksum.
Status host_compute_source(const Source& src, Type type, bool squared, bool keep, Result* out);

// Element i (row-major) of the result as an integer (f64 elements are whole numbers).
uint64_t element(const Result& r, size_t i);
// The checksum of every element as an integer: sum over i of checksum_term(i, element i),
// wrapping (checksum.hpp). Order-free, so it is computed in parallel and on the device; the
// same numbers give the same checksum whatever the type.
uint64_t checksum(const Result& r);
// Sizes r's elements of `type` (resolved) for width x height, uninitialised; a buffer that
// already has that size is reused as it is (no new pages to fault in: callers that integrate
// many images of one size pass the same Result).
Status allocate(Type type, int width, int height, Result* r);

// The CPU versions' compute(): checks the input and the type, sizes *out (reusing its buffer),
// and runs `integrate(buffer)` (a generic callable taking the Buffer<T>& of the type), timed.
template <class F>
Status host_compute(const Image& gray, Type type, bool squared, Result* out, F integrate) {
  if (gray.channels != 1) return Status::bad_input("the integral image needs a grey input");
  type = resolve_type(type, gray.width, gray.height, squared);
  PARVIS_TRY(check_type(type, gray.width, gray.height, squared));
  PARVIS_TRY(allocate(type, gray.width, gray.height, out));
  const double t0 = now_ms();
  if (type == Type::U32) integrate(out->u32);
  if (type == Type::U64) integrate(out->u64);
  if (type == Type::F64) integrate(out->f64);
  out->timings = Timings();
  out->timings.compute_ms = now_ms() - t0;
  return Status::Ok();
}

}  // namespace parvis::integral
