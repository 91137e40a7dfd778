// ./main bench upload (CUDA versions): the host link, measured the ways the copier
// (cuda/upload/upload.hpp) can copy a user's pageable image, so that its defaults (the threads,
// the pieces, auto's threshold; cuda/upload/tuning.hpp) are chosen on numbers. Every row starts
// from upload_tuning() (PARVIS_TUNING's upload.* keys apply) and sets what its name says. For
// each size:
//   h2d-pinned          cudaMemcpyAsync from page-locked memory: the floor of the link
//   h2d-pageable        one cudaMemcpy2DAsync from the pageable image (the driver stages it)
//   h2d-staged-<C>M     staged, T threads (the threads column), slot pieces of at most C MiB
//   h2d-auto            the default tuning
//   h2d-memcpy          auto with the pinned memory written by memcpy (upload.nt=0)
//   h2d-cap<P>M         auto with upload.pinned=<P>M (smaller pieces, fewer pinned bytes)
//   d2h-*               the same back to a pageable image
// and for the RGB sizes the whole "RGB pageable -> grey on the device" path:
//   gray-host-<how>     to_gray on the host, then the grey uploaded
//   gray-device-<how>   the RGB bytes uploaded and converted by gray_of on the GPU
// Each: one warm-up call whose result is checked against the source (a mismatch fails the
// bench), then calls until --seconds have passed (at least 5, at most 400); the median of the
// wall time from the call to the end of its copy.
// What one plain call pays (a process's first copy), a FRESH copier each repetition (its first
// result checked like the others), for auto, staged on 1/2/4 threads, auto with the pinned bytes
// capped at 1 and 4 MiB, memcpy and pageable (and gray-device-* for RGB):
//   <row>-fresh         init (streams, events, the pool's threads) + prepare (the pinned block)
//                       + the copy: the whole cost of a copier made for one call
//   <row>-first         the copy alone, of the same fresh copier, 2 ms after its prepare (the
//                       pool's threads asleep again, as in a call): what a `match` call's
//                       upload span holds (its prepare runs before the span)
// --first prints only these (and the pinned floor and the prepared auto row for reference).
// Lines on stdout:
//   upload SIZE METHOD THREADS MEDIAN_MS REPS GB/S PIECE_KIB
// (GB/s = the image's bytes / median; gray-*: the RGB bytes). bench/run_upload.sh turns them
// into times.csv rows.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common.cuh"
#include "cli/cli.hpp"
#include "common/image.hpp"
#include "cli/subcommands.hpp"
#include "upload/upload.hpp"

namespace parvis {

namespace {

struct Size {
  const char* name;
  int w, h, c;
};
const Size kSizes[] = {
    {"512x512", 512, 512, 1},         // 0.26 MB
    {"1326x1025", 1326, 1025, 1},     // 1.36 MB: seed 000's source, grey
    {"1326x1025x3", 1326, 1025, 3},   // 4.08 MB: the same in RGB
    {"3840x2160", 3840, 2160, 1},     // 8.3 MB
    {"3840x2160x3", 3840, 2160, 3},   // 24.9 MB
    {"10000x10000", 10000, 10000, 1}, // 100 MB
};

cuda::UploadTuning copier_config(cuda::Transfer mode, int threads, size_t chunk) {
  cuda::UploadTuning c = cuda::upload_tuning();
  c.mode = mode;
  c.threads = threads;
  c.chunk = chunk;
  return c;
}

struct Options {
  double seconds = 0.1;
  std::vector<std::string> only;  // size names; empty: all
  bool quick = false;             // threads 4 and 8, chunks 2 and 4 MiB only
  bool first = false;             // only the first-call rows (-fresh, -first)
};

template <typename Call>
Status time_calls(double seconds, Call call, double* median_ms, int* reps) {
  std::vector<double> t;
  const double start = now_ms();
  while (t.size() < 400 && (t.size() < 5 || now_ms() - start < seconds * 1000.0)) {
    const double a = now_ms();
    PARVIS_TRY(call());
    t.push_back(now_ms() - a);
  }
  std::sort(t.begin(), t.end());
  *median_ms = t[t.size() / 2];
  *reps = int(t.size());
  return Status::Ok();
}

void line(const Size& s, const std::string& method, int threads, double ms, int reps,
          size_t bytes, size_t piece) {
  std::printf("upload %s %s %d %.4f %d %.2f %zu\n", s.name, method.c_str(), threads, ms, reps,
              double(bytes) / (ms * 1e6), piece >> 10);
  std::fflush(stdout);
}

Status bench_size(const Size& s, const Options& o) {
  const size_t row = size_t(s.w) * s.c, bytes = row * s.h;
  const size_t dpitch = (row + 16 + 15) / 16 * 16;  // as the matcher's source rows
  Image src;
  PARVIS_TRY(image_alloc(s.w, s.h, s.c, &src));
  uint64_t z = 0x9E3779B97F4A7C15ull ^ bytes;
  for (size_t i = 0; i < src.pixels.size(); ++i) {
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    src.pixels[i] = uint8_t(z >> 56);
  }
  cuda::DeviceBuffer<uint8_t> d;
  PARVIS_TRY(d.alloc(dpitch * s.h));
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } guard{stream};
  std::vector<uint8_t> check(bytes), back(bytes);

