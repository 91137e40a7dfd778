// Runs cuda-opt's separable filter kernel (cuda/filter/opt_sep.cuh, convolve_sep) on the host:
// the grid of warps of sep_grid, each warp's 32 lanes in lock step through the kernel's steps
// (sep_load, the shuffles, sep_window, sep_horizontal, the ring, the row loaded ahead,
// sep_vertical_finish, the 16-byte stores), on the pitched layout the GPU uses
// (padding filled with 0xA5, so a read of it changes a sum). Every output byte must equal a
// direct bordered 2-D convolution (border_index, round_clamp) and be written once; no store may
// leave the row's pitch. Kernels: the bank's separable ones (gaussian: power-of-two finish; box,
// identity), the ones with a centre tap besides (unsharp, edge 3x3: the per-byte finish), random
// outer products up to the 16-bit bound, divisors that clamp, and kernels it must refuse.
// The cp.async kernel (cuda/filter/opt_sep_async.cuh, convolve_sep_async) likewise: its NS
// (kSepAsyncSlots) shared-memory slots a warp on the host, the 34 chunk copies of each row (sep_async_chunk's
// zero-fill), the slot a step copies into and the one it reads (a read of a slot that does not
// hold the row, or a copy that leaves the row's pitch, is a problem), the ring named by t % K.
// Needs nvcc but no GPU. Build and run with (filter.cpp for the bank; the linker drops the rest)
//   nvcc -std=c++17 -O2 -Iinclude -Isrc -Ibmp -Icuda tests/cuda/filter_sep_emulate.cu src/filter/filter.cpp \
//        -Xcompiler -ffunction-sections -Xlinker --gc-sections -o build/filter_sep_emulate && build/filter_sep_emulate
#include <cstdio>
#include <cstring>
#include <vector>

#include <climits>

#include "filter/opt_sep_async.cuh"
#include "filter/opt_sep_params.cuh"

namespace parvis {
const char* const kVersionName = "emulate";
}
using namespace parvis;
using namespace parvis::filter;

