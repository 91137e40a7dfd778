// PNG/JPEG/TGA through Sean Barrett's stb_image and stb_image_write, when the build found
// them (PARVIS_HAVE_STB); otherwise every entry point says how to get them. Both headers
// are used on memory only: files are read by read_file and written by write_file_atomic.
#include <climits>
#include <cstring>
#include <string>

#include "codecs.hpp"

#if PARVIS_HAVE_STB
// Only the formats parvis documents, so the decoder surface stays small.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_STDIO
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_TGA
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#endif
// Two harmless undefined behaviours of stb 2.27 that UBSan (which parvis's sanitizer and fuzz
// builds make fatal) would stop at; each check is switched off for those stb functions
// only, ASan and every other check still apply:
//  - stb_image calls memcpy(NULL, p, 0) when a PNG's first IDAT chunk is empty (a legal
//    file). clang only: GCC cannot switch it off from here (see tests/fuzz/README.md);
//  - stb_image_write's JPEG bit writer shifts a negative int left (defined since C++20).
// clang takes the attribute for every function of a header; GCC has no such pragma, but
// takes it on the bit writer's definition, through its name (the attribute GCC then
// ignores at the call sites, all plain statements, is what -Wattributes would warn about).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((no_sanitize("nonnull-attribute"))), apply_to = function)
#endif
#include "stb_image.h"
#if defined(__clang__)
#pragma clang attribute pop
#pragma clang attribute push(__attribute__((no_sanitize("shift-base"))), apply_to = function)
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wattributes"
#define stbiw__jpg_writeBits __attribute__((no_sanitize("shift-base"))) stbiw__jpg_write_bits_unchecked
#endif
#include "stb_image_write.h"
#if defined(__clang__)
#pragma clang attribute pop
#elif defined(__GNUC__)
#undef stbiw__jpg_writeBits
#endif
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#endif