  // The device rows against the host image (row bytes of `expect`, pitch `epitch`).
  auto verify = [&](const uint8_t* expect, size_t w, size_t epitch, const std::string& what) -> Status {
    CUDA_CHECK(cudaMemcpy2D(check.data(), w, d.get(), dpitch, w, size_t(s.h), cudaMemcpyDeviceToHost));
    for (int y = 0; y < s.h; ++y)
      if (std::memcmp(check.data() + size_t(y) * w, expect + size_t(y) * epitch, w) != 0)
        return Status::runtime("bench upload: " + what + " on " + s.name + ": row " +
                               std::to_string(y) + " differs from the source");
    return Status::Ok();
  };

  double ms = 0;
  int reps = 0;
  // An upload: d cleared, one call checked against `expect`, then timed (info: how it went).
  auto measure_up = [&](const std::function<Status()>& call, const uint8_t* expect, size_t w,
                        size_t epitch, const std::string& method,
                        const cuda::TransferInfo& info) -> Status {
    CUDA_CHECK(cudaMemsetAsync(d.get(), 0, dpitch * s.h, stream));
    PARVIS_TRY(call());
    PARVIS_TRY(verify(expect, w, epitch, method));
    PARVIS_TRY(time_calls(o.seconds, call, &ms, &reps));
    line(s, method, info.threads, ms, reps, bytes, info.piece);
    return Status::Ok();
  };
  // The link's floor: one copy of the whole image between page-locked memory and the GPU.
  auto pinned_floor = [&](void* to, const void* from, cudaMemcpyKind kind, const char* name) -> Status {
    auto copy = [&]() -> Status {
      CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, kind, stream));
      CUDA_CHECK(cudaStreamSynchronize(stream));
      return Status::Ok();
    };
    PARVIS_TRY(copy());
    PARVIS_TRY(time_calls(o.seconds, copy, &ms, &reps));
    line(s, name, 1, ms, reps, bytes, 0);
    return Status::Ok();
  };
  std::vector<int> threads = o.quick ? std::vector<int>{4, 8} : std::vector<int>{1, 2, 4, 8};
  if (const int hw = int(std::thread::hardware_concurrency()); hw > 8) threads.push_back(std::min(hw, 64));
  const std::vector<size_t> chunks_mib = o.quick ? std::vector<size_t>{2, 4} : std::vector<size_t>{2, 4, 8};
  cuda::UploadTuning auto_cfg = cuda::upload_tuning();
  auto_cfg.mode = cuda::Transfer::Auto;
  auto capped = [&](size_t mib) {
    cuda::UploadTuning c = auto_cfg;
    c.pinned = mib << 20;
    return c;
  };
  const Image gray_ref = s.c == 3 ? to_gray(src) : Image();

  // ---- the first copy of a process: a fresh copier per repetition (init + prepare + copy) ----
  // gray: the RGB bytes made grey on the device (rgb_to_gray_device) instead of a plain upload.
  auto run_fresh = [&](const cuda::UploadTuning& c, const std::string& name, bool gray) -> Status {
    std::vector<double> fresh, first;
    cuda::TransferInfo info;
    const double start = now_ms();
    while (fresh.size() < 400 && (fresh.size() < 5 || now_ms() - start < o.seconds * 1000.0)) {
      CUDA_CHECK(cudaMemsetAsync(d.get(), 0, dpitch * s.h, stream));
      CUDA_CHECK(cudaStreamSynchronize(stream));
      std::unique_ptr<cuda::StagedCopier> cp(new cuda::StagedCopier);
      const double t0 = now_ms();
      PARVIS_TRY(cp->init(c));
      PARVIS_TRY(cp->prepare(row, size_t(s.h), dpitch, gray));
      const double t1 = now_ms();
      // As in a match call, where other setup runs between prepare and the upload: the pool's
      // threads asleep again (they spin 300 us after a job, up to hot_ms after prepare). Not timed.
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const double t2 = now_ms();
      if (gray)
        PARVIS_TRY(cp->rgb_to_gray_device(d.get(), dpitch, src.data(), src.stride, s.w, s.h,
                                          stream, &info));
      else
        PARVIS_TRY(cp->to_device(d.get(), dpitch, src.data(), src.stride, row, size_t(s.h),
                                 stream, &info));
      CUDA_CHECK(cudaStreamSynchronize(stream));
      const double t3 = now_ms();
      fresh.push_back((t1 - t0) + (t3 - t2));
      first.push_back(t3 - t2);
      if (fresh.size() == 1)
        PARVIS_TRY(gray ? verify(gray_ref.data(), size_t(s.w), gray_ref.stride, name + "-fresh")
                        : verify(src.data(), row, src.stride, name + "-fresh"));
      cp.reset();  // outside the timing: the pool's threads joined, the slots freed
    }
    std::sort(fresh.begin(), fresh.end());
    std::sort(first.begin(), first.end());
    const int n = int(fresh.size());
    line(s, name + "-fresh", info.threads, fresh[fresh.size() / 2], n, bytes, info.piece);
    line(s, name + "-first", info.threads, first[first.size() / 2], n, bytes, info.piece);
    return Status::Ok();
  };
  PARVIS_TRY(run_fresh(auto_cfg, "h2d-auto", false));
  for (int t : {1, 2, 4})
    PARVIS_TRY(run_fresh(copier_config(cuda::Transfer::Staged, t, size_t(2) << 20), "h2d-staged" + std::to_string(t), false));
  for (size_t mib : {1, 4})
    PARVIS_TRY(run_fresh(capped(mib), "h2d-cap" + std::to_string(mib) + "M", false));
  cuda::UploadTuning plain = auto_cfg;  // the pinned memory written by memcpy, not streamed
  plain.nt = false;
  PARVIS_TRY(run_fresh(plain, "h2d-memcpy", false));
  PARVIS_TRY(run_fresh(copier_config(cuda::Transfer::Pageable, 1, size_t(2) << 20), "h2d-pageable", false));
  if (s.c == 3) {
    PARVIS_TRY(run_fresh(auto_cfg, "gray-device-auto", true));
    PARVIS_TRY(run_fresh(capped(4), "gray-device-cap4M", true));
    PARVIS_TRY(run_fresh(copier_config(cuda::Transfer::Pageable, 1, size_t(2) << 20), "gray-device-pageable", true));
  }

  // ---- host -> device ----
  {
    cuda::PinnedBuffer<uint8_t> pinned;
    PARVIS_TRY(pinned.alloc(bytes));
    std::memcpy(pinned.get(), src.data(), bytes);
    PARVIS_TRY(pinned_floor(d.get(), pinned.get(), cudaMemcpyHostToDevice, "h2d-pinned"));
  }
  auto run_config = [&](const cuda::UploadTuning& c, const std::string& name) -> Status {
    cuda::StagedCopier cp;
    PARVIS_TRY(cp.init(c));
    PARVIS_TRY(cp.prepare(row, size_t(s.h), dpitch));
    cuda::TransferInfo info;
    auto up = [&]() -> Status {
      PARVIS_TRY(cp.to_device(d.get(), dpitch, src.data(), src.stride, row, size_t(s.h),
                              stream, &info));
      CUDA_CHECK(cudaStreamSynchronize(stream));
      return Status::Ok();
    };
    PARVIS_TRY(measure_up(up, src.data(), row, src.stride, "h2d-" + name, info));
    // The same back: the device rows (now the source) into a pageable image.
    auto down = [&]() -> Status {
      return cp.to_host(back.data(), row, d.get(), dpitch, row, size_t(s.h), stream, &info);
    };
    std::fill(back.begin(), back.end(), uint8_t(0));
    PARVIS_TRY(down());
    for (int y = 0; y < s.h; ++y)
      if (std::memcmp(back.data() + size_t(y) * row, src.row(y), row) != 0)
        return Status::runtime("bench upload: d2h-" + name + " on " + s.name + ": row " +
                               std::to_string(y) + " differs");
    PARVIS_TRY(time_calls(o.seconds, down, &ms, &reps));
    line(s, "d2h-" + name, info.threads, ms, reps, bytes, info.piece);
    return Status::Ok();
  };
  auto run_mode = [&](cuda::Transfer mode, int t, size_t chunk, const std::string& name) -> Status {
    return run_config(copier_config(mode, t, chunk), name);
  };
  if (o.first) return run_config(auto_cfg, "auto");  // the prepared copier, for reference
  PARVIS_TRY(run_mode(cuda::Transfer::Pageable, 1, size_t(2) << 20, "pageable"));
  for (size_t c : chunks_mib)
    for (int t : threads)
      PARVIS_TRY(run_mode(cuda::Transfer::Staged, t, c << 20, "staged-" + std::to_string(c) + "M"));
  PARVIS_TRY(run_config(auto_cfg, "auto"));
  PARVIS_TRY(run_config(plain, "memcpy"));
  for (size_t mib : {1, 4}) PARVIS_TRY(run_config(capped(mib), "cap" + std::to_string(mib) + "M"));
  {  // d2h floor
    cuda::PinnedBuffer<uint8_t> pinned;
    PARVIS_TRY(pinned.alloc(bytes));
    PARVIS_TRY(pinned_floor(pinned.get(), d.get(), cudaMemcpyDeviceToHost, "d2h-pinned"));
  }

  // ---- RGB pageable -> grey on the device ----
  if (s.c == 3) {
    const size_t gw = size_t(s.w);
    auto gray_mode = [&](bool on_device, cuda::Transfer mode, int t, size_t chunk,
                         const std::string& name) -> Status {
      cuda::StagedCopier cp;
      PARVIS_TRY(cp.init(copier_config(mode, t, chunk)));
      PARVIS_TRY(on_device ? cp.prepare(row, size_t(s.h), dpitch, true) : cp.prepare(gw, size_t(s.h), dpitch));
      cuda::TransferInfo info;
      auto call = [&]() -> Status {
        if (on_device) {
          PARVIS_TRY(cp.rgb_to_gray_device(d.get(), dpitch, src.data(), src.stride, s.w,
                                           s.h, stream, &info));
        } else {
          const Image g = to_gray(src);
          PARVIS_TRY(cp.to_device(d.get(), dpitch, g.data(), g.stride, gw, size_t(s.h),
                                  stream, &info));
        }
        CUDA_CHECK(cudaStreamSynchronize(stream));
        return Status::Ok();
      };
      PARVIS_TRY(measure_up(call, gray_ref.data(), gw, gray_ref.stride,
                            std::string(on_device ? "gray-device-" : "gray-host-") + name, info));
      return Status::Ok();
    };
    PARVIS_TRY(gray_mode(false, cuda::Transfer::Pageable, 1, size_t(2) << 20, "pageable"));
    PARVIS_TRY(gray_mode(false, cuda::Transfer::Staged, 4, size_t(2) << 20, "staged-2M"));
    PARVIS_TRY(gray_mode(true, cuda::Transfer::Pageable, 1, size_t(2) << 20, "pageable"));
    for (size_t c : chunks_mib)
      for (int t : threads)
        PARVIS_TRY(gray_mode(true, cuda::Transfer::Staged, t, c << 20, "staged-" + std::to_string(c) + "M"));
  }
  return Status::Ok();
}

}  // namespace