namespace {

uint32_t next(uint32_t* s) { return *s = *s * 1664525u + 1013904223u; }

struct Image8 {
  std::vector<uint8_t> in, out;
  std::vector<int> writes;
};

// One warp, lane by lane in lock step, as convolve_sep<K, C, F> runs it: each source row loaded
// one step ahead of its use.
template <int K, int C>
void run_warp(const Geometry& g, const SepParams& p, long long wid, Image8& im, size_t* bad) {
  using S = SepShape<K, C>;
  const SepWarp sw = sep_warp(g, p, wid);
  const int first = sw.ys - S::R, last = sw.ye - 1 + S::R;
  SepRaw<S::HW> ahead[32];
  uint32_t ring[32][K][8] = {};
  auto x0_of = [&](int lane) { return sw.xw + kSepLaneBytes * lane; };
  for (int lane = 0; lane < 32; ++lane) ahead[lane] = sep_load<S::HW>(g, first, x0_of(lane), lane, first <= last);
  auto step = [&](int nxt) {
    SepRaw<S::HW> cur[32];
    for (int lane = 0; lane < 32; ++lane) {
      cur[lane] = ahead[lane];
      ahead[lane] = sep_load<S::HW>(g, nxt, x0_of(lane), lane, nxt <= last);
      for (int r = 0; r + 1 < K; ++r)
        for (int i = 0; i < 8; ++i) ring[lane][r][i] = ring[lane][r + 1][i];
    }
    for (int lane = 0; lane < 32; ++lane) {
      uint32_t left[S::HW], right[S::HW], w[S::NW];
      for (int i = 0; i < S::HW; ++i) {  // __shfl_up/down: lanes 0 and 31 get their own value
        left[i] = cur[lane > 0 ? lane - 1 : lane].v[4 - S::HW + i];
        right[i] = cur[lane < 31 ? lane + 1 : lane].v[i];
      }
      sep_window<S::HW, S::NW>(cur[lane], left, right, lane, w);
      sep_horizontal<K, C>(w, p, ring[lane][K - 1]);
    }
  };
  for (int r = 0; r < K - 1; ++r) step(first + r + 1);
  for (int y = sw.ys; y < sw.ye; ++y) {
    step(y + S::R + 1);
    for (int lane = 0; lane < 32; ++lane) {
      const int x0 = x0_of(lane);
      if (x0 >= g.row_bytes) continue;
      if (size_t(x0) + kSepLaneBytes > g.pitch && (*bad)++ < 5) std::printf("  store past the pitch at %d\n", x0);
      uint32_t px[4], out[4];
      sep_with_finish(p.finish, [&](auto f) {
        sep_centre<decltype(f)::value>(g, y, x0, px);
        sep_vertical_finish<K, decltype(f)::value>(ring[lane], p, px, out);
      });
      std::memcpy(&im.out[size_t(y) * g.pitch + x0], out, kSepLaneBytes);
      for (int i = 0; i < kSepLaneBytes && x0 + i < g.row_bytes; ++i) ++im.writes[size_t(y) * g.row_bytes + x0 + i];
    }
  }
}

// One warp of convolve_sep_async<K, C, F>, its steps in the kernel's order; a copy lands when
// issued (the kernel's wait and __syncwarp make it so before the read).
template <int K, int C>
void run_warp_async(const Geometry& g, const SepParams& p, long long wid, Image8& im, size_t* bad) {
  constexpr int NS = kSepAsyncSlots;
  using S = SepShape<K, C>;
  const SepWarp sw = sep_warp(g, p, wid);
  const int first = sw.ys - S::R, n = sw.ye - sw.ys + 2 * S::R;
  const int NSL = NS + sep_async_history(p.finish, K);  // the history slots of the centre finishes
  std::vector<uint8_t> slots(size_t(NSL) * kSepAsyncSlotBytes, 0x5A);
  std::vector<int> holds(NSL, INT_MIN);  // the strip row each slot holds
  uint32_t ring[32][K][8] = {};
  auto copy_row = [&](int t) {
    uint8_t* slot = &slots[size_t(t % NSL) * kSepAsyncSlotBytes];
    holds[t % NSL] = t;  // past the strip (t >= n) nothing is copied and the slot is never read
    if (t >= n) return;
    const int y = first + t;
    const bool inside = y >= 0 && y < g.height;
    int copies[kSepAsyncChunks] = {};
    auto copy = [&](int c, const SepAsyncChunk& ch) {  // sep_async_row's copy of a chunk
      ++copies[c];
      const int bytes = inside ? ch.bytes : 0;
      const size_t off = size_t(y) * g.pitch + size_t(ch.x);
      if ((bytes < 0 || bytes > 16 || (bytes > 0 && (ch.x % 16 != 0 || size_t(ch.x) + 16 > g.pitch))) && (*bad)++ < 5)
        std::printf("  chunk %d of row %d: %d bytes at x %d\n", c, y, bytes, ch.x);
      std::memset(slot + 16 * c, 0, 16);
      if (bytes > 0) std::memcpy(slot + 16 * c, g.in + off, size_t(bytes));
    };
    for (int lane = 0; lane < 32; ++lane) {
      const SepAsyncLane l = sep_async_lane(g, sw.xw, lane);
      copy(lane + 1, l.own);
      if (l.halo_c >= 0) copy(l.halo_c, l.halo);
    }
    for (int c = 0; c < kSepAsyncChunks; ++c)
      if (copies[c] != 1 && (*bad)++ < 5) std::printf("  chunk %d of row %d copied %d times\n", c, y, copies[c]);
  };
  for (int t = 0; t + 1 < NS; ++t) copy_row(t);
  for (int t = 0; t < n; ++t) {
    copy_row(t + NS - 1);
    if (holds[t % NSL] != t && (*bad)++ < 5) std::printf("  step %d reads a slot holding row %d\n", t, holds[t % NSL]);
    const int tc = t - S::R;  // the centre row's slot (history only)
    if (NSL > NS && t >= K - 1 && holds[tc % NSL] != tc && (*bad)++ < 5)
      std::printf("  step %d reads the centre from a slot holding row %d\n", t, holds[tc % NSL]);
    const int y = first + t - S::R;
    for (int lane = 0; lane < 32; ++lane) {
      uint32_t w[S::NW];
      sep_async_window<S::HW, S::NW>(&slots[size_t(t % NSL) * kSepAsyncSlotBytes], lane, w);
      sep_horizontal<K, C>(w, p, ring[lane][t % K]);
      const int x0 = sw.xw + 16 * lane;
      if (t < K - 1 || x0 >= g.row_bytes) continue;
      uint32_t ordered[K][8], px[4] = {0, 0, 0, 0}, out[4];
      for (int ky = 0; ky < K; ++ky)
        for (int i = 0; i < 8; ++i) ordered[ky][i] = ring[lane][(t + 1 + ky) % K][i];
      if (size_t(x0) + 16 > g.pitch && (*bad)++ < 5) std::printf("  store past the pitch at %d\n", x0);
      if (NSL > NS) sep_async_centre(&slots[size_t(tc % NSL) * kSepAsyncSlotBytes], lane, px);
      sep_with_finish(p.finish, [&](auto f) { sep_vertical_finish<K, decltype(f)::value>(ordered, p, px, out); });
      std::memcpy(&im.out[size_t(y) * g.pitch + x0], out, 16);
      for (int i = 0; i < 16 && x0 + i < g.row_bytes; ++i) ++im.writes[size_t(y) * g.row_bytes + x0 + i];
    }
  }
}

struct Case {
  int width, height, channels;
  Kernel kernel;
  Border border;
  bool async;          // the cp.async kernel, else the register kernel
  int strip_rows;      // 0: sep_grid's one wave of `resident` warps
  long long resident;
};

// Returns the number of problems (0: every byte right and written once).
template <int K, int C>
size_t run_case(const Case& c, uint32_t seed) {
  Geometry g{};
  g.width = c.width;
  g.height = c.height;
  g.channels = C;
  g.row_bytes = c.width * C;
  g.pitch = size_t(g.row_bytes + 15) & ~size_t(15);
  g.border = c.border;
  g.size = K;
  g.radius = K / 2;
  Image8 im;
  im.in.assign(g.pitch * size_t(c.height), 0xA5);
  im.out.assign(g.pitch * size_t(c.height), 0);
  im.writes.assign(size_t(g.row_bytes) * c.height, 0);
  for (int y = 0; y < c.height; ++y)
    for (int x = 0; x < g.row_bytes; ++x) im.in[size_t(y) * g.pitch + x] = uint8_t(next(&seed) >> 24);
  g.in = im.in.data();
  g.out = im.out.data();
  SepParams p{};
  std::string why;
  if (!sep_params(c.kernel, c.border, C, cuda_filter::make_device_divider(c.kernel.divisor), &p, &why)) {
    std::printf("  the kernel was refused: %s\n", why.c_str());
    return 1;
  }
  sep_grid(g, c.resident, c.strip_rows, &p);
  size_t bad = 0;
  for (long long wid = 0; wid < p.warps; ++wid)
    if (c.async) run_warp_async<K, C>(g, p, wid, im, &bad);
    else run_warp<K, C>(g, p, wid, im, &bad);
  const int R = K / 2;
  for (int y = 0; y < c.height; ++y)
    for (int x = 0; x < g.row_bytes; ++x) {
      const int px = x / C, ch = x % C;
      int32_t sum = 0;
      for (int ky = 0; ky < K; ++ky) {
        const int sy = border_index(y + ky - R, c.height, c.border);
        if (sy < 0) continue;
        for (int kx = 0; kx < K; ++kx) {
          const int sx = border_index(px + kx - R, c.width, c.border);
          if (sx >= 0) sum += c.kernel.taps[size_t(ky) * K + kx] * int32_t(im.in[size_t(sy) * g.pitch + size_t(sx) * C + ch]);
        }
      }
      const int want = round_clamp(sum, c.kernel.divisor), got = im.out[size_t(y) * g.pitch + x];
      const int n = im.writes[size_t(y) * g.row_bytes + x];
      if ((want != got || n != 1) && bad++ < 5)
        std::printf("  (%d, %d): got %d, want %d, written %d times\n", x, y, got, want, n);
    }
  std::printf("%s %dx%dx%d k%d %s %s rows %d warps %lld %s: %s\n", c.kernel.name.c_str(), c.width, c.height, C, K,
              border_name(c.border), c.async ? "async" : "registers", p.strip_rows, p.warps, sep_finish_name(p.finish),
              bad ? "FAILED" : "ok");
  return bad;
}

Kernel outer_kernel(const char* name, const std::vector<int32_t>& col, const std::vector<int32_t>& row, int32_t d) {
  Kernel k;
  k.name = name;
  k.size = int(row.size());
  for (int32_t a : col)
    for (int32_t b : row) k.taps.push_back(a * b);
  k.divisor = d;
  return k;
}

}  // namespace

