// The staged copier's piece plan (plan.hpp). Host code only.
#include "upload/plan.hpp"

#include <algorithm>

namespace parvis::cuda {

PiecePlan plan_pieces(size_t width, size_t rows, size_t chunk, int threads, bool whole_rows) {
  PiecePlan p;
  p.width = width;
  p.rows = rows;
  if (width == 0 || rows == 0) return p;
  const size_t total = width * rows, per = 2 * size_t(std::max(threads, 1));
  const size_t target = std::min(std::max(chunk, size_t(1)),
                                 std::max(size_t(64) << 10, (total + per - 1) / per));
  if (whole_rows || width <= target) {
    p.rows_per_piece = std::max(size_t(1), target / width);
    p.count = (rows + p.rows_per_piece - 1) / p.rows_per_piece;
    p.piece_bytes = std::min(p.rows_per_piece, rows) * width;
  } else {
    p.cols_per_piece = target;
    const size_t per_row = (width + target - 1) / target;
    p.count = rows * per_row;
    p.piece_bytes = target;
  }
  return p;
}

size_t piece_limit(const UploadTuning& c, int threads) {
  if (!c.pinned) return c.chunk;
  const size_t per = c.pinned / (size_t(std::max(threads, 1)) * size_t(UploadTuning::kSlots));
  return std::min(c.chunk, std::max(size_t(4096), per));
}

PiecePlan::Piece PiecePlan::at(size_t i) const {
  if (rows_per_piece) {
    const size_t r0 = i * rows_per_piece;
    return Piece{r0, std::min(rows_per_piece, rows - r0), 0, width};
  }
  const size_t per_row = (width + cols_per_piece - 1) / cols_per_piece;
  const size_t r = i / per_row, c0 = (i % per_row) * cols_per_piece;
  return Piece{r, 1, c0, std::min(cols_per_piece, width - c0)};
}

}  // namespace parvis::cuda
