// Runs the data movement of cuda-opt's "smem" filter kernel (cuda/filter/opt_smem.cuh) on the
// host, block by block and step by step as convolve_mma_smem does: the ring rows each step loads
// (chunk_source, gather_chunk: copies, zeros, bordered bytes), the ring slots (checking that a
// load never lands on a slot a step at or after the current one still reads, and that every B
// read finds the row it expects), every lane's B words (b_offset), an m16n8k32 product of the
// banded tap matrix with the B columns those words make, and the outputs each warp stores.
// Every output must equal a direct bordered convolution (border_index, round_clamp) and be
// written once. Needs nvcc but no GPU. Build and run with
//   nvcc -std=c++17 -O2 -Isrc -Ibmp -Icuda tests/cuda/filter_smem_emulate.cu \
//        -o build/filter_smem_emulate && build/filter_smem_emulate
#include <cstdio>
#include <cstring>
#include <vector>

#include "filter/opt_smem.cuh"

namespace parvis {
const char* const kVersionName = "emulate";
}
using namespace parvis;
using namespace parvis::filter;

namespace {

uint32_t next(uint32_t* s) { return *s = *s * 1664525u + 1013904223u; }

struct Case {
  int width, height, channels, k, rb, warps, tile_rows;
  Border border;
};

// The A matrix of opt.cu's make_fragments, whole taps (digit planes are opt.cu's business):
// A[m][kk] = tap[ky][kx] where kk = o(m) + kx C + (lead - R C).
int a_entry(const std::vector<int32_t>& taps, int k, int ky, int channels, int lead, int m, int kk) {
  const int o = m < 8 ? 2 * m : 2 * (m - 8) + 1;
  const int rel = kk - o - (lead - (k / 2) * channels);
  if (rel < 0 || rel % channels != 0 || rel / channels >= k) return 0;
  return taps[size_t(ky) * k + rel / channels];
}

// One case: returns the number of problems found.
size_t check(const Case& c, uint32_t seed) {
  const int R = c.k / 2, C = c.channels;
  Geometry g{};
  g.width = c.width;
  g.height = c.height;
  g.channels = C;
  g.row_bytes = c.width * C;
  g.pitch = size_t(g.row_bytes + 15) & ~size_t(15);
  g.border = c.border;
  g.size = c.k;
  g.radius = R;
  g.lead = (R * C + 3) / 4 * 4;
  // The image in its pitched layout; the padding is 0xA5 (a read of it would change a sum).
  std::vector<uint8_t> img(g.pitch * size_t(c.height), 0xA5);
  for (int y = 0; y < c.height; ++y)
    for (int x = 0; x < g.row_bytes; ++x) img[size_t(y) * g.pitch + x] = uint8_t(next(&seed) >> 24);
  g.in = img.data();
  std::vector<int32_t> taps(size_t(c.k) * c.k);
  for (int32_t& t : taps) t = int32_t(next(&seed) >> 25) - 64;  // s8, negative ones included
  const int32_t divisor = 1 + int32_t(next(&seed) >> 22);        // 1 .. 1024, rarely a power of 2

  SmemTiling t{};
  t.warps = c.warps;
  t.strip_bytes = kUnitBytes * c.warps;
  t.row_chunks = t.strip_bytes / 16 + 2;
  t.ring_rows = kSmemStages * c.rb + 2 * R;
  t.strips = (g.row_bytes + t.strip_bytes - 1) / t.strip_bytes;
  t.tile_rows = c.tile_rows > 0 ? c.tile_rows : choose_tile_rows(c.height, t.strips, 7, c.rb, R);
  t.tiles = (long long)t.strips * ((c.height + t.tile_rows - 1) / t.tile_rows);
  const int rbytes = ring_row_bytes(t);

  std::vector<int> got(size_t(g.row_bytes) * c.height, -1);
  size_t bad = 0;
  auto problem = [&](const char* what, int a, int b) {
    if (bad++ < 5) std::printf("  %s (%d, %d)\n", what, a, b);
  };
  std::vector<uint8_t> ring(size_t(t.ring_rows) * rbytes);
  std::vector<int> owner(size_t(t.ring_rows));
  for (long long tile = 0; tile < t.tiles; ++tile) {
    const int x_strip = int(tile % t.strips) * t.strip_bytes;
    const int ys = int(tile / t.strips) * t.tile_rows;
    const int steps = (std::min(t.tile_rows, c.height - ys) + c.rb - 1) / c.rb;
    std::fill(ring.begin(), ring.end(), uint8_t(0x5A));
    std::fill(owner.begin(), owner.end(), -1);
    // Loads of a step issued while step `reading` (or a later one) may still be read.
    auto load = [&](int s, int reading) {
      int j0, j1;
      step_rows(s, c.rb, R, &j0, &j1);
      for (int j = j0; j < j1; ++j) {
        const int slot = j % t.ring_rows;
        if (owner[size_t(slot)] >= reading * c.rb) problem("load overwrites a live ring row", j, owner[size_t(slot)]);
        owner[size_t(slot)] = j;
        for (int ch = 0; ch < t.row_chunks; ++ch) {
          const ChunkSource src = chunk_source(g, x_strip, ys - R + j, ch);
          uint8_t* dst = &ring[size_t(slot) * rbytes + 16 * ch];
          if (src.kind == ChunkKind::Copy) {
            if (src.x < 0 || src.x % 16 || src.x + 16 > g.row_bytes) problem("misaligned or outside copy", j, src.x);
            std::memcpy(dst, g.in + size_t(src.sy) * g.pitch + src.x, 16);
          } else if (src.kind == ChunkKind::Zero) {
            std::memset(dst, 0, 16);
          } else {
            const uint4 w = gather_chunk(g, src);
            std::memcpy(dst, &w, 16);
          }
        }
      }
    };
    for (int s = 0; s < kSmemStages - 1; ++s)
      if (s < steps) load(s, 0);
    for (int s = 0; s < steps; ++s) {
      if (s + kSmemStages - 1 < steps) load(s + kSmemStages - 1, s);
      const int first = (s * c.rb) % t.ring_rows;
      for (int w = 0; w < t.warps; ++w) {
        const int x0 = x_strip + kUnitBytes * w;
        if (x0 >= g.row_bytes) continue;
        for (int o = 0; o < c.rb; ++o) {
          long long d[8][16] = {};  // D[m][n] for segment n, summed over the kernel rows
          for (int ky = 0; ky < c.k; ++ky) {
            const int r = o + ky, slot = (first + r) % t.ring_rows;
            if (owner[size_t(slot)] != s * c.rb + r) problem("B reads a ring row it does not expect", s, r);
            uint8_t bmat[8][32];  // B[k][n] as bmat[n][k], from the lanes' two words
            for (int lane = 0; lane < 32; ++lane) {
              const int off = b_offset(w, lane, g.lead), grp = lane >> 2, tt = lane & 3;
              if (off < 0 || off % 4 || off + kSegment + 4 > rbytes) problem("B word outside the ring row", w, lane);
              std::memcpy(&bmat[grp][4 * tt], &ring[size_t(slot) * rbytes + off], 4);
              std::memcpy(&bmat[grp][16 + 4 * tt], &ring[size_t(slot) * rbytes + off + kSegment], 4);
            }
            for (int n = 0; n < 8; ++n)
              for (int m = 0; m < 16; ++m)
                for (int kk = 0; kk < 32; ++kk)
                  d[n][m] += (long long)a_entry(taps, c.k, ky, C, g.lead, m, kk) * bmat[n][kk];
          }
          const int y = ys + s * c.rb + o;
          for (int n = 0; n < 8; ++n)
            for (int m = 0; m < 16; ++m) {
              const int x = x0 + kSegment * n + (m < 8 ? 2 * m : 2 * (m - 8) + 1);
              if (y >= c.height || x >= g.row_bytes) continue;  // store_unit_row's guard
              int& cell = got[size_t(y) * g.row_bytes + x];
              if (cell >= 0) problem("output written twice", x, y);
              cell = round_clamp(int32_t(d[n][m]), divisor);
            }
        }
      }
    }
  }
  // The reference: a direct bordered convolution.
  for (int y = 0; y < c.height; ++y)
    for (int x = 0; x < g.row_bytes; ++x) {
      int32_t sum = 0;
      for (int ky = 0; ky < c.k; ++ky) {
        const int sy = border_index(y + ky - R, c.height, c.border);
        if (sy < 0) continue;
        for (int kx = 0; kx < c.k; ++kx) {
          const int sp = border_index(x / C + kx - R, c.width, c.border);
          if (sp >= 0) sum += taps[size_t(ky) * c.k + kx] * img[size_t(sy) * g.pitch + size_t(sp) * C + x % C];
        }
      }
      const int cell = got[size_t(y) * g.row_bytes + x];
      if (cell != round_clamp(sum, divisor)) problem(cell < 0 ? "output never written" : "output differs", x, y);
    }
  std::printf("%s %dx%dx%d k%d rb %d warps %d tile %d (%d strips, %lld tiles) %s: %zu problems\n",
              bad ? "FAIL" : "ok  ", c.width, c.height, C, c.k, c.rb, c.warps, t.tile_rows, t.strips,
              t.tiles, c.border == Border::Zero ? "zero" : c.border == Border::Replicate ? "replicate" : "reflect101", bad);
  return bad;
}

}  // namespace

