// Runs cuda-opt's "lookback" integral kernel (cuda/integral/opt_lookback.cuh) on the host: its
// tile loads, pixel unpacking, pair stores, scratch layout and look-back decision are the
// header's own __host__ __device__ functions; the block scans and the block's phases are
// replayed here thread by thread, and the bands (blocks) are interleaved at random, a few
// resident at a time in ticket order as on the device, so that the look-back sees every mix of
// "nothing yet", "aggregate" and "inclusive" above it (and a schedule in which every resident
// band waits is reported as a deadlock). The image is cut into driver bands too (`above`, the
// previous band's last row), as driver.cuh does. Every element is compared with seq's.
// Needs nvcc but no GPU. Exit 0 when every case matches bit for bit. Build and run with
//   nvcc -std=c++17 -O2 -Isrc -Ibmp -Icuda tests/cuda/integral_emulate.cu src/integral/seq.cpp \
//        src/integral/integral.cpp src/common/image.cpp src/common/cli.cpp \
//        -o build/integral_emulate && build/integral_emulate
#include <algorithm>
#include <array>
#include <cstdio>
#include <random>
#include <vector>

#include "integral/integral.hpp"
#include "integral/opt_lookback.cuh"

namespace parvis {
const char* const kVersionName = "emulate";
}
using namespace parvis;
using namespace parvis::integral;
namespace lb = parvis::integral::lookback;

namespace {

// How far the look-backs reached: windows summed, of which past one band, and full windows of
// 32 aggregates (no inclusive prefix among them).
size_t g_windows = 0, g_multi = 0, g_full = 0;

// The kernel's block, one phase a step: 0 tile 0's aggregate (published), 1 the look-back of tile
// tx (one window of 32 bands a step; may have to wait), 2 tile tx's inclusive prefix published
// with the next tile's aggregate, then tile tx's rows.
template <typename T, int H, bool Vec>
struct Block {
  int64_t ty = 0, tx = 0, pred = 0;
  int phase = 0;
  uint64_t lb_sum = 0;
  using Tile = std::vector<std::array<uint32_t, H / 2>>;
  Tile q = Tile(lb::kThreads), qn = Tile(lb::kThreads);
  std::vector<uint64_t> c0 = std::vector<uint64_t>(lb::kThreads), c1 = c0, d0 = c0, d1 = c0;
  std::vector<uint64_t> left = std::vector<uint64_t>(H, 0);
};

template <typename T, int H, bool Vec>
struct Kernel {
  const uint8_t* in;
  T* out;
  const T* above;
  lb::Geom g;
  bool squared;
  lb::Scratch s;

  int64_t x_of(int64_t tx, int t) const { return tx * lb::kTileW + 2 * t; }

  // Exclusive scan over the threads of v(t), in u32 as block_excl.
  template <class F>
  std::vector<uint32_t> scan(F v, uint32_t* total) const {
    std::vector<uint32_t> ex(lb::kThreads);
    uint32_t acc = 0;
    for (int t = 0; t < lb::kThreads; ++t) {
      ex[size_t(t)] = acc;
      acc += v(t);
    }
    *total = acc;
    return ex;
  }

  // Tile tx's input into `tile`, its D into d0, d1 (lb_sum += its total), its first publication
  // stored (band 0: c0, c1 = above); the flag is the caller's.
  void aggregate(Block<T, H, Vec>& b, int64_t tx, typename Block<T, H, Vec>::Tile& tile) const {
    std::vector<uint32_t> k0(lb::kThreads), k1(lb::kThreads);
    for (int t = 0; t < lb::kThreads; ++t) {
      uint32_t(&q)[H / 2] = *reinterpret_cast<uint32_t(*)[H / 2]>(tile[size_t(t)].data());
      lb::load_tile<H, Vec>(in, g, b.ty * H, x_of(tx, t), q);
      lb::column_totals<H>(q, squared, &k0[size_t(t)], &k1[size_t(t)]);
    }
    uint32_t total;
    const auto ex = scan([&](int t) { return k0[size_t(t)] + k1[size_t(t)]; }, &total);
    for (int t = 0; t < lb::kThreads; ++t) {
      const size_t i = size_t(t);
      b.d0[i] = b.lb_sum + ex[i] + k0[i];
      b.d1[i] = b.d0[i] + k1[i];
      lb::store_first<T, Vec>(s, above, b.ty, x_of(tx, t), g.w, b.d0[i], b.d1[i], &b.c0[i], &b.c1[i]);
    }
    b.lb_sum += total;
  }

