// FFTW's process-wide state for the CPU FFT path (cpu_fftw.hpp): the planner's lock, the
// wisdom cache, the planning flags and the huge-page advice.
#include "match/cpu_fftw.hpp"

#if PARVIS_HAVE_FFTW
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <sys/stat.h>

#include "common/config.hpp"
#include "common/output.hpp"

namespace parvis::match::fft {

std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

// ---------------------------------------------------------------------------- wisdom cache
// FFTW's planner costs a one-shot call more than its transforms save: even FFTW_ESTIMATE's
// plans took about a third of the call. The plans it chose ("wisdom") are kept in a user cache
// file and read back by the next process, which then plans in under a millisecond
// (docs/decisions/001). The file:
// $PARVIS_FFTW_WISDOM, else $XDG_CACHE_HOME/parvis/fftw-wisdom, else
// ~/.cache/parvis/fftw-wisdom; PARVIS_FFTW_WISDOM= (empty), 0 or off disables it. A file
// that cannot be read or parsed (another FFTW version, damage) is ignored; it is rewritten
// atomically (temp file + rename) whenever a plan was not in it. Wisdom only picks among
// FFTW's algorithms: every result is still checked by the rounding bound, so the file can
// never change an answer.
static std::string wisdom_path() {
  if (const char* v = config::get(config::Var::FftwWisdom)) {
    if (!*v || std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0) return "";
    return v;
  }
  const char* xdg = config::system("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') return std::string(xdg) + "/parvis/fftw-wisdom";
  const char* home = config::system("HOME");
  if (home && *home == '/') return std::string(home) + "/.cache/parvis/fftw-wisdom";
  return "";
}

// FFTW_ESTIMATE unless asked otherwise: planning in milliseconds. FFTW_MEASURE's faster
// transforms cost seconds of planning, which a one-shot run never recovers (docs/decisions/001).
// PARVIS_FFTW_PLANNING=measure (or patient) plans with FFTW_MEASURE (PATIENT) on a miss:
// seconds per new size once, then faster transforms for every later call that reads the cache
// (ESTIMATE planning uses wisdom from a more rigorous planner).
static unsigned planning_flags() {
  const char* v = config::get(config::Var::FftwPlanning);
  if (v && std::strcmp(v, "measure") == 0) return FFTW_MEASURE;
  if (v && std::strcmp(v, "patient") == 0) return FFTW_PATIENT;
  return FFTW_ESTIMATE;
}

// FFTW's buffered solvers take small scratch buffers from malloc inside every fftw_execute
// (dozens a frame): the only allocations of a warm video frame. They are faster at 1080p and
// no slower elsewhere (docs/decisions/001), so they stay;
// match.fftw_buffering=0 rules them out, so that the video contract can check that nothing else
// allocates per frame (tests/video_contract.sh).
static unsigned buffering_flag(const Tuning& tuning) { return tuning.fftw_buffering ? 0u : FFTW_NO_BUFFERING; }

// Reads the cache file into FFTW's wisdom (caller holds the planner lock). Files past 4 MiB
// are not read (they would cost more to parse than they save; the next write replaces them).
static void import_wisdom(const std::string& path) {
  struct stat st;
  if (path.empty() || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size > (off_t(4) << 20))
    return;
  (void)fftw_import_wisdom_from_filename(path.c_str());
}

// Writes FFTW's wisdom (merged with what other processes wrote meanwhile) back to the cache,
// creating its directories; failures are ignored (it is only a cache). Planner lock held.
static void export_wisdom(const std::string& path) {
  if (path.empty()) return;
  for (size_t i = path.find('/', 1); i != std::string::npos; i = path.find('/', i + 1))
    (void)::mkdir(path.substr(0, i).c_str(), 0700);
  import_wisdom(path);
  if (char* text = fftw_export_wisdom_to_string()) {
    (void)write_file_atomic(path, text, std::strlen(text));
    fftw_free(text);
  }
}

static const std::string& wisdom_cache() {
  static const std::string cache = wisdom_path();
  return cache;
}

CachedPlanner::CachedPlanner(const Tuning& tuning)
    : cache_(wisdom_cache()), flags_(planning_flags() | buffering_flag(tuning)) {
  static bool imported = false;  // the planner lock is held
  if (!imported) import_wisdom(cache_);
  imported = true;
}

void CachedPlanner::finish(bool keep) {
  if (learned_ && keep) export_wisdom(cache_);
}

void advise_huge_pages(void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  (void)madvise(p, bytes, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace parvis::match::fft
#endif  // PARVIS_HAVE_FFTW
