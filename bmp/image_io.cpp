// The image layer's public entry points: pick a codec by the file's magic bytes (reading)
// or by the extension (writing), and go through read_file / write_file_atomic.
#include "image_io.hpp"

#include <algorithm>
#include <cctype>
#include <new>

#include "codecs.hpp"
#include "common/output.hpp"

namespace parvis {
namespace {

enum class Format { Bmp, Pnm, Png, Jpeg, Unknown };

Format sniff(const uint8_t* data, size_t size) {
  static const uint8_t kPngMagic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (size >= 2 && data[0] == 'B' && data[1] == 'M') return Format::Bmp;
  if (size >= 2 && data[0] == 'P' && data[1] >= '1' && data[1] <= '7') return Format::Pnm;
  if (size >= 8 && std::equal(kPngMagic, kPngMagic + 8, data)) return Format::Png;
  if (size >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff) return Format::Jpeg;
  return Format::Unknown;
}

// Reads the header only (img == nullptr) or the whole image: one dispatch for both.
Status read_any(const uint8_t* data, size_t size, ImageInfo* info, Image* img) {
  if (size == 0) return Status::bad_input("empty file");
  switch (sniff(data, size)) {
    case Format::Bmp:
      return img ? codec::bmp_decode(data, size, img) : codec::bmp_info(data, size, info);
    case Format::Pnm:
      return img ? codec::pnm_decode(data, size, img) : codec::pnm_info(data, size, info);
    case Format::Png:
      return img ? codec::stb_decode(data, size, "PNG", img) : codec::stb_info(data, size, "PNG", info);
    case Format::Jpeg:
      return img ? codec::stb_decode(data, size, "JPEG", img) : codec::stb_info(data, size, "JPEG", info);
    case Format::Unknown:
      break;
  }
  // TGA has no magic number: it is whatever stb's TGA header check accepts.
  ImageInfo tga;
  if (image_have_stb() && codec::stb_info(data, size, "TGA", &tga).ok()) {
    if (img) return codec::stb_decode(data, size, "TGA", img);
    *info = tga;
    return Status::Ok();
  }
  return Status::bad_input(image_have_stb()
                               ? "unknown image format (not BMP, PGM/PPM, PNG, JPEG or TGA)"
                               : "unknown image format (not BMP or PGM/PPM; this build has no "
                                 "PNG/JPEG/TGA support)");
}

enum class Writer { Bmp, Pgm, Ppm, Pnm, Png, Jpeg };

Status writer_for(std::string extension, Writer* writer) {
  if (!extension.empty() && extension[0] == '.') extension.erase(0, 1);
  for (char& c : extension) c = char(std::tolower(static_cast<unsigned char>(c)));
  static const struct {
    const char* extension;
    Writer writer;
  } kWriters[] = {{"bmp", Writer::Bmp}, {"pgm", Writer::Pgm}, {"ppm", Writer::Ppm}, {"pnm", Writer::Pnm},
                  {"png", Writer::Png}, {"jpg", Writer::Jpeg}, {"jpeg", Writer::Jpeg}};
  for (const auto& w : kWriters) {
    if (extension == w.extension) {
      *writer = w.writer;
      return Status::Ok();
    }
  }
  const std::string supported =
      image_have_stb() ? "supported: .bmp, .pgm, .ppm, .pnm, .png, .jpg, .jpeg"
                       : "supported: .bmp, .pgm, .ppm, .pnm; .png and .jpg need a build with stb";
  return Status::bad_input(
      (extension.empty() ? std::string("no image extension") : "unknown image extension '." + extension + "'") +
      " (" + supported + ")");
}

// An image handed to a writer must be what its fields say.
Status check_writable(const Image& img) {
  PARVIS_TRY(check_image_size(img.width, img.height, img.channels));
  const size_t row_bytes = size_t(img.width) * size_t(img.channels);
  if (img.stride < row_bytes || img.pixels.size() / img.stride < size_t(img.height - 1) ||
      img.pixels.size() - img.stride * size_t(img.height - 1) < row_bytes)
    return Status::runtime("image buffer is smaller than its width, height and stride say");
  return Status::Ok();
}

Status with_context(const std::string& context, Status s) {
  if (!s.ok()) s.message = context + ": " + s.message;
  return s;
}

}  // namespace

Status image_info(const uint8_t* data, size_t size, ImageInfo* out) {
  return read_any(data, size, out, nullptr);
}

Status image_decode(const uint8_t* data, size_t size, Image* out) {
  try {  // the codecs allocate in vectors: running out of memory is a Status, not a crash
    return read_any(data, size, nullptr, out);
  } catch (const std::bad_alloc&) {
    return Status::runtime("out of memory decoding an image");
  }
}

Status image_read(const std::string& path, Image* out) {
  std::vector<uint8_t> bytes;
  PARVIS_TRY(read_file(path, &bytes));  // its message names the path already
  return with_context(path, image_decode(bytes.data(), bytes.size(), out));
}

Status image_encode(const Image& img, const std::string& extension, std::vector<uint8_t>* out) {
  Writer writer = Writer::Bmp;
  PARVIS_TRY(writer_for(extension, &writer));
  PARVIS_TRY(check_writable(img));
  try {  // as in image_decode
    switch (writer) {
      case Writer::Bmp: return codec::bmp_encode(img, out);
      case Writer::Pgm: return codec::pnm_encode(img, codec::PnmKind::Pgm, out);
      case Writer::Ppm: return codec::pnm_encode(img, codec::PnmKind::Ppm, out);
      case Writer::Pnm: return codec::pnm_encode(img, codec::PnmKind::ByChannels, out);
      case Writer::Png: return codec::stb_encode_png(img, out);
      case Writer::Jpeg: return codec::stb_encode_jpeg(img, 95, out);
    }
  } catch (const std::bad_alloc&) {
    return Status::runtime("out of memory encoding an image");
  }
  return Status::runtime("unreachable image writer");
}

Status image_write(const std::string& path, const Image& img) {
  std::vector<uint8_t> bytes;
  PARVIS_TRY(with_context("cannot write " + path, image_encode(img, file_extension(path), &bytes)));
  return write_file_atomic(path, bytes.data(), bytes.size());
}

}  // namespace parvis