  // One step of block b; false when it must wait (the look-back found a band with no flag).
  bool step(Block<T, H, Vec>& b) const {
    const int64_t y0 = b.ty * H;
    const int nr = int(std::min<int64_t>(H, g.rows - y0));
    if (b.phase == 0) {
      aggregate(b, 0, b.q);
      *lb::flag_of(s, g, b.ty, 0) = b.ty == 0 ? lb::kInclusive : lb::kAggregate;
      b.phase = 1;
      b.pred = b.ty - 1;
      if (b.ty > 0)
        for (int t = 0; t < lb::kThreads; ++t) b.c0[size_t(t)] = b.c1[size_t(t)] = 0;
      return true;
    }
    if (b.phase == 1 && b.ty > 0) {
      uint32_t nonzero = 0, inclusive = 0;
      for (int lane = 0; lane < 32; ++lane) {
        const int64_t band = b.pred - lane;
        const uint32_t f = band >= 0 ? *lb::flag_of(s, g, band, b.tx) : 0u;
        nonzero |= uint32_t(f != 0) << lane;
        inclusive |= uint32_t(f == lb::kInclusive) << lane;
      }
      const lb::Window win = lb::decide(nonzero, inclusive);
      if (win.count == 0) return false;
      ++g_windows;
      g_multi += win.count > 1;
      g_full += !win.inclusive;
      for (int t = 0; t < lb::kThreads; ++t) {
        const int64_t x = x_of(b.tx, t);
        for (int k = 0; k < win.count; ++k) {
          const uint64_t* src = (win.inclusive && k == win.count - 1 ? s.inc : s.agg) + (b.pred - k) * g.w + x;
          lb::add_pair_l2<Vec>(src, x, g.w, &b.c0[size_t(t)], &b.c1[size_t(t)]);
        }
      }
      if (win.inclusive) b.phase = 2;
      else b.pred -= win.count;
      return true;
    }
    // phase 2 (band 0 comes straight here: its C is `above`, set by aggregate)
    const bool next = b.tx + 1 < g.ntx;
    if (b.ty > 0) {
      for (int t = 0; t < lb::kThreads; ++t) {
        const int64_t x = x_of(b.tx, t);
        if (x < g.w)
          lb::store_pair<uint64_t, Vec>(s.inc + b.ty * g.w + x, x, g.w, b.c0[size_t(t)] + b.d0[size_t(t)],
                                        b.c1[size_t(t)] + b.d1[size_t(t)]);
      }
    }
    const std::vector<uint64_t> c0 = b.c0, c1 = b.c1;  // this tile's C (aggregate() sets band 0's next)
    if (next) aggregate(b, b.tx + 1, b.qn);
    if (b.ty > 0) *lb::flag_of(s, g, b.ty, b.tx) = lb::kInclusive;
    if (next) *lb::flag_of(s, g, b.ty, b.tx + 1) = b.ty == 0 ? lb::kInclusive : lb::kAggregate;
    std::vector<uint32_t> k0(lb::kThreads, 0), k1(lb::kThreads, 0);
    for (int r = 0; r < nr; ++r) {
      for (int t = 0; t < lb::kThreads; ++t) {
        k0[size_t(t)] += lb::pixel(b.q[size_t(t)].data(), r, 0, squared);
        k1[size_t(t)] += lb::pixel(b.q[size_t(t)].data(), r, 1, squared);
      }
      uint32_t row_total;
      const auto e = scan([&](int t) { return k0[size_t(t)] + k1[size_t(t)]; }, &row_total);
      const uint64_t l = b.left[size_t(r)];
      for (int t = 0; t < lb::kThreads; ++t) {
        const int64_t x = x_of(b.tx, t);
        const size_t i = size_t(t);
        if (x < g.w)
          lb::store_pair<T, Vec>(out + (y0 + r) * g.w + x, x, g.w, c0[i] + l + e[i] + k0[i],
                                 c1[i] + l + e[i] + k0[i] + k1[i]);
      }
      b.left[size_t(r)] = l + row_total;
    }
    std::swap(b.q, b.qn);
    ++b.tx;
    b.phase = 1;
    b.pred = b.ty - 1;
    if (b.ty > 0)
      for (int t = 0; t < lb::kThreads; ++t) b.c0[size_t(t)] = b.c1[size_t(t)] = 0;
    return true;
  }
};

// One driver band (rows x w at `in`, result at `out`); false on a deadlock.
template <typename T, int H, bool Vec>
bool run_band(const uint8_t* in, T* out, const T* above, int64_t w, int64_t rows, bool squared, std::mt19937* rng) {
  const lb::Geom g = lb::make_geom(w, rows, H);
  std::vector<uint64_t> scratch_words((lb::scratch_bytes(g) + 7) / 8, 0x5a5a5a5a5a5a5a5aull);
  unsigned char* base = reinterpret_cast<unsigned char*>(scratch_words.data());
  std::fill(base, base + lb::flag_bytes(g), 0);  // the cudaMemsetAsync of run()
  const Kernel<T, H, Vec> k{in, out, above, g, squared, lb::carve(base, g)};
  const int resident = (*rng)() % 4 == 0 ? 48 : 1 + int((*rng)() % 6);
  std::vector<Block<T, H, Vec>> active;
  int64_t ticket = 0;
  for (;;) {
    while (int(active.size()) < resident && ticket < g.nbands) {
      active.emplace_back();
      active.back().ty = ticket++;
    }
    if (active.empty()) return true;
    // A random runnable block takes a few steps (skewed: some run ahead, some lag).
    std::vector<size_t> order(active.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), *rng);
    bool moved = false;
    for (size_t i : order) {
      const int steps = 1 + int((*rng)() % 4);
      for (int n = 0; n < steps && active[i].tx < g.ntx; ++n) {
        if (!k.step(active[i])) break;
        moved = true;
      }
      if (moved) break;
    }
    if (!moved) return false;
    for (size_t i = 0; i < active.size();)
      if (active[i].tx >= g.ntx) active.erase(active.begin() + long(i));
      else ++i;
  }
}