int bench_upload(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf(
          "usage: ./main bench upload [--seconds S] [--size NAME]... [--quick] [--first]\n"
          "Times host <-> device copies of a pageable image (cuda/upload/upload.hpp): pinned\n"
          "(the floor), pageable, staged (threads x chunk), auto (the default tuning, with\n"
          "PARVIS_TUNING's upload.* keys), memcpy, the pinned bytes capped, and RGB -> grey on\n"
          "the host or on the device. Sizes: 512x512 1326x1025 1326x1025x3\n"
          "3840x2160 3840x2160x3 10000x10000. Lines: upload SIZE METHOD THREADS MEDIAN_MS REPS\n"
          "GB/S PIECE_KIB. First-call rows (a fresh copier each time): <row>-fresh (init +\n"
          "prepare + copy) and <row>-first (the copy alone); --first: only those.\n");
      return kExitOk;
    }
    if (a == "--seconds" && i + 1 < argc) {
      o.seconds = std::atof(argv[++i]);
    } else if (a == "--size" && i + 1 < argc) {
      o.only.push_back(argv[++i]);
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--first") {
      o.first = true;
    } else {
      return report_failure(Status::usage("bench upload: unknown option '" + a + "'"));
    }
  }
  Status st = cuda::require_device();
  for (const Size& s : kSizes) {
    if (!st.ok()) break;
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), s.name) == o.only.end()) continue;
    st = bench_size(s, o);
  }
  if (!st.ok()) return report_failure(st);
  return kExitOk;
}

}  // namespace parvis
