// libFuzzer harness for the readers of untrusted files: image_decode (BMP, PGM/PPM, and
// PNG/JPEG/TGA through stb when built in) and npy_decode. Built by `make fuzz` with
// -fsanitize=fuzzer,address,undefined; see tests/fuzz/README.md.
//
// Beyond "no crash": a refused input must carry exit code 2 or 3 and a one-line reason, and
// an accepted image must be consistent and survive a BMP and a PGM/PPM round trip exactly.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "common/image.hpp"
#include "common/npy.hpp"
#include "image_io.hpp"

using namespace parvis;

namespace {

// Images are allowed up to 2^31 bytes; a few-byte PNG or JPEG can declare one that large,
// and decoding it would only measure the allocator and slow the search down. Such inputs
// stop after the header. 4 MiB is still more than any BMP or PGM/PPM of 64 KiB can hold.
constexpr uint64_t kFuzzMaxPixelBytes = uint64_t(4) << 20;

void require(bool condition) {
  if (!condition) __builtin_trap();
}

void require_clean_failure(const Status& s) {
  require(s.code == kExitBadInput || s.code == kExitRuntime);
  require(!s.message.empty() && s.message.find('\n') == std::string::npos);
}

void require_round_trip(const Image& img, const char* extension) {
  std::vector<uint8_t> bytes;
  require(image_encode(img, extension, &bytes).ok());
  Image again;
  require(image_decode(bytes.data(), bytes.size(), &again).ok());
  require(again.width == img.width && again.height == img.height && again.channels == img.channels);
  require(again.pixels == img.pixels);  // both tightly packed
}

void fuzz_image(const uint8_t* data, size_t size) {
  ImageInfo info;
  const Status header = image_info(data, size, &info);
  if (!header.ok()) {
    require_clean_failure(header);
  } else if (uint64_t(info.width) * uint64_t(info.height) * uint64_t(info.channels) > kFuzzMaxPixelBytes) {
    return;
  }
  Image img;
  const Status s = image_decode(data, size, &img);
  if (!s.ok()) {
    require_clean_failure(s);
    return;
  }
  // What the header said is what came out.
  require(header.ok() && info.width == img.width && info.height == img.height &&
          info.channels == img.channels);
  require(img.channels == 1 || img.channels == 3);
  require(img.stride == size_t(img.width) * size_t(img.channels));
  require(img.pixels.size() == img.stride * size_t(img.height));
  require_round_trip(img, "bmp");
  require_round_trip(img, "pnm");
}

void fuzz_npy(const uint8_t* data, size_t size) {
  NpyArray array;
  const Status s = npy_decode(data, size, &array);
  if (!s.ok()) {
    require_clean_failure(s);
    return;
  }
  require(array.bytes.size() == array.count() * dtype_size(array.dtype));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_image(data, size);
  fuzz_npy(data, size);
  return 0;
}
