// parvis-imgtest: the image layer's own tests (bmp/image_io.hpp, src/common/npy.hpp).
// Prints one line per check, "PASS <name>", "FAIL <name>: why" or "SKIP <name>: why",
// then "N passed, N failed, N skipped"; exits 1 if any check failed. With --corpus DIR it
// writes small valid files of every flavour instead, to seed the fuzzer (tests/fuzz).
//
// The library writes only 8-bit grey and 24-bit BMP, so the other BMP flavours are made
// here by a small test-only encoder (tests/test_bmp_encoder.hpp) that shares no code with the decoder.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/image.hpp"
#include "common/npy.hpp"
#include "common/output.hpp"
#include "image_io.hpp"
#include "test_bmp_encoder.hpp"

using namespace parvis;
using namespace parvis::test_bmp;

namespace {

// ---------------------------------------------------------------------------- reporting
int g_passed = 0, g_failed = 0, g_skipped = 0;

// An empty `failure` is a pass.
void report(const std::string& name, const std::string& failure) {
  if (failure.empty()) {
    ++g_passed;
    std::printf("PASS %s\n", name.c_str());
  } else {
    ++g_failed;
    std::printf("FAIL %s: %s\n", name.c_str(), failure.c_str());
  }
}

void skip(const std::string& name, const std::string& why) {
  ++g_skipped;
  std::printf("SKIP %s: %s\n", name.c_str(), why.c_str());
}

// ---------------------------------------------------------------------------- test data
Image noise_image(int width, int height, int channels, uint64_t seed) {
  Image img;
  Status s = image_alloc(width, height, channels, &img);
  if (!s.ok()) std::abort();  // the tests only ask for small images
  Rng rng{seed};
  for (uint8_t& p : img.pixels) p = rng.byte();
  return img;
}

// A smooth picture (for the lossy JPEG check, where noise would not survive).
Image gradient_image(int width, int height, int channels) {
  Image img;
  if (!image_alloc(width, height, channels, &img).ok()) std::abort();
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c)
        img.at(x, y)[c] = uint8_t((x * 255 / std::max(1, width - 1) + y * 3 + c * 40) % 256);
  return img;
}

// The same pixels with `extra` unused bytes after every row (writers must honour stride).
Image with_padded_rows(const Image& in, size_t extra) {
  Image out = in;
  out.stride = size_t(in.width) * size_t(in.channels) + extra;
  out.pixels.assign(out.stride * size_t(in.height), 0xee);
  for (int y = 0; y < in.height; ++y) std::memcpy(out.row(y), in.row(y), size_t(in.width) * size_t(in.channels));
  return out;
}

std::string size_text(const Image& img) {
  return std::to_string(img.width) + "x" + std::to_string(img.height) + "x" + std::to_string(img.channels);
}

// "" when both hold the same pixels (strides may differ), else where they differ.
std::string compare_images(const Image& want, const Image& got) {
  if (want.width != got.width || want.height != got.height || want.channels != got.channels)
    return "size " + size_text(got) + ", expected " + size_text(want);
  for (int y = 0; y < want.height; ++y)
    for (int x = 0; x < want.width; ++x)
      for (int c = 0; c < want.channels; ++c)
        if (want.at(x, y)[c] != got.at(x, y)[c])
          return "pixel (" + std::to_string(x) + "," + std::to_string(y) + ") channel " + std::to_string(c) +
                 " is " + std::to_string(got.at(x, y)[c]) + ", expected " + std::to_string(want.at(x, y)[c]);
  return "";
}

// Decodes `bytes` and compares with `want`; image_info must agree with the decoded image.
std::string decodes_to(const std::vector<uint8_t>& bytes, const Image& want) {
  Image got;
  Status s = image_decode(bytes.data(), bytes.size(), &got);
  if (!s.ok()) return "decode failed: " + s.message;
  ImageInfo info;
  s = image_info(bytes.data(), bytes.size(), &info);
  if (!s.ok()) return "image_info failed: " + s.message;
  if (info.width != got.width || info.height != got.height || info.channels != got.channels)
    return "image_info says " + std::to_string(info.width) + "x" + std::to_string(info.height) + "x" +
           std::to_string(info.channels) + ", decode gives " + size_text(got);
  return compare_images(want, got);
}

