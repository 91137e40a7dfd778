// The user's rows into the staged copier's pinned memory (copier.cu): SlotWriter, which
// streams whole aligned 16-byte blocks, and the piece-level copies built on it. Host code only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "upload/plan.hpp"

namespace parvis::cuda::upload {

// Bytes into a pinned slot, in order (rows, then their pads). `nt`: with non-temporal stores where
// the host has them (x86-64): the slot is read next by the DMA, not by this core, so its lines
// need no read for ownership and do not evict the source from the cache (UploadTuning::nt).
// Only whole aligned 16-byte blocks are streamed, assembled across row ends and pads: a line
// that took both streamed and plain stores cost more than memcpy. finish() writes the last
// partial block and fences, before the DMA.
class SlotWriter {
 public:
  SlotWriter(uint8_t* dst, bool nt) : d_(dst), nt_(nt) {
#if !defined(__SSE2__)
    nt_ = false;
#endif
  }
  // n bytes of src (null: zeros).
  void put(const uint8_t* src, size_t n) {
    if (!nt_) {
      src ? std::memcpy(d_, src, n) : std::memset(d_, 0, n);
      d_ += n;
      return;
    }
#if defined(__SSE2__)
    while (n > 0 && (fill_ || (reinterpret_cast<uintptr_t>(d_) & 15))) {  // a partial block first
      if (!fill_ && (reinterpret_cast<uintptr_t>(d_) & 15)) {  // unaligned start: plain bytes
        const size_t k = std::min(n, 16 - (reinterpret_cast<uintptr_t>(d_) & 15));
        src ? std::memcpy(d_, src, k) : std::memset(d_, 0, k);
        d_ += k, n -= k;
        if (src) src += k;
        continue;
      }
      const size_t k = std::min(n, 16 - fill_);
      src ? std::memcpy(buf_ + fill_, src, k) : std::memset(buf_ + fill_, 0, k);
      fill_ += k, n -= k;
      if (src) src += k;
      if (fill_ == 16) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(d_), _mm_load_si128(reinterpret_cast<const __m128i*>(buf_)));
        d_ += 16, fill_ = 0;
      }
    }
    const size_t blocks = n & ~size_t(15);
    if (src) {
      size_t k = 0;
      for (; k + 64 <= blocks; k += 64) {
        const __m128i a = load(src + k), b = load(src + k + 16), c = load(src + k + 32), e = load(src + k + 48);
        store(d_ + k, a), store(d_ + k + 16, b), store(d_ + k + 32, c), store(d_ + k + 48, e);
      }
      for (; k < blocks; k += 16) store(d_ + k, load(src + k));
      src += blocks;
    } else {
      for (size_t k = 0; k < blocks; k += 16) store(d_ + k, _mm_setzero_si128());
    }
    d_ += blocks, n -= blocks;
    if (n) {  // the start of a partial block
      src ? std::memcpy(buf_, src, n) : std::memset(buf_, 0, n);
      fill_ = n;
    }
#endif
  }
  void finish() {
    if (fill_) std::memcpy(d_, buf_, fill_);
    d_ += fill_, fill_ = 0;
#if defined(__SSE2__)
    if (nt_) _mm_sfence();  // the streamed stores visible before the DMA is issued
#endif
  }

 private:
#if defined(__SSE2__)
  static __m128i load(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  static void store(uint8_t* p, __m128i v) { _mm_stream_si128(reinterpret_cast<__m128i*>(p), v); }
#endif
  uint8_t* d_;
  bool nt_;
  alignas(16) uint8_t buf_[16] = {};
  size_t fill_ = 0;
};

// Rows [r0, r1) of a piece of the user's rows (`pitch` apart) through w, which writes the
// piece's pinned memory as its DMA takes it: rows `padded` apart with zeroed pads (padded != 0),
// else tight rows.
inline void fill_rows(SlotWriter& w, const uint8_t* base, size_t pitch, const PiecePlan::Piece& p,
               size_t r0, size_t r1, size_t padded) {
  const uint8_t* s = base + p.row0 * pitch + p.col0;
  if (!padded && pitch == p.ncols) return w.put(s + r0 * pitch, (r1 - r0) * p.ncols);
  for (size_t r = r0; r < r1; ++r) {
    w.put(s + r * pitch, p.ncols);
    if (padded) w.put(nullptr, padded - p.ncols);
  }
}
// A whole piece into the pinned memory at h.
inline void fill_piece(uint8_t* h, const uint8_t* src, size_t spitch, const PiecePlan::Piece& pc,
                size_t padded, bool nt) {
  SlotWriter w(h, nt);
  fill_rows(w, src, spitch, pc, 0, pc.nrows, padded);
  w.finish();
}
inline void unpack(uint8_t* base, size_t pitch, const uint8_t* slot, const PiecePlan::Piece& p) {
  uint8_t* d = base + p.row0 * pitch + p.col0;
  if (pitch == p.ncols) {
    std::memcpy(d, slot, p.nrows * p.ncols);
    return;
  }
  for (size_t r = 0; r < p.nrows; ++r) std::memcpy(d + r * pitch, slot + r * p.ncols, p.ncols);
}

}  // namespace parvis::cuda::upload
