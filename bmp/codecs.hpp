// Private to the image layer: the codecs behind image_io.hpp, one per file format. Each has
// the same three-call shape: *_info reads only the header (size, channels), *_decode the
// whole image, *_encode writes one. image_io.cpp picks among them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/image.hpp"
#include "common/status.hpp"
#include "image_io.hpp"

namespace parvis {
namespace codec {

// Every codec also answers, from the first bytes of a file alone, how many bytes of it there are
// to read (*_extent): what its header promises, so that a stream or device is never read past the
// image. An extent is an upper bound for reading, not a check: decoding still validates all.

// BMP (bmp.cpp): reads 1/4/8-bit palette, 16/24/32-bit (BI_RGB, BI_BITFIELDS), bottom-up
// or top-down; writes 8-bit grey (grey palette) or 24-bit.
Status bmp_info(const uint8_t* data, size_t size, ImageInfo* info);
Status bmp_extent(const uint8_t* head, size_t size, uint64_t* bytes);
Status bmp_decode(const uint8_t* data, size_t size, Image* out);
Status bmp_encode(const Image& img, std::vector<uint8_t>* out);

// Binary PGM/PPM (pnm.cpp): P5 / P6 with maxval 255.
enum class PnmKind { Pgm, Ppm, ByChannels };
Status pnm_info(const uint8_t* data, size_t size, ImageInfo* info);
Status pnm_extent(const uint8_t* head, size_t size, uint64_t* bytes);
Status pnm_decode(const uint8_t* data, size_t size, Image* out);
Status pnm_encode(const Image& img, PnmKind kind, std::vector<uint8_t>* out);

// PNG/JPEG/TGA through stb (stb_io.cpp). `format` names the file in messages ("PNG").
// Without stb every call returns "<format> support needs stb: ..." (bad input).
Status stb_info(const uint8_t* data, size_t size, const char* format, ImageInfo* info);
Status stb_decode(const uint8_t* data, size_t size, const char* format, Image* out);
Status stb_encode_png(const Image& img, std::vector<uint8_t>* out);
Status stb_encode_jpeg(const Image& img, int quality, std::vector<uint8_t>* out);
// Ok with stb; without it the same "<format> support needs stb" error, for checks made
// before any work (an output's extension).
Status stb_require(const char* format);

// The structure of the files stb decodes, checked first (structure.cpp): stb reads zeros where a
// file runs out and allocates what a header declares, so truncation is found here.
// jpeg_start: 0xFF, fill bytes, SOI, as stb recognises a JPEG (*after_soi: the next byte).
// jpeg_check: the whole file: segments inside it, one frame header, at least one scan, scan
// data up to a marker and enough of it for the frame's blocks, an end-of-image marker, sane
// Huffman tables (stb 2.27 overruns on others).
bool jpeg_start(const uint8_t* data, size_t size, size_t* after_soi);
Status jpeg_check(const uint8_t* data, size_t size);
// The PNG IHDR (from the first 33 bytes): a valid size within --max-pixels and stb's limit.
// `info` may be null.
Status png_header_check(const uint8_t* data, size_t size, ImageInfo* info);
// TGA (no magic number): tga_header accepts the 18-byte header stb's TGA test accepts.
struct TgaLayout {
  int width = 0, height = 0;
  bool rle = false;
  uint32_t pixel_bytes = 0;   // bytes per stored pixel (or palette index)
  uint64_t data_offset = 0;   // header, image id, colour map
};
bool tga_header(const uint8_t* data, size_t size, TgaLayout* out);
uint64_t tga_extent(const TgaLayout& t);  // the most bytes the file can need
Status tga_check(const uint8_t* data, size_t size, const TgaLayout& t);  // every pixel present

}  // namespace codec
}  // namespace parvis