// ---------------------------------------------------------------------------- files
std::string g_dir;  // this run's scratch directory

std::string scratch(const std::string& name) { return g_dir + "/" + name; }

bool save(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void remove_tree(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    for (const std::string& n : dir_entries(path)) remove_tree(path + "/" + n);
    rmdir(path.c_str());
  } else {
    unlink(path.c_str());
  }
}

// A failure must be bad input (exit 2) with a one-line reason.
std::string is_bad_input(const Status& s, const std::string& must_mention) {
  if (s.ok()) return "was accepted";
  if (s.code != kExitBadInput) return "exit code " + std::to_string(s.code) + ", expected 2 (" + s.message + ")";
  if (s.message.empty()) return "empty message";
  if (s.message.find('\n') != std::string::npos) return "message has several lines: " + s.message;
  if (s.message.find(must_mention) == std::string::npos)
    return "message \"" + s.message + "\" does not mention \"" + must_mention + "\"";
  return "";
}

// ---------------------------------------------------------------------------- the checks
const int kWidths[] = {1, 2, 3, 5, 7, 13};
const int kHeights[] = {3, 1, 4, 5, 2, 6};

void test_bmp_flavours() {
  uint64_t seed = 1;
  for (const BmpFlavour& f : bmp_flavours()) {
    for (size_t i = 0; i < sizeof kWidths / sizeof kWidths[0]; ++i) {
      Image want;
      const std::vector<uint8_t> bytes = make_flavour(f, kWidths[i], kHeights[i], ++seed, &want);
      report("bmp_read_" + f.name + "_" + std::to_string(kWidths[i]) + "x" + std::to_string(kHeights[i]),
             decodes_to(bytes, want));
    }
  }
}