int main() {
  size_t bad = 0;
  uint32_t seed = 7;
  // Sizes below, at and above a strip (128 w bytes) and a tile, one pixel wide or high; rows per
  // step 8 (one digit plane) and 4 (two); 1, 2, 3 and 8 warps per block; tile heights of one
  // step, a few steps (a partial last step), and the host's choice (tile_rows 0).
  const int sizes[][2] = {{1, 1}, {2, 3}, {5, 4}, {43, 9}, {131, 67}, {1, 300}, {3, 37}, {171, 20}, {700, 13}};
  const Border borders[] = {Border::Zero, Border::Replicate, Border::Reflect101};
  const int warps[] = {1, 2, 3, 8};
  const int tiles[] = {0, 8, 24, 40};
  int i = 0;
  for (const auto& wh : sizes)
    for (int channels : {1, 3})
      for (int k : {3, 5}) {
        Case c{};
        c.width = wh[0];
        c.height = wh[1];
        c.channels = channels;
        c.k = k;
        c.rb = i % 2 ? 4 : 8;
        c.warps = warps[i % 4];
        c.tile_rows = tiles[(i / 2) % 4] / c.rb * c.rb;
        c.border = borders[i % 3];
        bad += check(c, seed + uint32_t(i)) != 0;
        ++i;
      }
  std::printf("%s\n", bad ? "emulation differs from the reference" : "every output matches the reference");
  return bad ? 1 : 0;
}
