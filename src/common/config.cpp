// The environment, read in one place (config.hpp says what; docs/CONFIG.md lists it).
#include "common/config.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace parvis::config {
namespace {

enum class Kind { Flag, Int, Bytes, Real, Word };

struct Key {
  const char* name;
  Kind kind;
  double lo, hi;      // Int, Bytes, Real: the accepted range
  const char* words;  // Word: the accepted values, '|' between them
  const char* help;
};

constexpr double kMaxBytes = 4294967296.0;  // 4 GiB

// The PARVIS_TUNING keys, operation by operation. Each names a field of that operation's typed
// tuning; the defaults live beside the operation, not here.
const Key kKeys[] = {
    // Template matching: cuda-opt's MatchTuning (cuda/match/tuning.hpp), the CPU FFT's
    // fft::Tuning (src/match/fft_tuning.hpp).
    {"match.ntt", Kind::Flag, 0, 1, nullptr, "cuda-opt: the exact NTT where it applies (0: cuFFT with exact re-scoring)"},
    {"match.ncc_host", Kind::Flag, 0, 1, nullptr, "cuda-opt: NCC's double expression on the host (1) or the device (0)"},
    {"match.mapped_result", Kind::Flag, 0, 1, nullptr, "cuda-opt: the result read through mapped host memory (0: a copy)"},
    {"match.graph", Kind::Flag, 0, 1, nullptr, "cuda-opt: the pipelines replayed as CUDA graphs"},
    {"match.direct_rows", Kind::Word, 0, 0, "auto|4|8", "cuda-opt: output rows a direct_dp4a thread computes (auto: by size)"},
    {"match.fft_tune", Kind::Flag, 0, 1, nullptr, "cuda-opt: time the candidate cuFFT sizes once per size (0: the smallest good size)"},
    {"match.fft_bound_scale", Kind::Real, 1, 1e12, nullptr, "FFT in double (CPU; cuda-opt's normed cuFFT path), test hook: multiply the rounding bound and move each value within it (forces re-scoring)"},
    {"match.prune_from", Kind::Int, 0, 1 << 30, nullptr, "cuda-opt: --all --min-distance prunes on the device once the list is longer than this (0: always)"},
    {"match.fft_profile", Kind::Word, 0, 0, "0|1|cpu", "CPU FFT: each stage's time on stderr (1: wall clock, cpu: the process's CPU time)"},
    {"match.fftw_buffering", Kind::Flag, 0, 1, nullptr, "CPU FFT: FFTW's buffered solvers (0: FFTW_NO_BUFFERING, no malloc per transform)"},
    {"match.hugepages", Kind::Flag, 0, 1, nullptr, "CPU FFT: buffers advised as transparent huge pages"},
    // Video (cuda/video/).
    {"video.host_convert", Kind::Flag, 0, 1, nullptr, "cuda-opt: frames made grey on the host (0: on the device)"},
    // Integral image (cuda/integral/tuning.hpp).
    {"integral.band_rows", Kind::Int, 1, 1 << 20, nullptr, "CUDA versions: rows a band holds at most (test hook: many bands)"},
    // Filter (src/filter/tuning.hpp: FilterTuning).
    {"filter.variant", Kind::Word, 0, 0, "auto|mma|direct|sep|nonvec|vec|loops|2d|generic|sse2|scalar",
     "the kernel (each version has its own: ./main bench filter lists them; another version's is ignored)"},
    {"filter.sep_async", Kind::Flag, 0, 1, nullptr, "cuda-opt sep: the cp.async kernel (sm_80+; 0: the register kernel)"},
    {"filter.sep_rows", Kind::Int, 1, 65536, nullptr, "cuda-opt sep: output rows a warp's strip (default: by size)"},
    // Host-to-device upload (cuda/upload/tuning.hpp, UploadTuning); PARVIS_UPLOAD picks the mode.
    {"upload.threads", Kind::Int, 1, 64, nullptr, "host threads of a staged copy, the caller included"},
    {"upload.min", Kind::Bytes, 0, kMaxBytes, nullptr, "auto's copies below this many bytes stay on the calling thread"},
    {"upload.piece", Kind::Bytes, 4096, 1 << 30, nullptr, "the largest piece of a one-pass upload"},
    {"upload.chunk", Kind::Bytes, 4096, 1 << 30, nullptr, "the largest piece of the slots (split rows, images past one pass, downloads)"},
    {"upload.pinned", Kind::Bytes, 0, kMaxBytes, nullptr, "the most pinned bytes of a copier (0: no cap)"},
    {"upload.readahead", Kind::Bytes, 0, 1 << 30, nullptr, "bytes of the next source each worker keeps in its cache (0: none)"},
    {"upload.hot", Kind::Int, 0, 1000, nullptr, "ms the copier's threads stay awake after prepare"},
    {"upload.nt", Kind::Flag, 0, 1, nullptr, "pinned memory written by non-temporal stores (0: memcpy)"},
    {"upload.trace", Kind::Flag, 0, 1, nullptr, "print each staged upload's timeline on stderr"},
};

struct UserVar {
  Var var;
  const char* name;
  const char* words;  // nullptr: any text
  const char* help;
};

const UserVar kVars[] = {
    {Var::Simd, "PARVIS_SIMD", "scalar|sse2|avx2", "caps the CPU instruction set (simd, omp)"},
    {Var::FftwWisdom, "PARVIS_FFTW_WISDOM", nullptr,
     "FFTW's wisdom file (default ~/.cache/parvis/fftw-wisdom; empty, 0 or off: none)"},
    {Var::FftwPlanning, "PARVIS_FFTW_PLANNING", "estimate|measure|patient", "how FFTW plans a new size"},
    {Var::Gray, "PARVIS_GRAY", "host|device", "cuda-opt: who makes an RGB source grey"},
    {Var::Upload, "PARVIS_UPLOAD", "auto|pageable|staged", "cuda-opt (and cuda-naive's filter): how images reach the GPU"},
    {Var::Tuning, "PARVIS_TUNING", nullptr, "key=value,... : the tuning fields below (tests, benchmarks)"},
};

const char* const kSystemVars[] = {"HOME", "XDG_CACHE_HOME", "PATH", "TMPDIR", "OMP_NUM_THREADS"};

const Key* find_key(const std::string& name) {
  for (const Key& k : kKeys)
    if (name == k.name) return &k;
  return nullptr;
}

bool word_in(const std::string& v, const char* words) {
  const char* p = words;
  while (*p) {
    const char* bar = std::strchr(p, '|');
    const size_t n = bar ? size_t(bar - p) : std::strlen(p);
    if (v.size() == n && v.compare(0, n, p, n) == 0) return true;
    if (!bar) break;
    p = bar + 1;
  }
  return false;
}

std::string range_text(const Key& k) {
  char buf[96];
  switch (k.kind) {
    case Kind::Flag: return "0 or 1";
    case Kind::Word: return std::string("one of ") + k.words;
    case Kind::Int: std::snprintf(buf, sizeof buf, "an integer in %.0f..%.0f", k.lo, k.hi); return buf;
    case Kind::Bytes: std::snprintf(buf, sizeof buf, "bytes in %.0f..%.0f (K and M suffixes)", k.lo, k.hi); return buf;
    case Kind::Real: std::snprintf(buf, sizeof buf, "a number in %g..%g", k.lo, k.hi); return buf;
  }
  return "?";
}

// The value of `text` for key `k`, or false when it is not one.
bool parse_value(const Key& k, const std::string& text, double* out) {
  if (k.kind == Kind::Word) return word_in(text, k.words) ? (*out = 0, true) : false;
  if (text.empty()) return false;
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  double v = 0;
  if (k.kind == Kind::Real) {
    v = std::strtod(s, &end);
  } else {
    if (!(*s >= '0' && *s <= '9')) return false;
    const unsigned long long n = std::strtoull(s, &end, 10);
    v = double(n);
    if (k.kind == Kind::Bytes && (*end == 'K' || *end == 'k')) v *= 1024, ++end;
    else if (k.kind == Kind::Bytes && (*end == 'M' || *end == 'm')) v *= 1024.0 * 1024, ++end;
  }
  if (errno != 0 || end == s || *end != 0 || !(v >= k.lo && v <= k.hi)) return false;
  *out = v;
  return true;
}

struct Parsed {
  Status status;
  std::map<std::string, std::string> values;  // key -> its text, as given
};

// PARVIS_TUNING, parsed once.
const Parsed& parsed() {
  static Parsed p;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = get(Var::Tuning);
    if (!env) return;
    const std::string all(env);
    size_t at = 0;
    while (at <= all.size()) {
      size_t comma = all.find(',', at);
      if (comma == std::string::npos) comma = all.size();
      const std::string item = all.substr(at, comma - at);
      at = comma + 1;
      if (item.empty()) continue;
      const size_t eq = item.find('=');
      const std::string name = item.substr(0, eq);
      const Key* k = find_key(name);
      if (!k) {
        p.status = Status::usage("PARVIS_TUNING: unknown key '" + name + "' (./main --config lists them)");
        return;
      }
      const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
      double v = 0;
      if (eq == std::string::npos || !parse_value(*k, value, &v)) {
        p.status = Status::usage("PARVIS_TUNING: " + name + " must be " + range_text(*k) + ", not '" + value + "'");
        return;
      }
      p.values[name] = value;
    }
  });
  return p;
}