// The library's own writers: write -> read gives the same pixels, for every format.
void test_round_trips() {
  struct Size { int w, h; };
  const Size sizes[] = {{1, 1}, {2, 3}, {3, 2}, {5, 7}, {7, 5}, {13, 4}, {1027, 769}};
  const char* formats[] = {"bmp", "pgm", "ppm", "pnm", "png"};
  uint64_t seed = 100;
  for (const char* ext : formats) {
    for (int channels : {1, 3}) {
      if (std::string(ext) == "pgm" && channels == 3) continue;  // refused, checked below
      for (const Size& sz : sizes) {
        const std::string name = std::string(ext) + "_roundtrip_" + (channels == 1 ? "grey_" : "rgb_") +
                                 std::to_string(sz.w) + "x" + std::to_string(sz.h);
        if (std::string(ext) == "png" && !image_have_stb()) {
          skip(name, "built without stb");
          continue;
        }
        Image img = noise_image(sz.w, sz.h, channels, ++seed);
        // Grey written as PPM comes back as RGB with the grey replicated.
        const Image want = std::string(ext) == "ppm" ? to_rgb(img) : img;
        if (sz.w == 5) img = with_padded_rows(img, 3);  // writers must follow the stride
        std::vector<uint8_t> bytes;
        Status s = image_encode(img, ext, &bytes);
        report(name, s.ok() ? decodes_to(bytes, want) : "encode failed: " + s.message);
      }
    }
  }

  // Through the files, with image_write / image_read.
  for (const char* ext : {"bmp", "pgm", "ppm", "png", "BMP"}) {
    const std::string name = std::string("file_roundtrip_") + ext;
    if (std::string(ext) == "png" && !image_have_stb()) {
      skip(name, "built without stb");
      continue;
    }
    const Image img = noise_image(31, 17, std::string(ext) == "ppm" ? 3 : 1, 7);
    const std::string path = scratch(std::string("roundtrip.") + ext);
    Status s = image_write(path, img);
    Image got;
    if (s.ok()) s = image_read(path, &got);
    report(name, s.ok() ? compare_images(img, got) : s.message);
  }

  // The BMP writer's flavours: 8-bit with a 256-level grey palette, or 24-bit.
  {
    std::vector<uint8_t> grey, rgb;
    image_encode(noise_image(3, 3, 1, 1), "bmp", &grey);
    image_encode(noise_image(3, 3, 3, 1), "bmp", &rgb);
    std::string why;
    if (grey.size() < 54 + 1024 || grey[28] != 8 || grey[10] != 0x36 || grey[11] != 0x04)
      why = "grey BMP is not 8-bit with a 256-entry palette";
    for (int i = 0; i < 256 && why.empty() && grey.size() >= 54 + 1024; ++i)
      if (grey[54 + 4 * i] != i || grey[55 + 4 * i] != i || grey[56 + 4 * i] != i)
        why = "palette entry " + std::to_string(i) + " is not grey level " + std::to_string(i);
    if (why.empty() && (rgb.size() < 54 || rgb[28] != 24)) why = "RGB BMP is not 24-bit";
    report("bmp_write_flavours", why);
  }

  // BMP is BGR on disk: a pure red pixel is stored as 00 00 ff.
  {
    Image red;
    image_alloc(1, 1, 3, &red);
    red.pixels = {255, 0, 0};
    std::vector<uint8_t> bytes;
    image_encode(red, "bmp", &bytes);
    report("bmp_write_is_bgr", bytes.size() >= 57 && bytes[54] == 0 && bytes[55] == 0 && bytes[56] == 255
                                   ? ""
                                   : "the first pixel is not stored as blue, green, red");
  }

  // PGM/PPM headers may carry comments anywhere between the tokens.
  {
    const std::string text = "P5 # a comment\n# another\n 3 #w\n2\n#before maxval\n255\n";
    std::vector<uint8_t> bytes(text.begin(), text.end());
    const Image want = noise_image(3, 2, 1, 42);
    bytes.insert(bytes.end(), want.pixels.begin(), want.pixels.end());
    report("pgm_read_comments", decodes_to(bytes, want));
  }

  // The format comes from the magic bytes, not the name.
  {
    const Image img = noise_image(9, 4, 3, 9);
    std::vector<uint8_t> bytes;
    image_encode(img, "bmp", &bytes);
    save(scratch("really_a_bmp.png"), bytes);
    Image got;
    Status s = image_read(scratch("really_a_bmp.png"), &got);
    report("read_by_magic_not_name", s.ok() ? compare_images(img, got) : s.message);
  }

  // JPEG is lossy: the size must survive and the pixels stay close. stb's JPEG writer
  // always writes three components (YCbCr), so a grey image comes back as RGB.
  for (int channels : {1, 3}) {
    const std::string name = std::string("jpeg_roundtrip_close_") + (channels == 1 ? "grey" : "rgb");
    if (!image_have_stb()) {
      skip(name, "built without stb");
      continue;
    }
    const Image img = gradient_image(67, 45, channels);
    const std::string path = scratch(channels == 1 ? "grey.jpg" : "rgb.jpeg");
    Status s = image_write(path, img);
    Image got;
    if (s.ok()) s = image_read(path, &got);
    std::string why = s.ok() ? "" : s.message;
    const Image want = to_rgb(img);
    if (why.empty() && (got.width != want.width || got.height != want.height || got.channels != 3))
      why = "size " + size_text(got) + ", expected " + size_text(want);
    if (why.empty()) {
      double sum = 0;
      for (size_t i = 0; i < want.pixels.size(); ++i) sum += std::abs(int(want.pixels[i]) - int(got.pixels[i]));
      const double mean = sum / double(want.pixels.size());
      if (mean > 3.0) why = "mean difference " + std::to_string(mean) + " > 3 at quality 95";
    }
    report(name, why);
  }

  // TGA (read only, through stb): an uncompressed 24-bit, top-left origin file.
  {
    if (!image_have_stb()) {
      skip("tga_read", "built without stb");
    } else {
      const Image want = noise_image(5, 3, 3, 77);
      std::vector<uint8_t> tga = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 3, 0, 24, 0x20};
      for (size_t i = 0; i < want.pixels.size(); i += 3)
        tga.insert(tga.end(), {want.pixels[i + 2], want.pixels[i + 1], want.pixels[i]});
      report("tga_read", decodes_to(tga, want));
      // The same pixels run-length coded: a repeat packet of the first pixel twice would
      // change them, so raw packets of 2, 1 and 12 pixels (the last crossing rows).
      std::vector<uint8_t> rle = {0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 3, 0, 24, 0x20};
      size_t pixel = 0;
      for (int count : {2, 1, 12}) {
        rle.push_back(uint8_t(count - 1));
        for (int i = 0; i < count; ++i, ++pixel)
          rle.insert(rle.end(), {want.pixels[3 * pixel + 2], want.pixels[3 * pixel + 1], want.pixels[3 * pixel]});
      }
      report("tga_rle_read", decodes_to(rle, want));
    }
  }
}

