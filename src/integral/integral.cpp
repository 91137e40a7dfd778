// The integral image's shared host code: output types, the memory check, the --random
// noise and the checksum. The integral itself is in the version files (seq.cpp, ...).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sys/mman.h>
#include <unistd.h>

#include "integral/checksum.hpp"
#include "integral/integral.hpp"

namespace parvis::integral {

namespace {

// The largest element of the integral: every pixel at its maximum.
uint64_t max_element(int width, int height, bool squared) {
  return uint64_t(width) * uint64_t(height) * (squared ? 255u * 255u : 255u);
}

}  // namespace

Type resolve_type(Type requested, int width, int height, bool squared) {
  if (requested != Type::Auto) return requested;
  if (squared) return Type::U64;
  return max_element(width, height, false) < (uint64_t(1) << 32) ? Type::U32 : Type::U64;
}

const char* type_name(Type t) {
  switch (t) {
    case Type::Auto: return "auto";
    case Type::U32: return "u32";
    case Type::U64: return "u64";
    case Type::F64: return "f64";
  }
  return "?";
}

Status parse_type(const std::string& name, Type* out) {
  if (name == "auto") *out = Type::Auto;
  else if (name == "u32") *out = Type::U32;
  else if (name == "u64") *out = Type::U64;
  else if (name == "f64") *out = Type::F64;
  else return Status::usage("unknown type '" + name + "' (auto, u32, u64, f64)");
  return Status::Ok();
}

size_t type_size(Type t) {
  switch (t) {
    case Type::U32: return 4;
    case Type::U64: case Type::F64: return 8;
    case Type::Auto: return 0;
  }
  return 0;
}

Status check_type(Type t, int width, int height, bool squared) {
  // width * height <= 2^31 (an image's limit), so max <= 2^47: u64 and f64 are exact.
  const uint64_t max = max_element(width, height, squared);
  if (t == Type::U32 && max >= (uint64_t(1) << 32))
    return Status::bad_input("u32 cannot hold the " + std::string(squared ? "squared " : "") +
                             "integral of a " + std::to_string(width) + "x" +
                             std::to_string(height) + " image (up to " + std::to_string(max) +
                             " >= 2^32); use --type u64 or auto");
  if (t == Type::Auto) return Status::bad_input("integral type is not resolved");
  return Status::Ok();
}

Status check_memory(uint64_t bytes, const std::string& what) {
  // MemAvailable (Linux) is what can be had without swapping; elsewhere, physical memory.
  uint64_t available = 0;
  if (FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kb;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "MemAvailable: %llu kB", &kb) == 1) available = uint64_t(kb) * 1024;
    std::fclose(f);
  }
  if (available == 0) {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) available = uint64_t(pages) * uint64_t(page);
  }
  if (available == 0 || bytes <= available) return Status::Ok();  // unknown: let it try
  const uint64_t mib = 1 << 20;
  return Status::bad_input(what + " needs " + std::to_string(bytes / mib) + " MiB, only " +
                           std::to_string(available / mib) + " MiB of memory is available");
}

namespace {
constexpr size_t kHuge = size_t(2) << 20;
}  // namespace

void* big_alloc(size_t bytes) {
  if (bytes < 2 * kHuge) {
    if (void* p = std::malloc(bytes ? bytes : 1)) return p;
    throw std::bad_alloc();
  }
  void* p = std::aligned_alloc(kHuge, (bytes + kHuge - 1) / kHuge * kHuge);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  madvise(p, (bytes + kHuge - 1) / kHuge * kHuge, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
  return p;
}

void big_free(void* p, size_t) { std::free(p); }

Status random_image(int width, int height, uint64_t seed, Image* out) {
  Image img;
  PARVIS_TRY(image_alloc(width, height, 1, &img));
  uint64_t bits = 0;
  size_t i = 0;
  for (int y = 0; y < height; ++y) {
    uint8_t* row = img.row(y);
    for (int x = 0; x < width; ++x, ++i) {
      if (i % 8 == 0) bits = noise_word(seed, i / 8 + 1);  // one 64-bit number gives 8 pixels
      row[x] = uint8_t(bits >> (8 * (i % 8)));
    }
  }
  *out = std::move(img);
  return Status::Ok();
}

Status allocate(Type type, int width, int height, Result* r) {
  const size_t n = size_t(width) * size_t(height);
  r->type = type;
  r->width = width;
  r->height = height;
  r->kept = true;
  try {
    if (type == Type::U32) r->u32.resize(n);
    if (type == Type::U64) r->u64.resize(n);
    if (type == Type::F64) r->f64.resize(n);
  } catch (const std::bad_alloc&) {
    return Status::runtime("out of memory for a " + std::to_string(width) + "x" +
                           std::to_string(height) + " integral image");
  }
  return Status::Ok();
}

Status host_compute_source(const Source& src, Type type, bool squared, bool keep, Result* out) {
  Image noise;
  const Image* img = src.image;
  const int w = img ? img->width : src.width, h = img ? img->height : src.height;
  type = resolve_type(type, w, h, squared);
  PARVIS_TRY(check_type(type, w, h, squared));
  const uint64_t pixels = uint64_t(w) * uint64_t(h);
  PARVIS_TRY(check_memory(pixels * type_size(type) + (img ? 0 : pixels),
                          "the integral image of " + std::to_string(w) + "x" + std::to_string(h) +
                              " as " + type_name(type)));
  if (!img) {
    PARVIS_TRY(random_image(w, h, src.seed, &noise));
    img = &noise;
  }
  Result r;
  PARVIS_TRY(compute(*img, type, squared, &r));
  r.last = element(r, size_t(pixels - 1));
  r.sum = checksum(r);
  if (!keep) {
    r.kept = false;
    Buffer<uint32_t>().swap(r.u32);
    Buffer<uint64_t>().swap(r.u64);
    Buffer<double>().swap(r.f64);
  }
  *out = std::move(r);
  return Status::Ok();
}

uint64_t element(const Result& r, size_t i) {
  switch (r.type) {
    case Type::U32: return r.u32[i];
    case Type::U64: return r.u64[i];
    case Type::F64: return uint64_t(r.f64[i]);
    case Type::Auto: break;
  }
  return 0;
}

uint64_t checksum(const Result& r) {
  uint64_t h = 0;
  const size_t n = size_t(r.width) * size_t(r.height);
  for (size_t i = 0; i < n; ++i) h += checksum_term(i, element(r, i));
  return h;
}

}  // namespace parvis::integral
