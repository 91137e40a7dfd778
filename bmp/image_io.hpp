// Image files: own BMP and PGM/PPM codecs; PNG/JPEG/TGA through stb when it was found at
// build time. Reading picks the format from the file's magic bytes, writing from the
// extension. Failures come back as a Status with a reason; nothing here prints or exits.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/image.hpp"
#include "common/output.hpp"
#include "common/status.hpp"

namespace parvis {

// Reads any supported file into a 1- (grey) or 3-channel (RGB) image. Palette images with a
// grey palette come back grey, other palettes RGB; alpha is dropped.
Status image_read(const std::string& path, Image* out);
Status image_decode(const uint8_t* data, size_t size, Image* out);

// Writes by extension: .bmp (8-bit grey with palette, or 24-bit), .pgm/.ppm (P5/P6; a
// 3-channel image to .pgm is refused), .png/.jpg/.jpeg (stb). One file at once, through
// write_file_atomic (common/output.hpp).
Status image_write(const std::string& path, const Image& img);
// Whether `path`'s extension is one this build writes, without writing (bad input if not).
Status image_check_output(const std::string& path);
// Whether `path`'s format holds an image of `channels` (a colour image cannot be a .pgm): asked
// as soon as the output's channels are known, before the work that makes it.
Status image_check_channels(const std::string& path, int channels);
// An image output of a run: image_check_output, then outputs->declare (before any work);
// image_put encodes it into the set, committed with the run's other outputs.
Status image_declare(Outputs* outputs, const std::string& path);
// The same for an output whose channels are known now (annotated pictures are colour).
Status image_declare(Outputs* outputs, const std::string& path, int channels);
Status image_put(Outputs* outputs, const std::string& path, const Image& img);
Status image_encode(const Image& img, const std::string& extension, std::vector<uint8_t>* out);

// What a file's header declares, read without decoding the pixels: the size and channel
// count image_decode would return. Lets a caller refuse an image before it is allocated.
struct ImageInfo {
  int width = 0;
  int height = 0;
  int channels = 0;  // 1 = grey, 3 = RGB, as image_decode would return it
};
Status image_info(const uint8_t* data, size_t size, ImageInfo* out);

// True when PNG/JPEG support (stb) was compiled in.
bool image_have_stb();

}  // namespace parvis