// Every kind of broken input is refused with exit code 2 and a one-line reason.
void test_bad_input() {
  std::vector<uint8_t> rgb24, grey8, pgm, png;
  image_encode(noise_image(5, 3, 3, 5), "bmp", &rgb24);
  image_encode(noise_image(6, 4, 1, 6), "bmp", &grey8);
  image_encode(noise_image(5, 3, 1, 5), "pgm", &pgm);
  if (image_have_stb()) image_encode(noise_image(40, 30, 3, 5), "png", &png);

  auto expect_bad = [](const std::string& name, const std::vector<uint8_t>& bytes, const std::string& mention) {
    Image img;
    report(name, is_bad_input(image_decode(bytes.data(), bytes.size(), &img), mention));
  };
  auto patched32 = [](std::vector<uint8_t> b, size_t at, uint32_t v) { return poke32(&b, at, v), b; };
  auto patched16 = [](std::vector<uint8_t> b, size_t at, uint32_t v) { return poke16(&b, at, v), b; };
  auto text = [](const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); };

  // Every truncation of a valid file fails cleanly (no prefix of these is a valid image).
  struct Whole { const char* name; const std::vector<uint8_t>* bytes; };
  for (const Whole& w : {Whole{"bmp24", &rgb24}, Whole{"bmp8", &grey8}, Whole{"pgm", &pgm}}) {
    std::string why;
    for (size_t n = 0; n < w.bytes->size() && why.empty(); ++n) {
      const std::vector<uint8_t> cut(w.bytes->begin(), w.bytes->begin() + long(n));
      Image img;
      why = is_bad_input(image_decode(cut.data(), cut.size(), &img), "");
      if (!why.empty()) why = "cut to " + std::to_string(n) + " bytes: " + why;
    }
    report(std::string(w.name) + "_every_truncation_refused", why);
  }
  expect_bad("bmp_truncated_pixels", std::vector<uint8_t>(rgb24.begin(), rgb24.end() - 1), "truncated BMP pixel data");
  expect_bad("bmp_truncated_palette", std::vector<uint8_t>(grey8.begin(), grey8.begin() + 300), "truncated BMP palette");
  expect_bad("bmp_truncated_header", std::vector<uint8_t>(rgb24.begin(), rgb24.begin() + 30), "truncated BMP header");

  // Sizes: BITMAPINFOHEADER width at 18, height at 22.
  expect_bad("bmp_zero_width", patched32(rgb24, 18, 0), "not positive");
  expect_bad("bmp_negative_width", patched32(rgb24, 18, uint32_t(-5)), "not positive");
  expect_bad("bmp_zero_height", patched32(rgb24, 22, 0), "not positive");
  expect_bad("bmp_huge_size", patched32(patched32(rgb24, 18, 100000), 22, 100000), "larger than 2^31");
  expect_bad("bmp_int_min_height", patched32(rgb24, 22, 0x80000000u), "larger than 2^31");
  expect_bad("bmp_huge_width_1bit", patched32(patched16(patched32(grey8, 18, 0x7fffffff), 28, 1), 46, 2),
             "larger than 2^31");

  // Header fields: offset at 10, header size at 14, bit count at 28, compression at 30,
  // colours used at 46.
  expect_bad("bmp_bad_header_size", patched32(rgb24, 14, 99), "header size");
  expect_bad("bmp_bad_bit_count", patched16(rgb24, 28, 7), "bit count");
  expect_bad("bmp_zero_bit_count", patched16(rgb24, 28, 0), "bit count");
  expect_bad("bmp_rle_refused", patched32(grey8, 30, 1), "RLE");
  expect_bad("bmp_bad_compression", patched32(rgb24, 30, 9), "compression");
  expect_bad("bmp_bitfields_on_24bit", patched32(rgb24, 30, 3), "bit fields");
  expect_bad("bmp_offset_past_end", patched32(rgb24, 10, 1000000), "truncated BMP pixel data");
  expect_bad("bmp_offset_huge", patched32(rgb24, 10, 0xffffffffu), "truncated BMP pixel data");
  expect_bad("bmp_offset_into_header", patched32(rgb24, 10, 20), "points into the headers");
  expect_bad("bmp_palette_too_big", patched32(grey8, 46, 1000), "palette");
  expect_bad("bmp_index_beyond_palette", patched32(grey8, 46, 2), "beyond the palette");

  // Bit masks of a 32-bit BI_BITFIELDS file (masks at 54, 58, 62).
  {
    BmpFlavour f;
    f.bits_per_pixel = 32, f.compression = 3;
    f.masks[0] = 0xff0000, f.masks[1] = 0xff00, f.masks[2] = 0xff;
    Image unused;
    const std::vector<uint8_t> good = make_flavour(f, 3, 2, 3, &unused);
    expect_bad("bmp_empty_mask", patched32(good, 58, 0), "mask is empty");
    expect_bad("bmp_noncontiguous_mask", patched32(good, 54, 0x00ff00f0), "not contiguous");
    expect_bad("bmp_truncated_masks", std::vector<uint8_t>(good.begin(), good.begin() + 60), "truncated BMP bit masks");
    f.bits_per_pixel = 16, f.masks[0] = 0x1f0000, f.masks[1] = 0x7e0, f.masks[2] = 0x1f;
    expect_bad("bmp_mask_wider_than_pixel", make_flavour(f, 3, 2, 3, &unused), "does not fit");
  }

  expect_bad("empty_file", {}, "empty file");
  expect_bad("text_file", text("this is not an image, just some text\n"), "unknown image format");
  expect_bad("bm_and_nothing", text("BM"), "truncated BMP header");

  // PGM/PPM headers.
  expect_bad("pgm_maxval_65535", text("P5\n3 2\n65535\n123456789012"), "maxval 65535");
  expect_bad("pgm_maxval_0", text("P5\n3 2\n0\n123456"), "maxval 0");
  expect_bad("pgm_ascii_p2_refused", text("P2\n3 2\n255\n1 2 3 4 5 6\n"), "P2");
  expect_bad("ppm_ascii_p3_refused", text("P3\n1 1\n255\n1 2 3\n"), "P3");
  expect_bad("pgm_truncated_pixels", text("P5\n3 2\n255\n12345"), "truncated PGM/PPM pixel data");
  expect_bad("ppm_truncated_pixels", text("P6\n3 2\n255\n12345678901234567"), "truncated PGM/PPM pixel data");
  expect_bad("pgm_missing_height", text("P5\n3\n"), "truncated PGM/PPM header");
  expect_bad("pgm_negative_width", text("P5\n-3 2\n255\n123456"), "expected the width");
  expect_bad("pgm_zero_width", text("P5\n0 2\n255\n"), "not positive");
  expect_bad("pgm_huge_size", text("P5\n100000 100000\n255\n"), "larger than 2^31");
  expect_bad("pgm_number_overflow", text("P5\n99999999999999999999999 1\n255\n1"), "too large");
  expect_bad("pgm_junk_after_number", text("P5\n3x 2\n255\n123456"), "followed by");
  expect_bad("pgm_bad_magic_follow", text("P5x3 2\n255\n123456"), "magic number");

  // PNG: a valid file cut short; without stb, a clear "needs stb".
  if (image_have_stb()) {
    std::string why;
    for (size_t n : {size_t(8), size_t(20), size_t(40), png.size() / 2, png.size() - 20}) {
      Image img;
      const std::vector<uint8_t> cut(png.begin(), png.begin() + long(n));
      const std::string w = is_bad_input(image_decode(cut.data(), cut.size(), &img), "PNG");
      if (!w.empty() && why.empty()) why = "cut to " + std::to_string(n) + " bytes: " + w;
    }
    report("png_truncated_refused", why);
    skip("png_read_needs_stb", "stb is built in");
    // The first chunk after IHDR (at 33) declares 1 GiB: refused before stb allocates it.
    expect_bad("png_chunk_past_end_refused", patched32(png, 33, 0x00000040), "runs past the end");

    // JPEG: cut short, and a Huffman table declaring more than 256 codes (stb 2.27 would
    // write past its tables; the layer refuses the file before stb sees it).
    std::vector<uint8_t> jpeg;
    image_encode(gradient_image(40, 30, 3), "jpg", &jpeg);
    expect_bad("jpeg_truncated_refused", std::vector<uint8_t>(jpeg.begin(), jpeg.begin() + long(jpeg.size() / 2)),
               "truncated JPEG");
    size_t dht = 2;
    while (dht + 1 < jpeg.size() && !(jpeg[dht] == 0xff && jpeg[dht + 1] == 0xc4)) ++dht;
    if (dht + 21 < jpeg.size()) {
      std::vector<uint8_t> bad = jpeg;
      bad[dht + 19] = 255, bad[dht + 20] = 255;  // the code counts of lengths 15 and 16
      expect_bad("jpeg_huffman_overflow_refused", bad, "Huffman table");
    } else {
      report("jpeg_huffman_overflow_refused", "no DHT segment in stb's JPEG");
    }

    // Issue 31: what stb would take for an image (zeros where the file runs out, flat grey
    // without scan data) is refused by the layer's own structure checks (bmp/structure.cpp).
    std::vector<uint8_t> tga = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 3, 0, 24, 0x20};
    tga.resize(18 + 36, 0x55);
    expect_bad("tga_half_refused", std::vector<uint8_t>(tga.begin(), tga.begin() + 36), "truncated 4x3 TGA");
    std::vector<uint8_t> rle = {0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 3, 0, 24, 0x20, 0x84, 1, 2, 3};
    expect_bad("tga_rle_cut_refused", rle, "run-length data ends after 5 of 12 pixels");
    std::vector<uint8_t> big_tga = {0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x9c, 0x40, 0x9c, 8, 0x20};
    big_tga.resize(118, 0);
    expect_bad("tga_40000_claim_refused", big_tga, "1600000018 bytes expected, the file has 118");
    size_t sos = 2;
    while (sos + 1 < jpeg.size() && !(jpeg[sos] == 0xff && jpeg[sos + 1] == 0xda)) ++sos;
    std::vector<uint8_t> no_scan(jpeg.begin(), jpeg.begin() + long(sos));
    no_scan.insert(no_scan.end(), {0xff, 0xd9});
    expect_bad("jpeg_no_scan_refused", no_scan, "without scan data");
    std::vector<uint8_t> short_scan(jpeg.begin(), jpeg.begin() + long(std::min(sos + 16, jpeg.size())));
    short_scan.insert(short_scan.end(), {0xff, 0xd9});
    expect_bad("jpeg_short_scan_refused", short_scan, "bytes of scan data, a 40x30 frame needs at least");
    std::vector<uint8_t> no_frame = {0xff, 0xd8, 0xff, 0xd9};
    expect_bad("jpeg_no_frame_refused", no_frame, "no frame header");
    // A 40000^2 grey PNG: within 2^31 bytes, but over the 2^30 bytes of samples stb decodes,
    // which stb itself reports as "unknown image type".
    std::vector<uint8_t> big_png = png;
    for (size_t at : {size_t(16), size_t(20)}) big_png[at] = 0, big_png[at + 1] = 0, big_png[at + 2] = 0x9c, big_png[at + 3] = 0x40;
    big_png[25] = 0;  // grey
    expect_bad("png_40000_refused_by_size", big_png, "40000x40000 is too large for the PNG decoder");
  } else {
    skip("tga_half_refused", "built without stb");
    skip("tga_rle_cut_refused", "built without stb");
    skip("tga_40000_claim_refused", "built without stb");
    skip("jpeg_no_scan_refused", "built without stb");
    skip("jpeg_short_scan_refused", "built without stb");
    skip("jpeg_no_frame_refused", "built without stb");
    skip("png_40000_refused_by_size", "built without stb");
    skip("png_truncated_refused", "built without stb");
    skip("png_chunk_past_end_refused", "built without stb");
    skip("jpeg_truncated_refused", "built without stb");
    skip("jpeg_huffman_overflow_refused", "built without stb");
    const std::vector<uint8_t> magic = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13};
    expect_bad("png_read_needs_stb", magic, "PNG support needs stb: install libstb-dev and rebuild");
  }

  // Issue 31: a 30-byte BMP is truncated (not an "unsupported header size 40"); a 24-bit
  // 30000^2 header is over 2^31 bytes as RGB, refused from the header; --max-pixels.
  expect_bad("bmp_30_bytes_says_truncated", std::vector<uint8_t>(rgb24.begin(), rgb24.begin() + 30),
             "truncated BMP header: 30 bytes, its 40-byte header ends at 54");
  expect_bad("bmp_30000_rgb_refused", patched32(patched32(rgb24, 18, 30000), 22, 30000), "larger than 2^31 bytes");
  set_max_input_pixels(14);
  expect_bad("max_pixels_refuses_15", rgb24, "15 pixels, more than --max-pixels 14");
  set_max_input_pixels(15);
  {
    Image img;
    report("max_pixels_takes_15", image_decode(rgb24.data(), rgb24.size(), &img).ok() ? "" : "refused");
  }
  set_max_input_pixels(kDefaultMaxInputPixels);

  // Through files: missing input, unwritable or unknown outputs leave nothing behind.
  {
    Image img;
    report("read_missing_file", is_bad_input(image_read(scratch("no_such_file.bmp"), &img), "no_such_file.bmp"));
    save(scratch("text.bmp"), text("hello, I am a text file\n"));
    report("read_text_named_bmp", is_bad_input(image_read(scratch("text.bmp"), &img), "text.bmp: unknown image format"));
  }
  const Image rgb = noise_image(4, 3, 3, 11);
  auto write_refused = [&](const std::string& name, const std::string& path, const Image& img,
                           const std::string& mention) {
    const std::vector<std::string> before = dir_entries(g_dir);
    std::string why = is_bad_input(image_write(path, img), mention);
    if (why.empty() && dir_entries(g_dir) != before) why = "left a file behind in " + g_dir;
    report(name, why);
  };
  write_refused("write_unwritable_path", scratch("no/such/dir/out.bmp"), rgb, "no/such/dir/out.bmp");
  write_refused("write_unknown_extension", scratch("out.tiff"), rgb, ".bmp, .pgm, .ppm");
  write_refused("write_no_extension", scratch("out"), rgb, "no image extension");
  write_refused("write_colour_as_pgm", scratch("out.pgm"), rgb, "PGM");
  write_refused("write_empty_image", scratch("out.bmp"), Image(), "not positive");
  if (image_have_stb()) {
    skip("write_png_needs_stb", "stb is built in");
  } else {
    write_refused("write_png_needs_stb", scratch("out.png"), rgb, "PNG support needs stb: install libstb-dev and rebuild");
  }
}

