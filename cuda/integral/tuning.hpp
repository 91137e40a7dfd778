// The integral image's tuning on the CUDA versions (cuda-naive, cuda-opt): how the rows are cut
// into bands (driver.cuh). Its defaults come from the image's size and the card's memory in
// integral_tuning(); PARVIS_TUNING's integral.band_rows caps the band height (a test hook: many
// bands, and the carry between them, on any card). `./main integral ... --explain` prints it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/config.hpp"

namespace parvis::integral::device {

struct IntegralTuning {
  int64_t band_rows = 0;       // rows a band holds (the last one may hold fewer); < 1: none fit
  int64_t bands = 0;           // bands of the image
  uint64_t reserve_bytes = 0;  // device memory left free beside the bands' buffers
  int64_t band_rows_cap = 0;   // integral.band_rows (0: not set)

  std::string describe() const {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%lld band%s of %lld rows, %llu MiB of the card left free",
                  static_cast<long long>(bands), bands == 1 ? "" : "s", static_cast<long long>(band_rows),
                  static_cast<unsigned long long>(reserve_bytes >> 20));
    std::string s = buf;
    if (band_rows_cap) s += "; integral.band_rows=" + std::to_string(band_rows_cap);
    return s;
  }
};

// A w x h integral of `elem`-byte elements with `free_b` of the card's `total_b` bytes free:
// the reserve is 5 % of the card, at least 256 MiB; a band is as tall as its input (1 byte a
// pixel), output (elem bytes) and the kernels' scratch (scratch(w, rows, elem)) fit in the free
// memory less the reserve and two carry rows, at most max_rows (the kernels' limit) and
// integral.band_rows.
template <class Scratch>
IntegralTuning integral_tuning(int64_t w, int64_t h, size_t elem, uint64_t free_b, uint64_t total_b,
                               int64_t max_rows, Scratch scratch) {
  IntegralTuning t;
  t.reserve_bytes = std::max<uint64_t>(uint64_t(256) << 20, total_b / 20);
  const uint64_t per_row = uint64_t(w) * (1 + elem), carry = 2 * uint64_t(w) * elem;
  const uint64_t usable = free_b > t.reserve_bytes + carry ? free_b - t.reserve_bytes - carry : 0;
  int64_t rows = std::min<int64_t>(h, int64_t(usable / per_row));
  while (rows > 0 && per_row * rows + scratch(w, rows, elem) > usable) rows = rows * 15 / 16;
  t.band_rows_cap = config::tuning_int("integral.band_rows", 0);
  if (t.band_rows_cap > 0) rows = std::min(rows, t.band_rows_cap);
  t.band_rows = std::min(rows, max_rows);
  t.bands = t.band_rows > 0 ? (h + t.band_rows - 1) / t.band_rows : 0;
  return t;
}

}  // namespace parvis::integral::device