int main() {
  uint32_t seed = 12345;
  std::vector<Kernel> kernels;
  for (const char* name : {"gaussian", "box", "identity", "unsharp", "edge"})
    for (int size : {3, 5}) {
      Kernel k;
      builtin_kernel(name, size, &k);
      if (k.name != "edge" || size == 3) kernels.push_back(k);  // edge 3x3 = 9 delta - ones
    }
  // Random non-negative outer products at the 16-bit bound (sum(row) sum(col) <= 256), divisors
  // small enough to clamp; one of each size with a power of two that needs the clamp (magic path).
  kernels.push_back(outer_kernel("rand5", {0, 3, 7, 2, 4}, {1, 2, 0, 5, 8}, 37));   // 16 x 16
  kernels.push_back(outer_kernel("rand3", {9, 1, 6}, {2, 11, 3}, 100));             // 16 x 16
  kernels.push_back(outer_kernel("pow2clamp", {1, 2, 1}, {1, 2, 1}, 8));            // sums to 16, d 8
  Kernel negk = outer_kernel("neg", {1, 2, 1}, {1, 2, 1}, 16), cross = negk;  // -gaussian, + centre
  for (int32_t& t : negk.taps) t = -t;
  kernels.push_back(negk);
  negk.taps[4] += 300;
  negk.name = "negcentre";
  kernels.push_back(negk);
  Kernel plus = outer_kernel("pluscentre", {1, 4, 6, 4, 1}, {1, 4, 6, 4, 1}, 256);  // + 256 delta: sign +, c = 1
  plus.taps[12] += 256;
  kernels.push_back(plus);
  cross.taps[3] = 5;  // (1, 0) made 5: rank 2 beyond a centre tap, refused
  cross.name = "cross";
  Kernel sharpen3, sharpen5, edge5;
  builtin_kernel("sharpen", 3, &sharpen3);
  builtin_kernel("sharpen", 5, &sharpen5);
  builtin_kernel("edge", 5, &edge5);
  for (const Kernel& k : {cross, sharpen3, sharpen5, edge5}) {
    std::vector<int32_t> c, r;
    int32_t centre = 0, sign = 0;
    if (sep_decompose(k, &c, &r, &centre, &sign)) {
      std::printf("%s: decomposed, expected refused\n", k.name.c_str());
      return 1;
    }
  }
  kernels.push_back(outer_kernel("pow2big", {1, 2, 1}, {1, 2, 1}, 1024));          // 2^10: magic path
  kernels.push_back(outer_kernel("pow2max", {1, 6, 14, 6, 1}, {1, 2, 3, 2, 1}, 256)); // 2^8 shift, q <= 255
  const Border borders[] = {Border::Zero};  // the others take auto's path
  const int sizes[][2] = {{1, 1}, {2, 3}, {17, 5}, {171, 9}, {200, 37}};
  size_t bad = 0, cases = 0;
  auto run = [&](const Case& c) {
    ++cases;
    const int k = c.kernel.size;
    if (c.channels == 1) bad += k == 3 ? run_case<3, 1>(c, seed++) : run_case<5, 1>(c, seed++);
    else bad += k == 3 ? run_case<3, 3>(c, seed++) : run_case<5, 3>(c, seed++);
  };
  for (const Kernel& k : kernels)
    for (Border b : borders)
      for (const auto& s : sizes)
        for (int ch : {1, 3}) {
          run(Case{s[0], s[1], ch, k, b, false, 0, 7});
          run(Case{s[0], s[1], ch, k, b, false, 1 + int(next(&seed) % 13), 0});  // filter.sep_rows
          run(Case{s[0], s[1], ch, k, b, true, 0, 7});
        }
  // Strip boundaries: strips of 7, 8 and 13 rows (not multiples of K) on a larger odd image.
  for (int rows : {7, 8, 13}) run(Case{1027, 769, 3, kernels[1], Border::Zero, false, rows, 0});
  run(Case{1027, 769, 3, kernels[3], Border::Zero, false, 0, 3168});
  run(Case{1027, 769, 1, kernels[0], Border::Zero, false, 0, 3168});
  // The issue's 8K and 4K RGB workloads on an H100's grids (132 SMs x 16, 24 or 32 warps).
  run(Case{7680, 4320, 3, kernels[1], Border::Zero, false, 0, 2112});
  run(Case{7680, 4320, 3, kernels[1], Border::Zero, false, 0, 4224});
  run(Case{3840, 2160, 3, kernels[7], Border::Zero, false, 0, 3168});  // unsharp 5x5: the centre tap
  run(Case{1027, 769, 3, kernels[8], Border::Zero, false, 13, 0});     // edge 3x3
  run(Case{3840, 2160, 3, kernels[1], Border::Zero, false, 0, 2112});
  run(Case{1029, 77, 1, kernels[3], Border::Zero, false, 0, 0});       // grey, one strip a column
  run(Case{7680, 4320, 3, kernels[0], Border::Zero, false, 0, 3168});
  run(Case{3840, 2160, 3, kernels[3], Border::Zero, false, 0, 2112});
  run(Case{7680, 4320, 3, kernels[7], Border::Zero, false, 0, 2112});
  run(Case{1027, 769, 3, kernels[8], Border::Zero, false, 13, 0});
  // The cp.async kernel on the strips and grids above: odd strips, the 8K and 4K one-wave grids
  // (132 SMs x 24 warps at K = 5, 32 at K = 3), grey, the per-byte finish.
  for (int rows : {7, 13}) run(Case{1027, 769, 3, kernels[1], Border::Zero, true, rows, 0});
  for (const Case& c : {Case{7680, 4320, 3, kernels[1], Border::Zero, true, 0, 3168},
                        Case{7680, 4320, 3, kernels[0], Border::Zero, true, 0, 4224},
                        Case{3840, 2160, 3, kernels[1], Border::Zero, true, 0, 3168},
                        Case{3840, 2160, 3, kernels[7], Border::Zero, true, 0, 3168},
                        Case{1029, 77, 1, kernels[3], Border::Zero, true, 0, 0},
                        Case{1027, 769, 3, kernels[8], Border::Zero, true, 13, 0}})
    run(c);
  std::printf("%zu cases, %zu problems\n", cases, bad);
  return bad ? 1 : 0;
}