// .npy: encode -> decode (and write -> read) gives the same type, shape and bytes.
void test_npy() {
  struct Case { const char* name; DType type; };
  const Case cases[] = {{"u8", DType::U8}, {"u32", DType::U32}, {"u64", DType::U64},
                        {"f32", DType::F32}, {"f64", DType::F64}};
  const std::vector<std::vector<size_t>> shapes = {{7}, {3, 5}, {2, 3, 7}};
  uint64_t seed = 500;
  for (const Case& c : cases) {
    std::string why;
    for (const std::vector<size_t>& shape : shapes) {
      size_t count = 1;
      for (size_t s : shape) count *= s;
      std::vector<uint8_t> data(count * dtype_size(c.type));
      Rng rng{++seed};
      for (size_t i = 0; i < count; ++i) {  // values of the element type, incl. negative floats
        uint8_t* p = &data[i * dtype_size(c.type)];
        if (c.type == DType::F32) {
          const float f = float(int(rng.next() % 20001) - 10000) / 7.0f;
          std::memcpy(p, &f, sizeof f);
        } else if (c.type == DType::F64) {
          const double d = double(int64_t(rng.next()) - INT32_MAX) / 3.0;
          std::memcpy(p, &d, sizeof d);
        } else {
          for (size_t b = 0; b < dtype_size(c.type); ++b) p[b] = rng.byte();
        }
      }
      std::vector<uint8_t> file;
      Status s = npy_encode(c.type, data.data(), shape, &file);
      NpyArray a, b;
      if (s.ok()) s = npy_decode(file.data(), file.size(), &a);
      const std::string path = scratch(std::string("array_") + c.name + ".npy");
      if (s.ok()) s = npy_write(path, c.type, data.data(), shape);
      if (s.ok()) s = npy_read(path, &b);
      if (!s.ok()) {
        why = s.message;
      } else if (a.dtype != c.type || a.shape != shape || a.bytes != data) {
        why = "decoded array differs from the encoded one";
      } else if (b.dtype != c.type || b.shape != shape || b.bytes != data) {
        why = "array read from the file differs from the one written";
      } else if (file.size() % 64 != data.size() % 64) {
        why = "header is not padded to a multiple of 64 bytes";
      }
      if (!why.empty()) break;
    }
    report(std::string("npy_roundtrip_") + c.name, why);
  }
  // A cut .npy is refused.
  std::vector<uint8_t> file;
  const uint32_t values[6] = {1, 2, 3, 4, 5, 6};
  npy_encode(DType::U32, values, {2, 3}, &file);
  file.pop_back();
  NpyArray a;
  report("npy_truncated_refused", is_bad_input(npy_decode(file.data(), file.size(), &a), ""));
}