namespace parvis {

#if PARVIS_HAVE_STB
bool image_have_stb() { return true; }
#else
bool image_have_stb() { return false; }
#endif

namespace codec {

#if PARVIS_HAVE_STB

namespace {

// stb takes the buffer length as an int.
Status check_stb_length(size_t size, const char* format) {
  if (size > size_t(INT_MAX))
    return Status::bad_input(std::string(format) + " file is too large to decode (over 2 GiB)");
  return Status::Ok();
}

// stb_image_write hands the encoded bytes to a callback; collect them in a vector.
struct ByteSink {
  std::vector<uint8_t>* out;
  bool failed = false;
};
void append_to_sink(void* context, void* data, int size) {
  ByteSink* sink = static_cast<ByteSink*>(context);
  try {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    sink->out->insert(sink->out->end(), p, p + size);
  } catch (const std::bad_alloc&) {
    sink->failed = true;
  }
}

// stb's failure reason, fit for a one-line message: it can embed raw file bytes (an
// unknown PNG chunk's type), so anything unprintable becomes '?'.
std::string stb_reason() {
  std::string reason = stbi_failure_reason() ? stbi_failure_reason() : "unknown error";
  for (char& c : reason)
    if (c < 0x20 || c > 0x7e) c = '?';
  return reason;
}

// Walks a PNG's chunks up to IEND, checking that each lies inside the file. stb would
// otherwise allocate what an IDAT chunk declares (up to 2 GiB) before finding it missing.
Status check_png_chunks(const uint8_t* data, size_t size) {
  size_t at = 8;  // after the signature
  for (;;) {
    if (size - at < 12) return Status::bad_input("truncated PNG (no IEND chunk)");
    const uint32_t length = uint32_t(data[at]) << 24 | uint32_t(data[at + 1]) << 16 |
                            uint32_t(data[at + 2]) << 8 | uint32_t(data[at + 3]);
    if (length > size - at - 12)
      return Status::bad_input("truncated PNG: a chunk of " + std::to_string(length) +
                               " bytes runs past the end of the file");
    if (std::memcmp(data + at + 4, "IEND", 4) == 0) return Status::Ok();
    at += 12 + size_t(length);
  }
}

bool is_png(const uint8_t* data, size_t size) {
  static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  return size >= 8 && std::memcmp(data, kSignature, 8) == 0;
}

}  // namespace

Status stb_info(const uint8_t* data, size_t size, const char* format, ImageInfo* info) {
  PARVIS_TRY(check_stb_length(size, format));
  // stb 2.27 trusts a few declared lengths too much; the file's structure is checked first.
  size_t after_soi = 0;
  if (jpeg_start(data, size, &after_soi)) PARVIS_TRY(jpeg_check(data, size));
  if (is_png(data, size)) {
    PARVIS_TRY(png_header_check(data, size, nullptr));
    PARVIS_TRY(check_png_chunks(data, size));
  }
  int width = 0, height = 0, file_channels = 0;
  if (!stbi_info_from_memory(data, int(size), &width, &height, &file_channels))
    return Status::bad_input(std::string("cannot read the ") + format + " header: " + stb_reason());
  // Grey and grey+alpha come back grey; RGB and RGBA come back RGB (alpha dropped).
  const int channels = file_channels <= 2 ? 1 : 3;
  PARVIS_TRY(check_input_size(width, height, channels));
  *info = ImageInfo{width, height, channels};
  return Status::Ok();
}

Status stb_decode(const uint8_t* data, size_t size, const char* format, Image* out) {
  // The declared size is checked before stb allocates anything for the pixels.
  ImageInfo info;
  PARVIS_TRY(stb_info(data, size, format, &info));
  int width = 0, height = 0, file_channels = 0;
  uint8_t* pixels =
      stbi_load_from_memory(data, int(size), &width, &height, &file_channels, info.channels);
  if (!pixels)
    return Status::bad_input(std::string(format) + " decoding failed: " + stb_reason());
  Image img;
  Status s = Status::Ok();
  if (width != info.width || height != info.height)
    s = Status::bad_input(std::string(format) + " header and image disagree on the size");
  if (s.ok()) s = image_alloc(width, height, info.channels, &img);
  if (s.ok()) std::memcpy(img.data(), pixels, img.pixels.size());  // both tightly packed
  stbi_image_free(pixels);
  if (!s.ok()) return s;
  *out = std::move(img);
  return Status::Ok();
}

Status stb_encode_png(const Image& img, std::vector<uint8_t>* out) {
  // stb_image_write sizes its buffers in int; keep well inside that.
  if ((uint64_t(img.width) * uint64_t(img.channels) + 1) * uint64_t(img.height) > (uint64_t(1) << 30))
    return Status::bad_input("image is too large for the PNG writer (over 1 GiB of pixels)");
  if (img.stride > size_t(INT_MAX)) return Status::bad_input("image rows are too long for the PNG writer");
  out->clear();
  ByteSink sink{out};
  if (!stbi_write_png_to_func(append_to_sink, &sink, img.width, img.height, img.channels,
                              img.data(), int(img.stride)) ||
      sink.failed)
    return Status::runtime("PNG encoding failed");
  return Status::Ok();
}

Status stb_encode_jpeg(const Image& img, int quality, std::vector<uint8_t>* out) {
  if (img.width > 65535 || img.height > 65535)
    return Status::bad_input("JPEG cannot store an image side over 65535 pixels");
  // The JPEG writer takes no stride: pack the rows first when they are padded.
  const size_t row_bytes = size_t(img.width) * size_t(img.channels);
  std::vector<uint8_t> packed;
  const uint8_t* pixels = img.data();
  if (img.stride != row_bytes) {
    packed.resize(row_bytes * size_t(img.height));
    for (int y = 0; y < img.height; ++y) std::memcpy(&packed[size_t(y) * row_bytes], img.row(y), row_bytes);
    pixels = packed.data();
  }
  out->clear();
  ByteSink sink{out};
  if (!stbi_write_jpg_to_func(append_to_sink, &sink, img.width, img.height, img.channels, pixels,
                              quality) ||
      sink.failed)
    return Status::runtime("JPEG encoding failed");
  return Status::Ok();
}

Status stb_require(const char*) { return Status::Ok(); }

#else  // no stb in this build

namespace {
Status needs_stb(const char* format) {
  return Status::bad_input(std::string(format) + " support needs stb: install libstb-dev and rebuild");
}
}  // namespace

Status stb_require(const char* format) { return needs_stb(format); }
Status stb_info(const uint8_t*, size_t, const char* format, ImageInfo*) { return needs_stb(format); }
Status stb_decode(const uint8_t*, size_t, const char* format, Image*) { return needs_stb(format); }
Status stb_encode_png(const Image&, std::vector<uint8_t>*) { return needs_stb("PNG"); }
Status stb_encode_jpeg(const Image&, int, std::vector<uint8_t>*) { return needs_stb("JPEG"); }

#endif

}  // namespace codec
}  // namespace parvis
