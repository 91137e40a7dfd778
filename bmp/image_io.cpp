// The image layer's public entry points: pick a codec by the file's magic bytes (reading)
// or by the extension (writing), and go through read_file / Outputs (common/output.hpp).
#include "image_io.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <sys/stat.h>

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

Status unknown_format() {
  return Status::bad_input(image_have_stb()
                               ? "unknown image format (not BMP, PGM/PPM, PNG, JPEG or TGA)"
                               : "unknown image format (not BMP or PGM/PPM; this build has no "
                                 "PNG/JPEG/TGA support)");
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
  // TGA has no magic number: it is a header stb's TGA test would accept. stb reads zeros where
  // the file runs out, so every pixel must be in the file before stb sees it.
  codec::TgaLayout tga;
  if (image_have_stb() && codec::tga_header(data, size, &tga)) {
    PARVIS_TRY(check_input_size(tga.width, tga.height, 1));
    PARVIS_TRY(codec::tga_check(data, size, tga));
    return img ? codec::stb_decode(data, size, "TGA", img) : codec::stb_info(data, size, "TGA", info);
  }
  return unknown_format();
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

namespace {

uint32_t be16(const uint8_t* p) { return uint32_t(p[0]) << 8 | p[1]; }

// Compressed formats promise no exact length: read at most twice the declared pixels at 4 bytes
// each, plus room for metadata. A real file is far smaller; a stream that goes on is cut there.
Status compressed_extent(int64_t width, int64_t height, uint64_t* bytes) {
  PARVIS_TRY(check_input_size(width, height, 1));
  *bytes = 2 * uint64_t(width) * uint64_t(height) * 4 + (uint64_t(16) << 20);
  return Status::Ok();
}

// How many bytes of a file to read, from its first `size` bytes: what its header promises.
// *more = true when the head is too short to tell (a JPEG whose size marker lies further on).
Status file_extent(const uint8_t* head, size_t size, uint64_t* bytes, bool* more) {
  *more = false;
  switch (sniff(head, size)) {
    case Format::Bmp: return codec::bmp_extent(head, size, bytes);
    case Format::Pnm:
      if (head[1] != '5' && head[1] != '6') break;  // the decoder names the unsupported type
      return codec::pnm_extent(head, size, bytes);
    case Format::Png: {
      ImageInfo png;
      PARVIS_TRY(codec::png_header_check(head, size, &png));
      return compressed_extent(png.width, png.height, bytes);
    }
    case Format::Jpeg:
      // Segments FF xx + 16-bit length up to a start-of-frame marker (C0..CF but C4, C8, CC).
      for (size_t at = 2; at + 4 <= size;) {
        if (head[at] != 0xff) break;
        const uint8_t marker = head[at + 1];
        if (marker == 0xff) { ++at; continue; }
        const bool sof = marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc;
        if (sof) {
          if (at + 9 > size) break;
          return compressed_extent(be16(head + at + 7), be16(head + at + 5), bytes);
        }
        at += 2 + be16(head + at + 2);
        if (at + 4 > size) *more = true;
      }
      break;
    case Format::Unknown:
      if (image_have_stb()) {  // TGA: no magic; its header says how much there is to read
        codec::TgaLayout tga;
        if (codec::tga_header(head, size, &tga)) {
          PARVIS_TRY(check_input_size(tga.width, tga.height, 1));
          *bytes = codec::tga_extent(tga);
          return Status::Ok();
        }
      }
      return unknown_format();
  }
  *bytes = size;  // the head is all we can vouch for: decoding reports what is wrong with it
  return Status::Ok();
}

// Reads until `bytes` holds `want` bytes or the file ends.
Status read_up_to(FILE* f, const std::string& path, uint64_t want, std::vector<uint8_t>* bytes) {
  while (bytes->size() < want) {
    const size_t chunk = size_t(std::min<uint64_t>(want - bytes->size(), size_t(1) << 20));
    const size_t old = bytes->size();
    bytes->resize(old + chunk);
    const size_t got = std::fread(bytes->data() + old, 1, chunk, f);
    bytes->resize(old + got);
    if (got < chunk) {
      if (std::ferror(f)) return Status::bad_input("cannot read " + path + ": " + std::strerror(errno));
      break;
    }
  }
  return Status::Ok();
}

}  // namespace

Status image_read(const std::string& path, Image* out) {
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) return Status::bad_input("cannot open " + path + ": " + std::strerror(errno));
  struct Closer {
    FILE* f;
    ~Closer() { if (f != stdin) std::fclose(f); }
  } closer{f};
  std::vector<uint8_t> bytes;
  try {
    // The format from the first bytes, then only what the header promises.
    uint64_t head = 64 << 10, extent = 0;
    for (;;) {
      PARVIS_TRY(read_up_to(f, path, head, &bytes));
      if (bytes.empty()) return Status::bad_input(path + ": empty file");
      bool more = false;
      PARVIS_TRY(with_context(path, file_extent(bytes.data(), bytes.size(), &extent, &more)));
      if (!more || bytes.size() < head || head >= (uint64_t(16) << 20)) break;
      head *= 4;
    }
    // A regular file holds what it holds: room for the rest of it (never more than the header
    // promises) is made at once. A stream grows its buffer only as its bytes arrive, so a
    // header that promises gigabytes costs nothing until they come.
    struct stat st;
    if (f != stdin && ::fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode))
      bytes.reserve(size_t(std::min<uint64_t>(extent, uint64_t(st.st_size))));
    PARVIS_TRY(read_up_to(f, path, extent, &bytes));
  } catch (const std::bad_alloc&) {
    return Status::runtime(path + ": out of memory reading the file");
  }
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

Status image_check_output(const std::string& path) {
  Writer writer = Writer::Bmp;
  PARVIS_TRY(with_context("cannot write " + path, writer_for(file_extension(path), &writer)));
  if (writer == Writer::Png || writer == Writer::Jpeg)
    return with_context("cannot write " + path, codec::stb_require(writer == Writer::Png ? "PNG" : "JPEG"));
  return Status::Ok();
}

Status image_check_channels(const std::string& path, int channels) {
  Writer writer = Writer::Bmp;
  PARVIS_TRY(with_context("cannot write " + path, writer_for(file_extension(path), &writer)));
  if (writer == Writer::Pgm && channels != 1)
    return Status::bad_input("cannot write " + path +
                             ": a colour image cannot be written as PGM (use .ppm, or convert to grey)");
  return Status::Ok();
}

Status image_declare(Outputs* outputs, const std::string& path) {
  PARVIS_TRY(image_check_output(path));
  return outputs->declare(path);
}

Status image_declare(Outputs* outputs, const std::string& path, int channels) {
  PARVIS_TRY(image_check_channels(path, channels));
  return image_declare(outputs, path);
}

Status image_put(Outputs* outputs, const std::string& path, const Image& img) {
  std::vector<uint8_t> bytes;
  PARVIS_TRY(with_context("cannot write " + path, image_encode(img, file_extension(path), &bytes)));
  return outputs->put(path, bytes.data(), bytes.size());
}

Status image_write(const std::string& path, const Image& img) {
  PARVIS_TRY(image_check_output(path));
  std::vector<uint8_t> bytes;
  PARVIS_TRY(with_context("cannot write " + path, image_encode(img, file_extension(path), &bytes)));
  return write_file_atomic(path, bytes.data(), bytes.size());
}

}  // namespace parvis