template <typename T>
T* elements(Result& r) {
  if constexpr (sizeof(T) == 4) return reinterpret_cast<T*>(r.u32.data());
  else if constexpr (std::is_same<T, double>::value) return r.f64.data();
  else return reinterpret_cast<T*>(r.u64.data());
}

// The image integrated in driver bands of `band_rows` rows; elements differing from seq's.
template <typename T, int H>
size_t check_typed(const Image& img, Type type, bool squared, int64_t band_rows, std::mt19937* rng, bool* deadlock) {
  Result ref;
  if (!compute(img, type, squared, &ref).ok()) return size_t(-1);
  const int64_t w = img.width, h = img.height;
  std::vector<T> out(size_t(w * h), T(0));
  for (int64_t y0 = 0; y0 < h; y0 += band_rows) {
    const int64_t n = std::min(band_rows, h - y0);
    const T* above = y0 > 0 ? out.data() + (y0 - 1) * w : nullptr;
    const uint8_t* in = img.pixels.data() + y0 * w;
    const bool ok = w % 2 == 0 ? run_band<T, H, true>(in, out.data() + y0 * w, above, w, n, squared, rng)
                               : run_band<T, H, false>(in, out.data() + y0 * w, above, w, n, squared, rng);
    if (!ok) *deadlock = true;
  }
  const T* want = elements<T>(ref);
  size_t bad = 0;
  for (size_t i = 0; i < out.size(); ++i) bad += out[i] != want[i];
  return bad;
}