// Small valid files of every flavour the tests know, as seeds for the fuzzer.
int write_corpus(const std::string& dir) {
  int written = 0;
  auto add = [&](const std::string& name, const std::vector<uint8_t>& bytes) {
    if (save(dir + "/" + name, bytes)) ++written;
  };
  for (const BmpFlavour& f : bmp_flavours()) {
    Image unused;
    add("bmp_" + f.name + ".bmp", make_flavour(f, 5, 3, 1, &unused));
  }
  for (int channels : {1, 3}) {
    const Image img = noise_image(7, 5, channels, uint64_t(channels));
    for (const char* ext : {"bmp", "pnm", "png", "jpg"}) {
      std::vector<uint8_t> bytes;
      if (image_encode(img, ext, &bytes).ok()) add(std::string(channels == 1 ? "grey." : "rgb.") + ext, bytes);
    }
  }
  std::vector<uint8_t> tga = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 24, 0x20};
  tga.resize(tga.size() + 12, 0x80);
  add("rgb.tga", tga);
  // TGA flavours: grey, run-length RGB (a repeat and a raw packet), colour-mapped (2 entries).
  std::vector<uint8_t> grey_tga = {0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 2, 0, 8, 0};
  grey_tga.insert(grey_tga.end(), {1, 50, 99, 150, 200, 250});
  add("grey.tga", grey_tga);
  add("rle.tga", {0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 2, 0, 24, 0x20,
                  0x82, 10, 20, 30, 0x02, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  add("mapped.tga", {0, 1, 1, 0, 0, 2, 0, 24, 0, 0, 0, 0, 2, 0, 2, 0, 8, 0x20,
                     0, 0, 255, 255, 0, 0, 0, 1, 1, 0});
  // JPEG flavours beyond the writer's: a larger one (several MCUs, restart-free scan).
  std::vector<uint8_t> jpeg;
  if (image_encode(noise_image(33, 17, 3, 9), "jpg", &jpeg).ok()) add("rgb33.jpg", jpeg);
  const uint32_t values[6] = {1, 2, 3, 4, 5, 6};
  std::vector<uint8_t> npy;
  if (npy_encode(DType::U32, values, {2, 3}, &npy).ok()) add("u32.npy", npy);
  std::printf("wrote %d seed files to %s\n", written, dir.c_str());
  return written > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a sanitizer report then follows the last check it passed
  if (argc == 3 && std::string(argv[1]) == "--corpus") return write_corpus(argv[2]);
  if (argc != 1) {
    std::fprintf(stderr, "usage: parvis-imgtest            run the image layer tests\n"
                         "       parvis-imgtest --corpus DIR   write fuzzer seed files to DIR\n");
    return 1;
  }

  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/parvis-imgtest.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  if (!mkdtemp(name.data())) {
    std::printf("FAIL setup: cannot create a scratch directory from %s\n", tmpl.c_str());
    return 1;
  }
  g_dir = name.data();
  std::printf("image layer tests (stb %s), scratch %s\n", image_have_stb() ? "built in" : "absent", g_dir.c_str());

  test_bmp_flavours();
  test_round_trips();
  test_bad_input();
  test_npy();

  remove_tree(g_dir);
  std::printf("%d passed, %d failed, %d skipped\n", g_passed, g_failed, g_skipped);
  return g_failed == 0 ? 0 : 1;
}
