// The pieces a staged copy cuts its rows into (host code, tested by tests/cuda/upload_pieces.cu):
// whole rows, at most `chunk` bytes and at least one row, when a row fits in `chunk`; else each
// row in pieces of `chunk` bytes. Pieces shrink so that each of `threads` workers gets two where
// the image is small (never below 64 KiB).
#pragma once
#include <cstddef>

#include "upload/tuning.hpp"

namespace parvis::cuda {

struct PiecePlan {
  size_t width = 0, rows = 0;
  size_t rows_per_piece = 0;  // whole-row pieces; 0 when rows are split
  size_t cols_per_piece = 0;  // split rows: bytes per piece
  size_t count = 0;
  size_t piece_bytes = 0;     // the largest piece
  struct Piece {
    size_t row0, nrows, col0, ncols;
  };
  Piece at(size_t i) const;
};
PiecePlan plan_pieces(size_t width, size_t rows, size_t chunk, int threads, bool whole_rows = false);
// The chunk a staged copy on `threads` threads plans with: tuning.chunk, lowered where
// tuning.pinned caps the slots (threads x slots x chunk <= pinned, never below 4 KiB).
size_t piece_limit(const UploadTuning& tuning, int threads);

}  // namespace parvis::cuda