size_t check(int w, int h, int fill, Type type, bool squared, int h_rows, int64_t band_rows, std::mt19937* rng) {
  Image img;
  if (!image_alloc(w, h, 1, &img).ok()) return 1;
  for (uint8_t& p : img.pixels) p = fill >= 0 ? uint8_t(fill) : uint8_t((*rng)() >> 24);
  bool deadlock = false;
  size_t bad;
  const bool h16 = h_rows == 16;
  if (type == Type::U32) bad = h16 ? check_typed<uint32_t, 16>(img, type, squared, band_rows, rng, &deadlock)
                                   : check_typed<uint32_t, 32>(img, type, squared, band_rows, rng, &deadlock);
  else if (type == Type::U64) bad = h16 ? check_typed<uint64_t, 16>(img, type, squared, band_rows, rng, &deadlock)
                                        : check_typed<uint64_t, 32>(img, type, squared, band_rows, rng, &deadlock);
  else bad = h16 ? check_typed<double, 16>(img, type, squared, band_rows, rng, &deadlock)
                 : check_typed<double, 32>(img, type, squared, band_rows, rng, &deadlock);
  if (deadlock) bad = bad ? bad : 1;
  std::printf("%s %dx%d %s%s %s H %d, driver bands of %lld rows: %zu differ%s\n", bad ? "FAIL" : "ok  ", w, h,
              type_name(type), squared ? " squared" : "", fill >= 0 ? "all-255" : "noise", h_rows,
              static_cast<long long>(band_rows), bad, deadlock ? " (DEADLOCK: every resident band waited)" : "");
  return bad;
}

}  // namespace

int main() {
  std::mt19937 rng(2026);
  size_t bad = 0;
  const int64_t whole = int64_t(1) << 40;
  // Odd and even widths around the tile width (512) and the warp, heights around H.
  const int sizes[][2] = {{1, 1}, {31, 33}, {33, 31}, {2, 3}, {1, 2049}, {2049, 1}, {1023, 65}, {1025, 33},
                          {2049, 47}, {512, 16}, {513, 17}, {1027, 769}, {64, 1100}};
  const Type types[] = {Type::U32, Type::U64, Type::F64};
  int i = 0;
  for (const auto& s : sizes)
    for (int h_rows : {16, 32}) {
      const Type t = types[i % 3];
      bad += check(s[0], s[1], -1, t, false, h_rows, whole, &rng);
      bad += check(s[0], s[1], -1, t == Type::U32 ? Type::U64 : t, true, h_rows, whole, &rng);
      bad += check(s[0], s[1], -1, types[(i + 1) % 3], false, h_rows, 7 + i % 40, &rng);  // driver bands
      ++i;
    }
  // All-255 at the u32 limit (W*H*255 < 2^32), plain and squared (W*H*255^2 < 2^32), and beyond.
  bad += check(4096, 4112, 255, Type::U32, false, 32, whole, &rng);
  bad += check(4096, 4112, 255, Type::U32, false, 16, 1000, &rng);
  bad += check(4097, 4112, 255, Type::U64, false, 32, whole, &rng);
  bad += check(257, 257, 255, Type::U32, true, 32, whole, &rng);
  bad += check(258, 257, 255, Type::F64, true, 16, 100, &rng);
  std::printf("look-back windows: %zu, %zu past one band, %zu of 32 aggregates\n", g_windows, g_multi, g_full);
  if (g_multi == 0 || g_full == 0) {
    std::printf("FAIL the schedules never made the look-back reach past one band or a full window\n");
    ++bad;
  }
  std::printf("%s\n", bad ? "emulation differs from seq" : "every element matches seq");
  return bad ? 1 : 0;
}