// The key's text, or nullptr when unset; aborts on a key the table lacks (a programming error).
const char* lookup(const char* key, const Key** k) {
  *k = find_key(key);
  if (!*k) {
    std::fprintf(stderr, "parvis: internal error: tuning key '%s' is not in config.cpp's table\n", key);
    std::abort();
  }
  const Parsed& p = parsed();
  if (!p.status.ok()) return nullptr;
  auto it = p.values.find(key);
  return it == p.values.end() ? nullptr : it->second.c_str();
}

double number(const char* key, double fallback) {
  const Key* k = nullptr;
  const char* text = lookup(key, &k);
  double v = 0;
  return text && parse_value(*k, text, &v) ? v : fallback;
}

}  // namespace

const char* get(Var v) {
  for (const UserVar& u : kVars)
    if (u.var == v) return std::getenv(u.name);
  return nullptr;
}

const char* system(const char* name) {
  for (const char* s : kSystemVars)
    if (std::strcmp(s, name) == 0) return std::getenv(name);
  std::fprintf(stderr, "parvis: internal error: '%s' is not a variable config.cpp reads\n", name);
  std::abort();
}

Status check() {
  for (const UserVar& u : kVars) {
    const char* v = std::getenv(u.name);
    if (v && *v && u.words && !word_in(v, u.words))
      return Status::usage(std::string(u.name) + " must be one of " + u.words + ", not '" + v + "'");
  }
  return parsed().status;
}

bool tuning_set(const char* key) {
  const Key* k = nullptr;
  return lookup(key, &k) != nullptr;
}
bool tuning_flag(const char* key, bool fallback) { return number(key, fallback ? 1 : 0) != 0; }
long long tuning_int(const char* key, long long fallback) { return (long long)number(key, double(fallback)); }
double tuning_real(const char* key, double fallback) { return number(key, fallback); }
std::string tuning_word(const char* key, const std::string& fallback) {
  const Key* k = nullptr;
  const char* text = lookup(key, &k);
  return text ? std::string(text) : fallback;
}

std::string describe_keys() {
  std::string s = "variables:\n";
  for (const UserVar& u : kVars) {
    s += "  " + std::string(u.name) + "  " + (u.words ? std::string(u.words) : std::string("(text)")) + "  " +
         u.help + "\n";
  }
  s += "PARVIS_TUNING keys:\n";
  for (const Key& k : kKeys) s += "  " + std::string(k.name) + "  " + range_text(k) + "  " + k.help + "\n";
  return s;
}

}  // namespace parvis::config
